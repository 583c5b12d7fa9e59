# osFoundry Rooms. `make run` serves a demo on http://127.0.0.1:8000; `make test` runs everything.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
WORKERS ?= 1
# `make run`: the links in mails and notifications, and the review_url agents get, point where
# the demo serves; the console answers on the loopback names too.
PUBLIC_ORIGIN ?= http://127.0.0.1:$(PORT)
ALLOWED_HOSTS ?= 127.0.0.1,localhost,[::1]
# Lines and branches of the apps the suite must run, together (make test fails below).
# Measured 98.5% on 2026-12-02.
COVERAGE_FLOOR ?= 97
# Branches alone, per package (tools/coverage/branch_floor.py): each `if` taken both ways by
# some test. Measured on 2026-12-02 (SQLite lane): osfoundry 98.4, rooms 97.1, agents 99.2.
BRANCH_FLOOR ?= 95

.PHONY: run test lint fmt mutants check-python venv install install-dev browser proxy serve

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' || { \
	  echo "osFoundry needs Python 3.12 or newer; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)."; \
	  echo "Install it (pyenv install 3.12, or your OS package python3.12) and run again,"; \
	  echo "or pass one explicitly: make PYTHON=/path/to/python3.12 run"; exit 1; }

$(BIN)/python: | check-python
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

venv: check-python $(BIN)/python

install: venv
	$(BIN)/pip install --quiet -e .

install-dev: venv
	$(BIN)/pip install --quiet -e '.[dev]'

# Debian's Chromium for the browser tests (never `playwright install`: no downloads here).
browser:
	@test -x /usr/bin/chromium || { \
	  echo "Installing Debian's chromium for the browser tests..."; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
	  || echo "Could not install chromium: the browser tests will fail until /usr/bin/chromium exists."; }

# Debian's nginx for the tests that run deploy/nginx.conf in front of the workers.
proxy:
	@test -x /usr/sbin/nginx || { \
	  echo "Installing Debian's nginx-light for the proxy tests..."; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light) >/dev/null \
	  || echo "Could not install nginx-light: the proxy tests will fail until /usr/sbin/nginx exists."; }

run: export PUBLIC_ORIGIN := $(PUBLIC_ORIGIN)
run: export ALLOWED_HOSTS := $(ALLOWED_HOSTS)
run: install
	$(BIN)/python manage.py migrate --noinput -v0
	$(BIN)/python manage.py collectstatic --noinput -v0
	$(BIN)/python manage.py seed_demo --origin $(PUBLIC_ORIGIN)
	@echo "  Console: $(PUBLIC_ORIGIN)/   MCP: $(PUBLIC_ORIGIN)/api/v1/mcp (or /api/v1/external-mcp: see docs/agents.md)"
	MALLOC_ARENA_MAX=2 $(BIN)/uvicorn osfoundry.asgi:application --host 127.0.0.1 --port $(PORT) --workers $(WORKERS) --no-access-log

lint: install-dev
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# Mutation testing of the rule modules ([tool.mutmut] in pyproject.toml), run by hand: each
# surviving mutant is a one-line bug no test notices. `.venv/bin/mutmut browse` shows them.
mutants: install-dev
	rm -rf mutants
	STATIC_MANIFEST=0 $(BIN)/mutmut run || true
	$(BIN)/mutmut results

fmt: install-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: install-dev browser proxy
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run
	rm -f .coverage .coverage.*
	STATIC_MANIFEST=0 $(BIN)/coverage run -m pytest $(PYTEST_ARGS)
	$(BIN)/coverage combine -q
	$(BIN)/coverage report --fail-under=$(COVERAGE_FLOOR)
	mkdir -p var && $(BIN)/coverage json -q -o var/coverage.json
	$(BIN)/python tools/coverage/branch_floor.py var/coverage.json $(BRANCH_FLOOR) osfoundry rooms agents

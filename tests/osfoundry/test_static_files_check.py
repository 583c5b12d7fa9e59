"""A server whose static files were never collected refuses to start, naming the command,
instead of answering every page with a 500 ("Missing staticfiles manifest entry")."""

import json

import httpx
import pytest
from django.core import checks

from tests.servers import start_uvicorn, stop_process

COMMAND = "manage.py collectstatic --noinput"


def manifest_env(tmp_path, static_root) -> dict[str, str]:
    return {
        "STATIC_MANIFEST": "1",
        "STATIC_ROOT": str(static_root),
        "DEBUG": "0",
        "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        "LOG_LEVEL": "WARNING",
    }


@pytest.mark.parametrize("options", [(), ("--workers", "2")], ids=["one process", "two workers"])
def test_uvicorn_without_collected_static_files_exits_naming_the_command(tmp_path, options):
    static_root = tmp_path / "static-root"
    static_root.mkdir()
    log = tmp_path / "server.log"
    try:
        process, url = start_uvicorn(
            env=manifest_env(tmp_path, static_root),
            log_path=log,
            unset=["DJANGO_ALLOW_ASYNC_UNSAFE"],
            options=options,
            timeout=60,
        )
    except RuntimeError as exc:
        assert "exited early" in str(exc)
    else:
        page = httpx.get(url + "/accounts/login/", timeout=10)
        stop_process(process)
        pytest.fail(f"the server started; its login page answered {page.status_code}")
    output = log.read_text()
    assert COMMAND in output
    assert "staticfiles.json" in output
    assert tracebacks_of_our_own(output) == []


def test_the_check_passes_once_static_files_are_collected(settings, tmp_path):
    settings.DEBUG = False
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    errors = checks.run_checks(tags=["staticfiles"], include_deployment_checks=True)
    missing = [e for e in errors if e.id == "osfoundry.E001"]
    assert len(missing) == 1
    assert COMMAND in missing[0].hint
    assert str(tmp_path / "staticfiles.json") in missing[0].msg

    (tmp_path / "staticfiles.json").write_text(json.dumps({"paths": {}, "version": "1.1"}))
    errors = checks.run_checks(tags=["staticfiles"], include_deployment_checks=True)
    assert [e for e in errors if e.id == "osfoundry.E001"] == []


def test_the_check_leaves_plain_static_files_and_debug_alone(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path
    errors = checks.run_checks(
        tags=["staticfiles"], include_deployment_checks=True
    )  # StaticFilesStorage (tests)
    assert [e for e in errors if e.id == "osfoundry.E001"] == []
    settings.DEBUG = True  # the manifest storage serves plain names then
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    errors = checks.run_checks(tags=["staticfiles"], include_deployment_checks=True)
    assert [e for e in errors if e.id == "osfoundry.E001"] == []


def tracebacks_of_our_own(output: str) -> list[str]:
    """The tracebacks in a server's output, but coverage's: under `make test` a worker that
    stops at start-up can race coverage's own save at exit ("Cannot operate on a closed
    database"), which says nothing of the server."""
    blocks = output.split("Traceback (most recent call last):")[1:]
    return [block for block in blocks if "/site-packages/coverage/" not in block]


def test_only_coverages_own_traceback_is_set_aside():
    theirs = 'Traceback (most recent call last):\n  File "/x/site-packages/coverage/control.py"\n'
    ours = 'Traceback (most recent call last):\n  File "/x/osfoundry/checks.py"\nValueError\n'
    assert tracebacks_of_our_own("INFO: up\n" + theirs) == []
    (block,) = tracebacks_of_our_own(theirs + ours)
    assert "osfoundry/checks.py" in block and "ValueError" in block

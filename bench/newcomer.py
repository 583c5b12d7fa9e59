"""A newcomer's first minutes, timed: `git clone` of this repository into a temporary folder,
`make run` as README.md says (the full install: a new .venv, pip from PyPI, nothing of this
checkout's reused), the console URL and owner login it prints, and the first approval through
the card in headless Chromium.

    .venv/bin/python bench/newcomer.py                    # clones this checkout's HEAD
    .venv/bin/python bench/newcomer.py --no-pip-cache     # pip downloads every package too
    .venv/bin/python bench/newcomer.py --keep             # leaves the clone for a look

Prints each step's time from the start of the clone; goal (issue 35): clone → first approval
≤ 2 minutes. tests/docs/test_newcomer.py walks the same way on every suite run, without the
install and without timing it.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.docs.newcomer import MakeRun, first_approval, newcomer_env  # noqa: E402
from tests.servers import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(ROOT), help="what to clone (default: this one)")
    parser.add_argument("--no-pip-cache", action="store_true", help="PIP_NO_CACHE_DIR=1")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its log")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="osfoundry-newcomer-"))
    env = newcomer_env()
    if args.no_pip_cache:
        env["PIP_NO_CACHE_DIR"] = "1"
    head = subprocess.run(
        ["git", "-C", args.source, "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"newcomer: git clone {args.source} ({head}) into {work}; make run; first approval")
    print(f"pip cache: {'off' if args.no_pip_cache else 'as this machine has it'}")
    run = None
    started = time.monotonic()
    try:
        checkout = work / "osfoundry-rooms"
        subprocess.run(["git", "clone", "-q", args.source, str(checkout)], check=True)
        cloned = time.monotonic() - started
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            run = MakeRun(checkout, free_port(), env, work / "make-run.log")
            run.start()
            origin = run.wait_for_console()
            username, password = run.owner_login()
            approved = first_approval(browser, origin, username, password)
            total = time.monotonic() - started
            browser.close()
    finally:
        if run is not None:
            run.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    offset = run.started_at - started  # make run started this long after the clone began
    print(f"{'step':<44} {'s from start':>12}")
    print(f"{'git clone':<44} {cloned:>12.1f}")
    for what, seconds in run.marks.items():
        label = f"make run: {what}"
        print(f"{label:<44} {offset + seconds:>12.1f}")
    print(f"{'first approval (' + approved['name'] + ')':<44} {total:>12.1f}")
    verdict = "within" if total <= 120 else "OVER"
    print(f"clone → first approval: {total:.1f} s ({verdict} the 2-minute goal)")
    if args.keep:
        print(f"kept: {work}")


if __name__ == "__main__":
    main()

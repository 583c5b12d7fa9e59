"""The embedded V8 that checks proposals: warm at start, bounded, safe across fork and exit."""

import os
import subprocess
import sys
import time

import pytest
from django.conf import settings

from rooms.runtime import jsengine
from rooms.runtime.jsengine import Engine, EngineOutOfMemory, EngineTimeout
from rooms.runtime.runnable import check_app
from tests.rooms.helpers import APP

SMALL = {"src/App.tsx": APP}
CHAIN = "const v = a?.b?.c?.d?.e?.f?.g?.h?.i?.j?.k?.l?.m?.n?.o?.p?.q?.r?.s?.t;\n"


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "osfoundry.settings", "STATIC_MANIFEST": "0"}
    prelude = "import django; django.setup()\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_call_past_its_deadline_names_the_file_and_the_engine_goes_on():
    engine = Engine()
    try:
        # The slow file comes first (in any order the engine takes them): on a loaded machine the
        # deadline could otherwise pass while the small entry is still compiling.
        with pytest.raises(EngineTimeout) as stopped:
            engine.check({"src/0Slow.ts": CHAIN * 1200, "src/App.tsx": APP}, timeout=0.05)
        assert stopped.value.path == "src/0Slow.ts"
        assert "src/App.tsx" in engine.check(SMALL, timeout=5)
    finally:
        engine.close()


def test_an_app_past_the_memory_limit_is_stopped_and_the_engine_replaced(monkeypatch):
    monkeypatch.setattr(jsengine, "MEMORY_LIMIT_BYTES", 64 * 1024 * 1024)
    engine = Engine()
    try:
        with pytest.raises(EngineOutOfMemory):
            engine.check({"src/App.tsx": "const x = [" + "1," * 1_500_000 + "];\n"}, timeout=30)
        assert engine.check(SMALL, timeout=5)["src/App.tsx"]["default_export"] is True
    finally:
        engine.close()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork() with threads: on purpose
def test_a_forked_child_checks_with_a_context_of_its_own():
    assert check_app(SMALL).runs  # the parent's context exists and is in use
    pid = os.fork()
    if pid == 0:  # the child: the parent's context would hang here
        code = 0 if check_app(SMALL).runs else 1
        os._exit(code)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    assert check_app(SMALL).runs  # and the parent's still works


def test_the_asgi_application_warms_the_engine_when_it_starts():
    # Its start-up (ASGI lifespan) warms the engine once the start-up checks passed; importing
    # the application alone does not (a process that fails those checks never starts V8).
    result = run_python(
        "import asyncio, time\n"
        "import osfoundry.asgi as asgi\n"
        "from rooms.runtime.jsengine import engine\n"
        "print('imported', 'warm' if engine.is_warm else 'cold')\n"
        "async def start():\n"
        "    events = iter([{'type': 'lifespan.startup'}, {'type': 'lifespan.shutdown'}])\n"
        "    sent = []\n"
        "    async def receive():\n"
        "        return next(events)\n"
        "    async def send(message):\n"
        "        sent.append(message['type'])\n"
        "    await asgi.lifespan({'type': 'lifespan'}, receive, send)\n"
        "    return sent\n"
        "print(*asyncio.run(start()))\n"
        "deadline = time.monotonic() + 20\n"
        "while not engine.is_warm and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
        "print('started', 'warm' if engine.is_warm else 'cold')\n"
    )
    assert result.stdout.split("\n")[-4:-1] == [
        "imported cold",
        "lifespan.startup.complete lifespan.shutdown.complete",
        "started warm",
    ], result.stderr


def test_a_process_exits_promptly_after_a_check_timed_out():
    result = run_python(
        "from rooms.runtime.jsengine import EngineTimeout, engine\n"
        f"files = {{'src/App.tsx': 'x', 'src/Slow.ts': {CHAIN!r} * 1200}}\n"
        "try:\n"
        "    engine.check(files, timeout=0.05)\n"
        "except EngineTimeout:\n"
        "    print('stopped')\n",
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "stopped"


def test_a_syntax_report_names_the_problem_or_is_none():
    engine = Engine()
    try:
        assert engine.syntax_report("const a = 1;\n", timeout=5) is None
        report = engine.syntax_report("const = ;\n", timeout=5)
        assert report is not None and "SyntaxError" in report
    finally:
        engine.close()


def test_an_engine_that_cannot_start_says_why(monkeypatch, tmp_path):
    monkeypatch.setattr(jsengine, "SCRIPTS", [tmp_path / "missing.js"])
    engine = Engine()
    try:
        with pytest.raises(FileNotFoundError):
            engine.check({"src/App.tsx": APP}, timeout=5)
    finally:
        engine.close()


def test_an_error_of_the_checking_script_itself_is_raised_and_the_context_kept():
    from py_mini_racer import JSEvalException

    engine = Engine()
    try:
        racer = engine._ready()
        with pytest.raises(JSEvalException, match="TypeError"):
            engine.check(None, timeout=5)  # type: ignore[arg-type]  # JSON null: not files
        assert engine._racer is racer  # below the memory limit: nothing to replace
        assert engine.check(SMALL, timeout=5)["src/App.tsx"]["default_export"] is True
    finally:
        engine.close()


def test_a_syntax_probe_past_the_memory_limit_reports_nothing_and_replaces_the_context(
    monkeypatch,
):
    engine = Engine()
    try:
        racer = engine._ready()
        # Where V8 crosses the limit depends on when it collects: say it did, during the probe.
        monkeypatch.setattr(racer, "was_hard_memory_limit_reached", lambda: True)
        assert engine.syntax_report("const = ;\n", timeout=5) is None
        assert engine._racer is None
        report = engine.syntax_report("const = ;\n", timeout=5)  # a context of its own again
        assert report is not None and "SyntaxError: Unexpected token '='" in report
    finally:
        engine.close()


def test_after_a_fork_the_engine_leaves_the_parents_context_alone_and_starts_over():
    engine = Engine()
    try:
        engine.warm()
        parents = engine._racer
        engine._after_fork()  # what os.register_at_fork runs in the child
        assert engine._racer is None and not engine.is_warm
        assert jsengine._abandoned[-1][0] is parents  # kept referenced: never finalised
        assert engine.check(SMALL, timeout=5)["src/App.tsx"]["default_export"] is True
        assert engine._racer is not parents
        before = len(jsengine._abandoned)
        engine.close()
        engine._after_fork()  # no context yet: nothing to abandon
        assert len(jsengine._abandoned) == before and engine._racer is None
    finally:
        engine.close()
        if jsengine._abandoned and jsengine._abandoned[-1][0] is parents:
            jsengine._abandoned.pop()[0].close()  # in this process it is safe to close

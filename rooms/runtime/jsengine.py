"""The embedded V8 (mini-racer) in which the server runs the Room runtime's own compiler.

rooms/runtime/runnable.py asks it what the browser frame will do with an app's files: the vendored
static/vendor/sucrase/sucrase.js (the very file the frame compiles with), Sucrase's tokenizer
(rooms/runtime/js/vendor/) and rooms/runtime/js/runnable.js run here, once per proposal, in one
call.

How it is held, from the measurements in /work/shared/RESEARCH.md ("Checking scripts at
proposal time"):
- One context per process (each costs 14-35 MB), behind a lock: calls from several threads
  queue rather than share it mid-call. Warm it at process start (warm_in_background()): the
  first check otherwise pays ~150 ms to create it and load the bundles.
- Created in a thread of its own: a context created on a thread that runs an event loop binds
  to that loop, and then its timeouts fail (uvicorn imports the app on its loop's thread).
- Every call has a deadline (valid code full of `?.` is quadratic in Sucrase: 2.8 s at 80 KB)
  and the context a hard memory limit; past it the context is broken, so it is replaced.
- After fork the child makes its own context (a parent's hangs); at exit it is closed (without
  that, a process that timed out a call hung at exit in 4 of 16 runs).
- V8 itself is initialised on the thread that imports this module (the main thread): left to
  the first context, made on its own thread, closing any context after a call had timed out
  was a segmentation fault, every time, on these machines (mini-racer 0.14.1, AMD EPYC, Linux
  6.18): the test process, `seed_demo` and a server at exit all crashed with exit 139.
"""

import atexit
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from django.conf import settings
from py_mini_racer import init_mini_racer

SCRIPTS = (
    Path(settings.BASE_DIR) / "static" / "vendor" / "sucrase" / "sucrase.js",
    Path(__file__).parent / "js" / "vendor" / "sucrase-parser" / "sucrase-parser.js",
    Path(__file__).parent / "js" / "runnable.js",
    Path(__file__).parent / "js" / "modules.js",
)
MEMORY_LIMIT_BYTES = 256 * 1024 * 1024
WARM_UP = {"src/App.tsx": 'import {useState} from "react";\nexport default () => <p>{1}</p>;\n'}


class EngineTimeout(Exception):
    """The call ran past its deadline; `path` is the file it was compiling (None: unknown)."""

    def __init__(self, path: str | None):
        super().__init__(path)
        self.path = path


class EngineOutOfMemory(Exception):
    """The call needed more than MEMORY_LIMIT_BYTES; the context was replaced."""


def fingerprint() -> str:
    """Changes whenever the compiler or the fact-finding script does: a cache key part."""
    digest = hashlib.sha256()
    for script in SCRIPTS:
        digest.update(script.read_bytes())
    return digest.hexdigest()[:16]


class Engine:
    def __init__(self):
        self._lock = threading.Lock()
        self._racer: Any = None
        self._check: Any = None  # OsfRunnable.check, called with a string: no source to parse
        self._prepare: Any = None  # OsfModules.prepare, the same way
        self.is_warm = False  # created, and one check has run (the JIT has seen the code)

    def check(self, files: dict[str, str], *, timeout: float) -> dict:
        """runnable.js's facts about `files` (see its header), within `timeout` seconds."""
        return self._call("_check", files, "OsfRunnable.current()", timeout)

    def prepare_modules(self, sources: dict[str, str], *, timeout: float) -> dict:
        """modules.js's facts about npm package files (see its header), within `timeout`."""
        return self._call("_prepare", sources, "OsfModules.current()", timeout)

    def _call(self, entry: str, argument: dict, current: str, timeout: float) -> dict:
        """One of the engine's entry points on `argument`, as JSON both ways: a timeout names
        the file `current` says was under way; running out of memory replaces the engine."""
        from py_mini_racer import JSOOMException, JSTimeoutException

        with self._lock:
            racer = self._ready()
            try:
                answer = getattr(self, entry)(json.dumps(argument), timeout_sec=timeout)
            except JSTimeoutException:
                raise EngineTimeout(racer.eval(current)) from None
            except JSOOMException:
                self._replace()
                raise EngineOutOfMemory() from None
            except Exception:
                if racer.was_hard_memory_limit_reached():
                    self._replace()
                    raise EngineOutOfMemory() from None
                raise
        return json.loads(answer)

    def syntax_report(self, code: str, *, timeout: float) -> str | None:
        """V8's report ("undefined:LINE: SyntaxError: ...", the line, a caret) on `code` as the
        frame wraps it, or None if it parses. Nothing runs: `throw 0` comes first, and a strict
        eval keeps any declaration inside it."""
        from py_mini_racer import JSEvalException

        wrapped = "throw 0;\n(function (require, module, exports) {" + code + "\n})"
        probe = '(function () { "use strict"; eval(' + json.dumps(wrapped) + "); })()"
        with self._lock:
            racer = self._ready()
            try:
                racer.eval(probe, timeout_sec=timeout)
            except JSEvalException as exc:
                if racer.was_hard_memory_limit_reached():
                    self._replace()
                    return None
                report = str(exc)
                return None if report.startswith("undefined:1: 0") else report
        return None

    def warm(self) -> None:
        self.check(WARM_UP, timeout=30)
        self.is_warm = True

    def close(self) -> None:
        with self._lock:
            self._replace()

    def _ready(self):
        if self._racer is None:
            self._racer = self._create()
            self._check = self._racer.eval("OsfRunnable.check")
            self._prepare = self._racer.eval("OsfModules.prepare")
        return self._racer

    def _replace(self) -> None:
        racer, self._racer, self._check, self._prepare = self._racer, None, None, None
        if racer is not None:
            racer.close()

    @staticmethod
    def _create():
        made: dict = {}

        def create():
            try:
                from py_mini_racer import MiniRacer

                racer = MiniRacer()
                racer.set_hard_memory_limit(MEMORY_LIMIT_BYTES)
                racer.eval("var window = globalThis;")  # the Sucrase bundle sets window.Sucrase
                for script in SCRIPTS:
                    racer.eval(script.read_text())
                made["racer"] = racer
            except BaseException as exc:  # handed to the caller's thread below
                made["error"] = exc

        thread = threading.Thread(target=create, name="jsengine-create")
        thread.start()
        thread.join()
        if "error" in made:
            raise made["error"]
        return made["racer"]

    def _after_fork(self) -> None:
        # The parent's context lives on threads the child does not have: using or even
        # closing it would hang. Keep it referenced, so its finaliser never runs, and start over.
        if self._racer is not None:
            _abandoned.append((self._racer, self._check, self._prepare))
        self._racer = self._check = self._prepare = None
        self._lock = threading.Lock()
        self.is_warm = False


_abandoned: list = []
init_mini_racer(ignore_duplicate_init=True)
engine = Engine()
atexit.register(engine.close)
os.register_at_fork(after_in_child=engine._after_fork)


def warm_in_background() -> None:
    """Create the context and run one check now, off the caller's thread (call at start-up)."""
    threading.Thread(target=engine.warm, name="jsengine-warm", daemon=True).start()

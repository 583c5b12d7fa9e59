"""The verdict on pushed versions, found after the push is answered.

Whether a pushed version runs in the Room is the Room's runnability check on its src/: every
code file compiled by the frame's own compiler (rooms/runtime/runnable.py). For a 200-file, 2 MB app
that is 0.3-0.6 s, more than everything else a push does (about 0.1 s for the pack, the
objects and the refs, measured with bench/git.py); inside the push it made the push 2.7× `git
http-backend`'s time. So the git server answers first and hands the versions it pinned here:
one thread per process checks them in order (the engine runs one check at a time anyway) and
stores each verdict through rooms/runtime/verdicts.py, as every other reader does.

Until then the version has no verdict. Nothing treats that as one: a reader checks it on the
spot (verdicts.runs, for list_room_repositories), and proposing a version finds its verdict
first (verdicts.of). A check lost with its process is thus only late, never wrong.
"""

import logging
import queue
import threading
import uuid

from django.db import connections

from ..repomodels import RepositoryVersion
from ..runtime import verdicts

logger = logging.getLogger(__name__)

_waiting: queue.SimpleQueue[uuid.UUID] = queue.SimpleQueue()
_worker: threading.Thread | None = None
_worker_lock = threading.Lock()


def check_later(version_ids: list[uuid.UUID]) -> None:
    """Check these versions in this process's checking thread (call once the push is
    answered: the check competes with nothing the pusher waits for)."""
    global _worker
    if not version_ids:  # a fetch, or a push that pinned nothing new
        return
    for version_id in version_ids:
        _waiting.put(version_id)
    with _worker_lock:
        if _worker is None or not _worker.is_alive():  # not alive: a parent's, after fork
            # A daemon: a check still running at exit is lost, and then only late (see above).
            _worker = threading.Thread(target=_check_waiting, name="version-checks", daemon=True)
            _worker.start()


def _check_waiting() -> None:
    global _worker
    while True:
        try:
            version_id = _waiting.get(timeout=30)
        except queue.Empty:
            with _worker_lock:  # check_later puts, then looks for a worker under this lock
                if _waiting.empty():
                    _worker = None
                    return
            continue
        try:
            version = RepositoryVersion.objects.filter(pk=version_id).first()
            if version is not None and verdicts.known(version) is None:
                verdicts.version_problems(version)
        except Exception:  # one version's failure must not stop the checks of the others
            logger.exception("checking version %s failed; it is checked when read", version_id)
        finally:
            # The thread idles between pushes: never hold a connection (or a PostgreSQL
            # session) for it.
            connections.close_all()

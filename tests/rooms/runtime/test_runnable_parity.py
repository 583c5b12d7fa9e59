"""The server's runnable check and the browser's frame agree on every app of one corpus.

The server refuses at proposal time what the Room's frame cannot run (rooms/runtime/runnable.py);
the frame is static/rooms/frame-runtime.js, driven here exactly as the launcher and the owner's
preview drive it (OsfAppFrame.mount on a console page, the same /rooms/frame/ page, the same
osf:run message). An app "runs" in the frame when it mounts and reports no error within a moment
after (a dynamic import fails just after mounting); the corpus is tests/rooms/runnable_corpus.py.
"""

import pytest

from rooms.runtime.runnable import check_app
from tests.rooms.runnable_corpus import CASES
from tests.rooms.runtime_support import log_in

# Drives one app in a fresh sandboxed frame; resolves to {runs, message}.
RUN_IN_FRAME = """
async ({files, settleMs}) => {
  const box = document.createElement("div");
  document.body.appendChild(box);
  return await new Promise((resolve) => {
    let done = false;
    let handle = null;
    const finish = (verdict) => {
      if (done) return;
      done = true;
      if (handle) handle.stop();
      box.remove();
      resolve(verdict);
    };
    handle = window.OsfAppFrame.mount(box, {
      frameUrl: "/rooms/frame/",
      files: files,
      entry: "src/App.tsx",
      storageKey: null,
      onStatus: (status) => {
        if (status.type === "osf:error") finish({runs: false, message: status.message});
        if (status.type === "osf:mounted") setTimeout(() => finish({runs: true}), settleMs);
      },
    });
    setTimeout(() => finish({runs: null, message: "the frame answered nothing"}), 15000);
  });
}
"""


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_server_check_gives_each_app_its_verdict_and_message(case):
    check = check_app(case.files)
    messages = [str(problem) for problem in check.problems]
    assert check.runs is case.runs, messages
    if case.error:
        assert any(case.error in message for message in messages), messages


@pytest.mark.django_db(transaction=True)
def test_the_frame_runs_exactly_the_apps_the_server_accepts(
    page, context, live_server_url, room, owner
):
    log_in(context, live_server_url, owner)
    page.goto(f"{live_server_url}/rooms/{room.pk}/")
    page.wait_for_function("!!window.OsfAppFrame")
    disagreements = []
    for case in CASES:
        server = check_app(case.files)
        frame = page.evaluate(RUN_IN_FRAME, {"files": case.files, "settleMs": 300})
        if not frame["runs"] is server.runs is case.runs:
            said = [str(problem) for problem in server.problems]
            disagreements.append(
                f"{case.name}: expected runs={case.runs}; frame {frame}; server {said}"
            )
    assert disagreements == []

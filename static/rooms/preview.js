// osFoundry Rooms: the owner's preview of a PENDING proposal, on its review card.
//
// Same sandboxed frame as the launcher, started only by an explicit click on "Preview",
// inside a box marked "Unapproved code", with a Stop button and the storage bridge off
// (storageKey null). The files come from an owner-only endpoint. Approve and Decline stay
// outside the frame: nothing the frame sends can trigger them. One preview runs at a time.
(function () {
  "use strict";

  var PHASES = {
    compile: "Compile error",
    module: "Module error",
    runtime: "Runtime error",
    navigation: "Stopped",
    load: "Did not start",
    fetch: "Could not open",
  };
  var running = null; // {card, handle}

  function parts(card) {
    return {
      start: card.querySelector(".preview-intro") || card.querySelector("[data-osf-preview-start]"),
      box: card.querySelector("[data-osf-preview-box]"),
      frame: card.querySelector("[data-osf-preview-frame]"),
      status: card.querySelector("[data-osf-preview-status]"),
    };
  }

  function setState(card, state, detail) {
    card.dataset.state = state;
    card.dispatchEvent(new CustomEvent("osf:app-status", {detail: detail}));
  }

  function addStatus(card, kind, text) {
    var item = document.createElement("li");
    item.className = "status-" + kind;
    item.textContent = text;
    parts(card).status.appendChild(item);
  }

  function stop() {
    if (!running) return;
    var card = running.card;
    if (running.handle) running.handle.stop();
    running = null;
    var p = parts(card);
    p.frame.textContent = "";
    p.box.hidden = true;
    p.start.hidden = false;
    setState(card, "stopped", {type: "osf:stopped"});
  }

  function onStatus(run, status) {
    if (running !== run) return;
    if (status.type === "osf:mounted") {
      addStatus(run.card, "ok", "Preview running (compiled in " + status.compile_ms + " ms).");
      setState(run.card, "mounted", status);
    } else {
      var title = PHASES[status.phase] || "Error";
      addStatus(run.card, "error", title + (status.file ? " in " + status.file : "") + ": " + status.message);
      setState(run.card, "error", status);
    }
  }

  function start(card) {
    stop();
    var run = {card: card, handle: null};
    running = run;
    var p = parts(card);
    p.start.hidden = true;
    p.box.hidden = false;
    p.status.textContent = "";
    setState(card, "loading", {type: "osf:loading"});
    window.OsfAppFrame.fetchFiles(card.dataset.filesUrl)
      .then(function (result) {
        if (running !== run) return;
        if (!result.ok) {
          var message = (result.body.error && result.body.error.message) || "unknown error";
          onStatus(run, {type: "osf:error", phase: "fetch", message: String(message)});
          return;
        }
        run.handle = window.OsfAppFrame.mount(p.frame, {
          frameUrl: card.dataset.frameUrl,
          files: result.body.files,
          entry: result.body.entry,
          packages: result.body.packages || null,
          storageKey: null, // storage bridge off: unapproved code keeps nothing
          title: "Preview of unapproved code",
          onStatus: function (status) {
            onStatus(run, status);
          },
        });
      })
      .catch(function (err) {
        onStatus(run, {type: "osf:error", phase: "fetch", message: String(err && err.message)});
      });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-osf-preview-start], [data-osf-preview-stop]");
    if (!button || !window.OsfAppFrame) return;
    var card = button.closest("[data-osf-preview]");
    if (!card) return;
    if (button.hasAttribute("data-osf-preview-start")) start(card);
    else if (running && running.card === card) stop();
  });
})();

// osFoundry Rooms: runs the Room's approved apps. room.js dispatches "launcher:open"
// ({instanceId, appArea}) on [data-room] when a tab is selected; this fetches that app's
// files and runs them in the sandboxed frame (app-frame.js) inside [data-app-area].
//
// Only the files go into the frame. The app's storage lives in this browser, per app AND
// per user: OsfAppFrame keeps it under a storageKey made of the Room, app and user ids.
// Everything the frame reports is shown with textContent, never as HTML.
//
// For tests and benchmarks, every status is also dispatched on the app area as a DOM event
// "osf:app-status" (detail: the status plus instanceId), and the area's data-state says
// "loading", "mounted", "error" or "closed".
(function () {
  "use strict";

  var PLACEHOLDER = "00000000-0000-0000-0000-000000000000";
  var PHASES = {
    compile: "Compile error",
    module: "Module error",
    runtime: "Runtime error",
    navigation: "Stopped",
    load: "Did not start",
    fetch: "Could not open",
  };

  var root = document.querySelector("[data-room]");
  var area = root && root.querySelector("[data-app-area]");
  if (!area || !window.OsfAppFrame) return;
  var frameBox = area.querySelector("[data-app-frame]");
  var statusList = area.querySelector("[data-app-status]");
  var nameEl = area.querySelector("[data-app-name]");
  var bar = area.querySelector("[data-app-bar]");
  var placeholder = area.querySelector("[data-app-placeholder]");
  var handle = null;
  var standby = null; // a hidden frame with the runtime loaded, for the next app
  var current = null; // instance id of the app being shown
  var runId = 0; // a later selection wins over a slower earlier fetch

  function storageKey(instanceId) {
    // No ':' allowed in a storageKey (app-frame.js); ids are UUIDs and integers.
    return ["room-" + root.dataset.roomId, "app-" + instanceId, "user-" + area.dataset.userId].join(".");
  }

  function setState(state, detail) {
    area.dataset.state = state;
    area.dispatchEvent(new CustomEvent("osf:app-status", {detail: detail}));
  }

  function addStatus(kind, text) {
    var item = document.createElement("li");
    item.className = "status-" + kind;
    item.textContent = text;
    statusList.appendChild(item);
  }

  function describe(status) {
    var title = PHASES[status.phase] || "Error";
    return title + (status.file ? " in " + status.file : "") + ": " + status.message;
  }

  // The frame's runtime scripts cannot be cached across frames (opaque origin): load the
  // next frame while the page is idle, so opening a tab only compiles and mounts.
  function prepareNext() {
    if (!standby) standby = window.OsfAppFrame.prepare(frameBox, {frameUrl: area.dataset.frameUrl});
  }

  function stop() {
    runId += 1;
    if (handle) handle.stop();
    handle = null;
  }

  function close() {
    stop();
    current = null;
    bar.hidden = true;
    placeholder.hidden = false;
    statusList.textContent = "";
    root.querySelectorAll("[data-launcher] [role=tab]").forEach(function (tab) {
      tab.setAttribute("aria-selected", "false");
    });
    setState("closed", {type: "osf:closed"});
  }

  function tabLabel(instanceId) {
    var tabs = root.querySelectorAll("[data-launcher] [data-instance-id]");
    for (var i = 0; i < tabs.length; i++) {
      if (tabs[i].dataset.instanceId === instanceId) return tabs[i].textContent.trim();
    }
    return "App";
  }

  function open(instanceId, reload) {
    if (instanceId === current && handle && !reload) return; // already running
    stop();
    var myRun = runId;
    var label = tabLabel(instanceId);
    current = instanceId;
    bar.hidden = false;
    placeholder.hidden = true;
    nameEl.textContent = label;
    statusList.textContent = "";
    addStatus("info", "Loading " + label + "…");
    setState("loading", {type: "osf:loading", instanceId: instanceId});

    var url = area.dataset.filesUrl.replace(PLACEHOLDER, encodeURIComponent(instanceId));
    window.OsfAppFrame.fetchFiles(url)
      .then(function (result) {
        if (myRun !== runId) return;
        if (!result.ok) {
          var message = (result.body.error && result.body.error.message) || "unknown error";
          onStatus(instanceId, {type: "osf:error", phase: "fetch", message: String(message)});
          return;
        }
        statusList.textContent = "";
        var frame = standby;
        standby = null;
        handle = window.OsfAppFrame.mount(frameBox, {
          frame: frame,
          frameUrl: area.dataset.frameUrl,
          files: result.body.files,
          entry: result.body.entry,
          packages: result.body.packages || null,
          storageKey: storageKey(instanceId),
          title: label,
          onStatus: function (status) {
            onStatus(instanceId, status);
          },
        });
      })
      .catch(function (err) {
        if (myRun !== runId) return;
        onStatus(instanceId, {type: "osf:error", phase: "fetch", message: String(err && err.message)});
      });
  }

  function onStatus(instanceId, status) {
    if (instanceId !== current) return;
    var detail = Object.assign({instanceId: instanceId}, status);
    prepareNext();
    if (status.type === "osf:mounted") {
      addStatus("ok", "Running (compiled in " + status.compile_ms + " ms).");
      setState("mounted", detail);
    } else {
      addStatus("error", describe(status));
      setState("error", detail);
    }
  }

  if (root.querySelector("[data-launcher] [data-instance-id]")) prepareNext();
  root.addEventListener("launcher:open", function (event) {
    var instanceId = event.detail && event.detail.instanceId;
    // reload: the tab's app was updated; run its new revision (same storage key: its data stays).
    if (typeof instanceId === "string" && instanceId) open(instanceId, Boolean(event.detail.reload));
  });
  root.addEventListener("launcher:close", function (event) {
    if (event.detail && event.detail.instanceId === current) close();
  });
  area.querySelector("[data-app-close]").addEventListener("click", function () {
    close();
    root.dispatchEvent(new CustomEvent("launcher:closed"));
  });
})();

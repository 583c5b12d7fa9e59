// osFoundry Rooms: snippet runtime, PARENT side (runs in the console page).
//
//   var handle = OsfAppFrame.mount(container, {
//     frameUrl,            // URL of the frame page (same origin, own CSP, sandbox)
//     files, entry,        // approved snippet: {path: text}, "src/App.tsx"
//     packages,            // its npm packages' module table (fetchFiles gets it), or null
//     storageKey,          // string = per-app storage in this browser; null = storage off
//     onStatus(status),    // {type:"osf:mounted", compile_ms, load_ms, mount_ms}
//   });                    // or {type:"osf:error", phase, message, file?}
//   handle.stop();
//
//   var standby = OsfAppFrame.prepare(container, {frameUrl});  // optional warm-up
//   OsfAppFrame.mount(container, {frame: standby, ...});     // uses it if still fresh
//
// The sandboxed frame has an opaque origin, so Chromium gives it a transient network key:
// its runtime scripts (~430 KB) are fetched and compiled again for every frame, whatever
// the cache headers say. prepare() does that work ahead of time in a hidden frame that has
// run no app code yet; mount() hands it one app, once. Never reuse a frame for a second app.
//
// Trust model: whatever runs in the frame is untrusted code. The frame is sandboxed
// with allow-scripts ONLY (never allow-same-origin: that would hand it our cookies,
// storage and DOM). Its messages are accepted only from this iframe's window, only
// with whitelisted types, are copied field by field into fresh objects, and never
// trigger anything privileged (e.g. a {type:"approve"} message is simply dropped).
// Nothing from a message is rendered as HTML here; onStatus consumers must use
// textContent too.
(function () {
  "use strict";

  var MAX_KEY_LENGTH = 200;
  var MAX_VALUE_BYTES = 100 * 1024;
  var MAX_MESSAGE_LENGTH = 4000;
  var MAX_ERROR_STATUSES = 50;
  var READY_TIMEOUT_MS = 15000;
  var STORAGE_OPS = {get: true, set: true, remove: true, keys: true};

  function byteLength(text) {
    return new TextEncoder().encode(text).length;
  }

  function clip(value) {
    var text = typeof value === "string" ? value : String(value);
    return text.length > MAX_MESSAGE_LENGTH ? text.slice(0, MAX_MESSAGE_LENGTH) + " …" : text;
  }

  function isPlainObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  // ------------------------------------------------------------- storage bridge

  // One app's data lives in this page's localStorage under "osf:app:<storageKey>:<key>":
  // per app, per browser. The frame itself cannot touch localStorage (opaque origin).
  function handleStorage(storageKey, data) {
    var op = data.op;
    var key = data.key;
    if (storageKey === null) throw new Error("Storage is off in preview");
    if (!STORAGE_OPS.hasOwnProperty(op)) throw new Error("Unknown storage operation");
    var prefix = "osf:app:" + storageKey + ":";

    if (op === "keys") {
      var keys = [];
      for (var i = 0; i < localStorage.length; i++) {
        var k = localStorage.key(i);
        if (k !== null && k.indexOf(prefix) === 0) keys.push(k.slice(prefix.length));
      }
      return keys.sort();
    }

    if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new Error("Storage key must be a string of 1 to " + MAX_KEY_LENGTH + " characters");
    }
    if (op === "get") {
      var stored = localStorage.getItem(prefix + key);
      if (stored === null) return null;
      try {
        return JSON.parse(stored);
      } catch (e) {
        return null;
      }
    }
    if (op === "remove") {
      localStorage.removeItem(prefix + key);
      return null;
    }
    // op === "set": the value arrived by structured clone; keep only what JSON keeps.
    var json;
    try {
      json = JSON.stringify(data.value);
    } catch (e) {
      throw new Error("Storage value must be JSON-serialisable");
    }
    if (json === undefined) throw new Error("Storage value must be JSON-serialisable");
    if (byteLength(json) > MAX_VALUE_BYTES) throw new Error("Storage value is larger than 100 KB");
    try {
      localStorage.setItem(prefix + key, json);
    } catch (e) {
      throw new Error("Storage is full");
    }
    return null;
  }

  // ---------------------------------------------------------------- frames

  function createFrame(frameUrl, title) {
    var iframe = document.createElement("iframe");
    // allow-scripts only: opaque origin, no top navigation, no popups, no forms.
    iframe.setAttribute("sandbox", "allow-scripts");
    iframe.setAttribute("title", title || "App");
    iframe.setAttribute("referrerpolicy", "no-referrer");
    iframe.className = "osf-app-frame";
    return iframe;
  }

  // A hidden frame that loads the runtime now and waits for one app. Until mount() takes
  // it over, it only counts its loads and notes the runtime's osf:ready.
  function prepare(container, options) {
    var iframe = createFrame(options.frameUrl, "App");
    iframe.className = "osf-app-frame-standby";
    iframe.hidden = true;
    var standby = {iframe: iframe, container: container, loads: 0, ready: false, taken: false};
    standby.onLoad = function () {
      standby.loads += 1;
    };
    standby.onMessage = function (event) {
      if (event.source !== iframe.contentWindow || event.source === null || event.origin !== "null") return;
      if (isPlainObject(event.data) && event.data.type === "osf:ready") standby.ready = true;
    };
    standby.release = function () {
      window.removeEventListener("message", standby.onMessage);
      iframe.removeEventListener("load", standby.onLoad);
    };
    standby.discard = function () {
      standby.release();
      standby.taken = true;
      if (iframe.parentNode) iframe.parentNode.removeChild(iframe);
    };
    window.addEventListener("message", standby.onMessage);
    iframe.addEventListener("load", standby.onLoad);
    iframe.src = options.frameUrl;
    container.appendChild(iframe);
    return Object.freeze({
      discard: function () {
        if (!standby.taken) standby.discard();
      },
      _standby: standby,
    });
  }

  // ---------------------------------------------------------------- mount

  function mount(container, options) {
    options = options || {};
    var files = options.files || {};
    var entry = options.entry || "src/App.tsx";
    var packages = isPlainObject(options.packages) ? options.packages : null;
    var storageKey = typeof options.storageKey === "string" && options.storageKey ? options.storageKey : null;
    // "osf:app:<storageKey>:<key>" is only unambiguous if storageKey has no ":"
    // (else app "1" with key "2:x" would reach app "1:2", key "x").
    if (storageKey !== null && storageKey.indexOf(":") !== -1) {
      throw new TypeError("OsfAppFrame.mount: storageKey must not contain ':'");
    }
    var onStatus = typeof options.onStatus === "function" ? options.onStatus : function () {};

    var stopped = false;
    var readySeen = false;
    var sentRun = false;
    var loads = 0;
    var errorStatuses = 0;

    // A standby frame is used once, only in its own container, and only while it is still
    // the runtime page it loaded (exactly one load so far): anything else starts afresh.
    var standby = options.frame && options.frame._standby;
    var fresh =
      standby && !standby.taken && standby.container === container && standby.loads <= 1 &&
      standby.iframe.parentNode === container;
    if (standby && !standby.taken && !fresh) standby.discard();
    var iframe;
    if (fresh) {
      standby.taken = true;
      standby.release();
      iframe = standby.iframe;
      loads = standby.loads;
      readySeen = standby.ready;
      iframe.setAttribute("title", options.title || "App");
      iframe.className = "osf-app-frame";
      iframe.hidden = false;
    } else {
      iframe = createFrame(options.frameUrl, options.title);
    }

    function status(obj) {
      if (obj.type === "osf:error") {
        errorStatuses += 1;
        if (errorStatuses > MAX_ERROR_STATUSES) return;
      }
      try {
        onStatus(obj);
      } catch (e) {
        // a broken status callback must not break the bridge
        if (window.console) console.error(e);
      }
    }

    function teardown() {
      stopped = true;
      clearTimeout(readyTimer);
      window.removeEventListener("message", onMessage);
      iframe.removeEventListener("load", onLoad);
      if (iframe.parentNode) iframe.parentNode.removeChild(iframe);
    }

    // The snippet only gets its files once BOTH the frame page's load event and
    // its osf:ready have arrived (in either order), so the snippet cannot run
    // before we have counted the first load. Any later load means the document in
    // the frame was replaced (location = ..., reload, a link): it is no longer the
    // approved runtime, so stop it instead of talking to whatever loaded.
    function maybeRun() {
      if (sentRun || !readySeen || loads !== 1) return;
      sentRun = true;
      clearTimeout(readyTimer);
      var run = {type: "osf:run", files: files, entry: entry, storage: storageKey !== null};
      if (packages) run.packages = packages;
      send(run);
    }

    function onLoad() {
      loads += 1;
      if (loads === 1) {
        maybeRun();
      } else if (!stopped) {
        teardown();
        status({
          type: "osf:error",
          phase: "navigation",
          message: "The app tried to navigate away and was stopped.",
        });
      }
    }

    function send(msg) {
      if (!stopped && iframe.contentWindow) {
        // The sandboxed frame has an opaque origin, which no targetOrigin can name.
        // What we send is the approved files and storage answers for this app only.
        iframe.contentWindow.postMessage(msg, "*");
      }
    }

    function onMessage(event) {
      if (stopped || event.source !== iframe.contentWindow || event.source === null) return;
      // A properly sandboxed frame always has the opaque origin "null". Anything
      // else means the sandbox is not in force, so do not talk to it.
      if (event.origin !== "null") return;
      var data = event.data;
      if (!isPlainObject(data) || typeof data.type !== "string") return;

      switch (data.type) {
        case "osf:ready":
          readySeen = true;
          maybeRun();
          return;
        case "osf:mounted":
          status({
            type: "osf:mounted",
            compile_ms: Number(data.compile_ms) || 0,
            load_ms: Number(data.load_ms) || 0,
            mount_ms: Number(data.mount_ms) || 0,
          });
          return;
        case "osf:error":
          var out = {
            type: "osf:error",
            phase: {compile: 1, module: 1, runtime: 1}[data.phase] ? data.phase : "runtime",
            message: clip(data.message),
          };
          if (typeof data.file === "string") out.file = clip(data.file);
          status(out);
          return;
        case "osf:storage":
          var id = data.id;
          if (!(typeof id === "number" && isFinite(id)) && !(typeof id === "string" && id.length <= 64)) return;
          var result;
          try {
            result = {type: "osf:storage-result", id: id, ok: true, value: handleStorage(storageKey, data)};
          } catch (e) {
            result = {type: "osf:storage-result", id: id, ok: false, error: e.message};
          }
          send(result);
          return;
        default:
          // Not part of the protocol (e.g. {type:"approve"}): ignored on purpose.
          return;
      }
    }

    var readyTimer = setTimeout(function () {
      if (!sentRun && !stopped) {
        teardown();
        status({type: "osf:error", phase: "load", message: "The app frame did not start."});
      }
    }, READY_TIMEOUT_MS);

    window.addEventListener("message", onMessage);
    iframe.addEventListener("load", onLoad);
    if (fresh) {
      maybeRun(); // the standby frame may be loaded and ready already
    } else {
      iframe.src = options.frameUrl; // set before insertion: exactly one load for the frame page
      container.appendChild(iframe);
    }

    return {
      stop: function () {
        if (!stopped) teardown();
      },
    };
  }

  // The app's files as JSON from the console: resolves {ok, body} and never rejects on a
  // non-JSON answer, so callers show one kind of error. An app with npm packages from the
  // registry names its module table (`packages.url`, immutable: the browser's cache keeps it):
  // it is fetched here, by this page, and handed to the frame with the files, so the frame
  // itself loads nothing from the network.
  function fetchJson(url) {
    return fetch(url, {credentials: "same-origin", headers: {Accept: "application/json"}}).then(
      function (response) {
        return response.json().then(
          function (body) {
            return {ok: response.ok, body: body};
          },
          function () {
            return {ok: false, body: {error: {message: "HTTP " + response.status}}};
          }
        );
      }
    );
  }

  function fetchFiles(url) {
    return fetchJson(url).then(function (result) {
      var packages = result.ok && result.body.packages;
      if (!packages || typeof packages.url !== "string") return result;
      return fetchJson(packages.url).then(function (table) {
        if (!table.ok) {
          var message = (table.body.error && table.body.error.message) || "unknown error";
          return {ok: false, body: {error: {message: "The app's packages did not load: " + message}}};
        }
        result.body.packages = table.body;
        return result;
      });
    });
  }

  window.OsfAppFrame = Object.freeze({mount: mount, prepare: prepare, fetchFiles: fetchFiles});
})();

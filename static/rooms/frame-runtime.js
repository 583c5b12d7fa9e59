// osFoundry Rooms: snippet runtime, the part that runs INSIDE the sandboxed frame.
//
// The frame page is served with `sandbox allow-scripts` (opaque "null" origin) and a
// strict CSP, and loads, in order: vendor/sucrase/sucrase.js (window.Sucrase),
// vendor/react/react.js (window.OsfReact) and this file. No inline script anywhere. The
// curated libraries (static/vendor/libs/, listed in the page's #osf-libraries data block,
// which the server builds from static/vendor/libraries.json) load only when the app imports
// them: each registers its modules with OsfLibraries.define.
//
// Protocol (all messages via postMessage; the parent is the console page):
//   frame -> parent  {type:"osf:ready"}
//   parent -> frame  {type:"osf:run", files:{path:text}, entry:"src/App.tsx", storage:bool,
//                     packages?:{imports:{spec:id}, modules:{id:{name, type, code, deps}}}}
//                     (the npm packages its package.json resolved to, rooms/registry/modules.py)
//   frame -> parent  {type:"osf:mounted", compile_ms, load_ms, mount_ms}   (load: libraries)
//   frame -> parent  {type:"osf:error", phase:"compile"|"module"|"runtime", message, file?}
//   frame -> parent  {type:"osf:storage", id, op, key, value}
//   parent -> frame  {type:"osf:storage-result", id, ok, value, error}
//
// Security note: the snippet runs in this same realm and can tamper with anything
// here, so nothing in this file is a security boundary. The boundary is the sandbox
// (no same-origin, no top navigation, CSP connect-src 'none') plus a parent that
// trusts no message. This file only has to be correct for honest snippets.
(function () {
  "use strict";

  var parentWin = window.parent;
  var started = false; // one run per frame load
  var storageOn = false;
  var errorReports = 0;
  var MAX_ERROR_REPORTS = 20; // an error in a timer must not flood the parent
  var STORAGE_TIMEOUT_MS = 10000;

  // Our origin is opaque ("null"), so no targetOrigin can name the parent: use "*".
  // Nothing secret is ever sent from here.
  function post(msg) {
    parentWin.postMessage(msg, "*");
  }

  // ---------------------------------------------------------------- errors

  function errorText(err) {
    if (err && typeof err === "object" && typeof err.message === "string") {
      return (err.name && err.name !== "Error" ? err.name + ": " : "") + err.message;
    }
    try {
      return String(err);
    } catch (e) {
      return "Unknown error";
    }
  }

  var PHASE_TITLES = {
    compile: "The app could not be compiled",
    module: "The app could not be loaded",
    runtime: "The app crashed",
  };

  // Shows the error as plain text in a panel above the app (textContent only:
  // messages may contain snippet-controlled text) and reports it to the parent.
  function reportError(phase, message, file) {
    errorReports += 1;
    if (errorReports > MAX_ERROR_REPORTS) return;
    var panel = document.getElementById("osf-error");
    if (!panel) {
      panel = document.createElement("div");
      panel.id = "osf-error";
      panel.setAttribute("role", "alert");
      // CSSOM writes are not affected by CSP, so this works with any style-src.
      var s = panel.style;
      s.font = "13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";
      s.background = "#fff1f0";
      s.color = "#7a1010";
      s.border = "1px solid #e5a5a0";
      s.borderRadius = "6px";
      s.margin = "8px";
      s.padding = "10px 12px";
      s.whiteSpace = "pre-wrap";
      s.overflowWrap = "anywhere";
      document.body.insertBefore(panel, document.body.firstChild);
    }
    var title = document.createElement("strong");
    title.textContent = PHASE_TITLES[phase] || "Error";
    var body = document.createElement("div");
    body.textContent = message;
    if (panel.childNodes.length) panel.appendChild(document.createElement("hr"));
    panel.appendChild(title);
    panel.appendChild(body);
    if (errorReports === MAX_ERROR_REPORTS) {
      var more = document.createElement("div");
      more.textContent = "(further errors are not shown)";
      panel.appendChild(more);
    }

    var msg = {type: "osf:error", phase: phase, message: message};
    if (file) msg.file = file;
    post(msg);
  }

  // Errors tagged with the phase they belong to, so the outer catch can report them.
  function PhaseError(phase, message, file) {
    var e = new Error(message);
    e.osfPhase = phase;
    e.osfFile = file;
    return e;
  }

  // -------------------------------------------------------------- compiling

  var CODE_EXT = /\.(tsx|ts|jsx|js|mjs)$/;

  function transformsFor(path) {
    // .ts must not get the jsx transform: `<T>value` is a type assertion there.
    if (/\.(ts|mts)$/.test(path)) return ["typescript", "imports"];
    if (/\.tsx$/.test(path)) return ["typescript", "jsx", "imports"];
    return ["jsx", "imports"]; // .js/.jsx/.mjs: JSX allowed, as in most React setups
  }

  // "src/App.tsx:12:5: Unexpected token" followed by the offending line and a caret.
  function formatCompileError(path, source, err) {
    var msg = errorText(err)
      .replace(/^SyntaxError: /, "")
      .replace(/^Error transforming [^:]*: /, "");
    var loc = err && err.loc;
    if (!loc || typeof loc.line !== "number") return path + ": " + msg;
    msg = msg.replace(/ \(\d+:\d+\)$/, "");
    var col = loc.column; // Sucrase reports 1-based columns, like editors
    var lines = source.split("\n");
    var text = lines[loc.line - 1] || "";
    var out = path + ":" + loc.line + ":" + col + ": " + msg;
    if (text.length <= 300) {
      var gutter = String(loc.line) + " | ";
      out += "\n\n" + gutter + text + "\n" + " ".repeat(gutter.length + Math.max(0, col - 1)) + "^";
    }
    return out;
  }

  function compile(path, source) {
    try {
      return window.Sucrase.transform(source, {
        transforms: transformsFor(path),
        jsxRuntime: "automatic",
        production: true,
        filePath: path,
      }).code;
    } catch (err) {
      throw PhaseError("compile", formatCompileError(path, source, err), path);
    }
  }

  // ---------------------------------------------------------- module loader

  function builtins() {
    var R = window.OsfReact;
    return {
      "react": R.react,
      "react-dom": R.reactDom,
      "react-dom/client": R.reactDomClient,
      "react/jsx-runtime": R.jsxRuntime,
    };
  }

  // {modules: {specifier: file}, files: {file: {src, requires}}, tailwind: {file, css}}
  function readLibraries() {
    var block = document.getElementById("osf-libraries");
    try {
      return JSON.parse(block.textContent);
    } catch (e) {
      return {modules: {}, files: {}, tailwind: {file: null, css: "(?!)"}};
    }
  }

  var LIBRARIES = readLibraries();
  var TAILWIND_CSS = new RegExp(LIBRARIES.tailwind.css);
  var libraryModules = Object.create(null); // specifier -> function returning the module
  var libraryCache = Object.create(null); // specifier -> the module, once required

  function isLibrary(spec) {
    return Object.prototype.hasOwnProperty.call(LIBRARIES.modules, spec);
  }

  function hasOwn(object, key) {
    return Object.prototype.hasOwnProperty.call(object, key);
  }

  // The registry the library bundles call into. A bundle may define only the specifiers the
  // manifest gives its file; require hands every importer the same module, as CommonJS does.
  window.OsfLibraries = Object.freeze({
    define: function (file, modules) {
      Object.keys(modules).forEach(function (spec) {
        if (LIBRARIES.modules[spec] === file) libraryModules[spec] = modules[spec];
      });
    },
    require: function (spec) {
      if (spec in libraryCache) return libraryCache[spec];
      if (!libraryModules[spec]) throw PhaseError("module", "module '" + spec + "' did not load");
      return (libraryCache[spec] = libraryModules[spec]());
    },
  });

  // require('...') calls of compiled code (the frame's Sucrase writes every import as one).
  // This may find more than the code runs (a call in a comment): that only loads a library the
  // app does not use. The server lists them exactly (rooms/runtime/js/runnable.js).
  var REQUIRE_CALL = /(^|[^.\w$])require\s*\(\s*('(?:[^'\\\n\r]|\\[\s\S])*'|"(?:[^"\\\n\r]|\\[\s\S])*"|`[^`\\$]*`)\s*\)/g;

  function requiredSpecs(code) {
    var specs = [];
    var match;
    REQUIRE_CALL.lastIndex = 0;
    while ((match = REQUIRE_CALL.exec(code))) {
      var raw = match[2];
      // The pattern admits one string literal and nothing else: evaluating it runs no code.
      specs.push(raw.indexOf("\\") < 0 ? raw.slice(1, -1) : String((0, eval)(raw)));
    }
    return specs;
  }

  // The library files the app loads, dependencies first: those imported by the files the
  // entry loads (directly or through others), and Tailwind if one of its CSS files asks.
  function librariesFor(files, compiled, entry, packages) {
    var wanted = [];
    var seen = Object.create(null);
    var queue = [entry];
    function want(file) {
      if (wanted.indexOf(file) >= 0) return;
      (LIBRARIES.files[file].requires || []).forEach(want);
      wanted.push(file);
    }
    while (queue.length) {
      var path = queue.shift();
      if (seen[path]) continue;
      seen[path] = true;
      if (/\.css$/.test(path)) {
        if (asksForTailwind(files[path])) want(LIBRARIES.tailwind.file);
        continue;
      }
      if (!compiled[path]) continue;
      requiredSpecs(compiled[path]).forEach(function (spec) {
        if (hasOwn(packages.imports, spec)) return; // a registry package: package.json named it
        if (isLibrary(spec)) want(LIBRARIES.modules[spec]);
        else if (spec.charAt(0) === "." || spec.charAt(0) === "/") {
          var target = resolveFile(files, joinPath(path, spec));
          if (target !== null) queue.push(target);
        }
      });
    }
    return wanted;
  }

  function asksForTailwind(css) {
    return typeof css === "string" && TAILWIND_CSS.test(css);
  }

  // A CSS file that asks for Tailwind is Tailwind's input (@apply, @theme and plain CSS work
  // in it), compiled by @tailwindcss/browser: v3's @tailwind directives become v4's import.
  function tailwindSource(css) {
    var v4 = /@import\s+(?:url\(\s*)?["']tailwindcss["']/.test(css);
    var text = css.replace(/@tailwind\s+(?:base|components|utilities|variants|screens)\b\s*;?/g, "");
    return v4 ? text : '@import "tailwindcss";\n' + text;
  }

  // Adds the library scripts in order (async=false runs them in insertion order); resolves
  // once all ran, or rejects naming the first that did not load.
  function loadLibraries(names) {
    return Promise.all(
      names.map(function (name) {
        return new Promise(function (resolve, reject) {
          var script = document.createElement("script");
          script.src = LIBRARIES.files[name].src;
          script.crossOrigin = "anonymous"; // see MUTED_HINT
          script.async = false;
          script.onload = resolve;
          script.onerror = function () {
            reject(PhaseError("module", "the library file " + name + " did not load"));
          };
          document.head.appendChild(script);
        });
      })
    );
  }

  // Joins a relative specifier onto the importing file's folder ("src/a/b.tsx" +
  // "../c" -> "src/c"). Returns null when it climbs above the root.
  function joinPath(fromPath, spec) {
    var parts = spec.charAt(0) === "/" ? [] : fromPath.split("/").slice(0, -1);
    var segs = spec.split("/");
    for (var i = 0; i < segs.length; i++) {
      var seg = segs[i];
      if (seg === "" || seg === ".") continue;
      if (seg === "..") {
        if (!parts.length) return null;
        parts.pop();
      } else {
        parts.push(seg);
      }
    }
    return parts.join("/");
  }

  var RESOLVE_EXTS = [".tsx", ".ts", ".jsx", ".js", ".json", ".css"];

  function resolveFile(files, base) {
    if (base === null) return null;
    var has = function (p) {
      return Object.prototype.hasOwnProperty.call(files, p);
    };
    if (base && has(base)) return base;
    var i;
    for (i = 0; i < RESOLVE_EXTS.length; i++) if (has(base + RESOLVE_EXTS[i])) return base + RESOLVE_EXTS[i];
    var dir = base ? base + "/index" : "index";
    for (i = 0; i < RESOLVE_EXTS.length; i++) if (has(dir + RESOLVE_EXTS[i])) return dir + RESOLVE_EXTS[i];
    return null;
  }

  // What Node gives a package and a browser does not: `process.env.NODE_ENV` decides which
  // build many packages load (the production one, here), `global` is the window.
  var PROCESS = Object.freeze({
    env: Object.freeze({NODE_ENV: "production"}),
    browser: true,
    platform: "browser",
    argv: [],
    version: "",
    versions: {},
    cwd: function () {
      return "/";
    },
    nextTick: function (fn) {
      var args = Array.prototype.slice.call(arguments, 1);
      queueMicrotask(function () {
        fn.apply(null, args);
      });
    },
  });

  function createLoader(files, compiled, packages) {
    var cache = Object.create(null);
    var packageCache = Object.create(null);
    var known = builtins();

    // A module of a registry package: its code was made ready on the server (ES modules turned
    // into CommonJS by this same Sucrase), and each specifier it requires already resolved.
    function loadPackage(id) {
      if (packageCache[id]) return packageCache[id].exports;
      var entry = packages.modules[id];
      if (!entry) throw PhaseError("module", "the package module " + id + " is missing");
      var module = {exports: {}};
      packageCache[id] = module;
      if (entry.type === "css") {
        var style = document.createElement("style");
        style.setAttribute("data-package", entry.name);
        style.textContent = entry.code;
        document.head.appendChild(style);
      } else if (entry.type === "json") {
        module.exports = JSON.parse(entry.code);
      } else {
        var fn = (0, eval)(
          "(function (require, module, exports, process, global, __filename, __dirname) {" +
            entry.code +
            "\n})\n//# sourceURL=osf-package:///" +
            encodeURI(entry.name)
        );
        var file = "/node_modules/" + entry.name;
        fn.call(module.exports, packageRequire(entry), module, module.exports, PROCESS, window, file,
          file.slice(0, file.lastIndexOf("/")));
      }
      return module.exports;
    }

    function packageRequire(entry) {
      return function require(spec) {
        spec = String(spec);
        var dep = hasOwn(entry.deps, spec) ? entry.deps[spec] : null;
        if (dep === null) {
          throw PhaseError("module", "module '" + spec + "' is not available in the Room (required by " + entry.name + ")");
        }
        if (dep === "empty:") return {};
        if (dep.indexOf("runtime:") === 0) return known[dep.slice(8)];
        return loadPackage(dep);
      };
    }

    function load(path) {
      if (cache[path]) return cache[path].exports; // also breaks import cycles, as in CommonJS
      var module = {exports: {}};
      cache[path] = module;
      var source = files[path];
      if (/\.css$/.test(path)) {
        var style = document.createElement("style");
        style.setAttribute("data-file", path);
        if (asksForTailwind(source)) {
          style.type = "text/tailwindcss"; // not applied as it is: Tailwind's runtime reads it
          source = tailwindSource(source);
        }
        style.textContent = source; // allowed by style-src 'unsafe-inline'
        document.head.appendChild(style);
      } else if (/\.json$/.test(path)) {
        try {
          module.exports = JSON.parse(source);
        } catch (err) {
          throw PhaseError("compile", path + ": invalid JSON: " + errorText(err), path);
        }
      } else if (CODE_EXT.test(path)) {
        var code = compiled[path] || (compiled[path] = compile(path, source));
        // The wrapper starts on the code's first line so stack-trace line numbers
        // match the source (Sucrase keeps lines aligned). Needs 'unsafe-eval'.
        var fn = (0, eval)(
          "(function (require, module, exports) {" + code + "\n})\n//# sourceURL=osf-app:///" + encodeURI(path)
        );
        fn.call(module.exports, makeRequire(path), module, module.exports);
      } else {
        throw PhaseError("module", "cannot import '" + path + "': unsupported file type", path);
      }
      return module.exports;
    }

    function makeRequire(fromPath) {
      return function require(spec) {
        spec = String(spec);
        if (Object.prototype.hasOwnProperty.call(known, spec)) return known[spec];
        if (hasOwn(packages.imports, spec)) return loadPackage(packages.imports[spec]);
        if (isLibrary(spec)) return window.OsfLibraries.require(spec);
        if (spec.charAt(0) === "." || spec.charAt(0) === "/") {
          var target = resolveFile(files, joinPath(fromPath, spec));
          if (target === null) {
            throw PhaseError("module", "cannot find '" + spec + "' (imported from " + fromPath + ")", fromPath);
          }
          return load(target);
        }
        // Bare specifier: only React, the curated libraries and package.json's packages exist.
        throw PhaseError("module", "module '" + spec + "' is not available", fromPath);
      };
    }

    return load;
  }

  // ---------------------------------------------------------------- storage

  var storageCalls = Object.create(null);
  var nextStorageId = 1;

  function storageRequest(op, key, value) {
    if (!storageOn) return Promise.reject(new Error("Storage is off in preview"));
    if (op !== "keys" && typeof key !== "string") {
      return Promise.reject(new TypeError("storage key must be a string"));
    }
    var msg = {type: "osf:storage", id: nextStorageId++, op: op};
    if (op !== "keys") msg.key = key;
    if (op === "set") {
      var json;
      try {
        json = JSON.stringify(value);
      } catch (err) {
        return Promise.reject(new TypeError("storage value must be JSON-serialisable: " + errorText(err)));
      }
      if (json === undefined) return Promise.reject(new TypeError("storage value must be JSON-serialisable"));
      // Send the JSON round-trip, so what `get` returns later is what JSON kept.
      msg.value = JSON.parse(json);
    }
    return new Promise(function (resolve, reject) {
      var timer = setTimeout(function () {
        delete storageCalls[msg.id];
        reject(new Error("Storage did not answer"));
      }, STORAGE_TIMEOUT_MS);
      storageCalls[msg.id] = {resolve: resolve, reject: reject, timer: timer};
      post(msg);
    });
  }

  function onStorageResult(data) {
    var call = storageCalls[data.id];
    if (!call) return;
    delete storageCalls[data.id];
    clearTimeout(call.timer);
    if (data.ok) call.resolve(data.value === undefined ? null : data.value);
    else call.reject(new Error(typeof data.error === "string" ? data.error : "Storage error"));
  }

  window.osfoundry = Object.freeze({
    storage: Object.freeze({
      get: function (key) {
        return storageRequest("get", key);
      },
      set: function (key, value) {
        return storageRequest("set", key, value).then(function () {});
      },
      remove: function (key) {
        return storageRequest("remove", key).then(function () {});
      },
      keys: function () {
        return storageRequest("keys");
      },
    }),
  });

  // ------------------------------------------------------------------ run

  function now() {
    return performance.now();
  }

  function run(data) {
    var files = data.files;
    var entry = data.entry;
    var packages = data.packages;
    if (!packages || typeof packages !== "object" || !packages.imports || !packages.modules) {
      packages = {imports: {}, modules: {}};
    }
    storageOn = data.storage === true;
    if (!files || typeof files !== "object" || typeof entry !== "string") {
      reportError("module", "The run message has no files or entry.");
      return;
    }
    if (!window.Sucrase || !window.OsfReact) {
      reportError("compile", "The runtime files (Sucrase, React) did not load.");
      return;
    }
    if (!Object.prototype.hasOwnProperty.call(files, entry)) {
      reportError("module", "The entry file '" + entry + "' is missing.", entry);
      return;
    }

    // Compile every code file up front: all syntax errors are reported together,
    // and the "compile" phase is clearly separate from running module code.
    var t0 = now();
    var compiled = Object.create(null);
    var problems = [];
    Object.keys(files)
      .sort()
      .forEach(function (path) {
        if (!CODE_EXT.test(path) || typeof files[path] !== "string") return;
        try {
          compiled[path] = compile(path, files[path]);
        } catch (err) {
          problems.push(err);
        }
      });
    var compileMs = Math.round((now() - t0) * 10) / 10;
    if (problems.length) {
      reportError(
        "compile",
        problems
          .map(function (e) {
            return e.message;
          })
          .join("\n\n"),
        problems[0].osfFile
      );
      return;
    }

    // Load the libraries the app imports, then evaluate modules, starting at the entry.
    var t0Load = now();
    loadLibraries(librariesFor(files, compiled, entry, packages)).then(
      function () {
        var times = {compile_ms: compileMs, load_ms: Math.round((now() - t0Load) * 10) / 10};
        evaluate(files, compiled, entry, packages, times);
      },
      function (err) {
        reportError("module", err.message);
      }
    );
  }

  function evaluate(files, compiled, entry, packages, times) {
    var t1 = now();
    var App;
    try {
      var exports = createLoader(files, compiled, packages)(entry);
      App = exports && exports.default;
      var renderable =
        typeof App === "function" || (App !== null && typeof App === "object" && "$$typeof" in App);
      if (!renderable) {
        throw PhaseError("module", entry + " has no default export to render (export default function App() {...})", entry);
      }
    } catch (err) {
      reportError(err.osfPhase || "module", err.osfPhase ? err.message : errorText(err), err.osfFile);
      return;
    }

    mount(App, times, t1);
  }

  function mount(App, times, t1) {
    var React = window.OsfReact.react;
    var h = React.createElement;
    var failed = false;

    // Keeps a render error from blanking the page silently: the fallback is empty
    // and the error panel (plain text) explains what happened.
    class ErrorBoundary extends React.Component {
      constructor(props) {
        super(props);
        this.state = {error: null};
      }
      static getDerivedStateFromError(error) {
        return {error: error};
      }
      render() {
        return this.state.error ? null : this.props.children;
      }
    }

    function onRootError(error) {
      failed = true;
      reportError("runtime", errorText(error));
    }

    var rootEl = document.getElementById("root");
    if (!rootEl) {
      rootEl = document.createElement("div");
      rootEl.id = "root";
      document.body.appendChild(rootEl);
    }
    try {
      var root = window.OsfReact.reactDomClient.createRoot(rootEl, {
        onCaughtError: onRootError, // caught by our boundary
        onUncaughtError: onRootError,
      });
      // flushSync: render (and run the first effects) now, so we know whether it
      // mounted before telling the parent.
      window.OsfReact.reactDom.flushSync(function () {
        root.render(h(ErrorBoundary, null, h(App)));
      });
    } catch (err) {
      if (!failed) reportError("runtime", errorText(err));
      return;
    }
    if (!failed) {
      post({
        type: "osf:mounted",
        compile_ms: times.compile_ms,
        load_ms: times.load_ms,
        mount_ms: Math.round((now() - t1) * 10) / 10,
      });
    }
  }

  // --------------------------------------------------------------- wiring

  // This page's origin is opaque, so every script is cross-origin to it: without
  // CORS (crossorigin="anonymous" + Access-Control-Allow-Origin) the browser hides
  // error details ("Script error.") and never fires unhandledrejection.
  var MUTED_HINT =
    " (error details hidden by the browser: load the runtime scripts with crossorigin=\"anonymous\")";
  if (document.currentScript && !document.currentScript.crossOrigin && window.console) {
    console.warn("frame-runtime.js: load the runtime scripts with crossorigin=\"anonymous\"" + MUTED_HINT);
  }

  // Errors from event handlers, timers and promises after mount.
  window.addEventListener("error", function (event) {
    if (!started) return;
    if (event.error) reportError("runtime", errorText(event.error));
    else reportError("runtime", String(event.message || "Script error.") + MUTED_HINT);
  });
  window.addEventListener("unhandledrejection", function (event) {
    if (!started) return;
    reportError("runtime", "Unhandled promise rejection: " + errorText(event.reason));
  });

  window.addEventListener("message", function (event) {
    // Only the embedding console page may drive this frame.
    if (event.source !== parentWin || event.source === window) return;
    var data = event.data;
    if (!data || typeof data !== "object") return;
    if (data.type === "osf:run") {
      if (started) return;
      started = true;
      run(data);
    } else if (data.type === "osf:storage-result") {
      onStorageResult(data);
    }
  });

  post({type: "osf:ready"});
})();

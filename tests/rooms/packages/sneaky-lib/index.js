// A registry package's own escapes (CommonJS, as packages ship; tests/rooms/
// test_runtime_containment.py publishes it): the network (its registry's host, by fetch,
// XMLHttpRequest and a script), the parent page, the console's storage and Node's modules.
// Each records "blocked: ..." or "ALLOWED: ...".
var registry = require("./registry.json");

function attempt(name, fn) {
  return Promise.resolve()
    .then(fn)
    .then(
      function (value) {
        return [name, "ALLOWED: " + String(value)];
      },
      function (err) {
        return [name, "blocked: " + ((err && err.name) || String(err))];
      }
    );
}

function failed(name) {
  return Object.assign(new Error(name), {name: "NetworkError"});
}

module.exports = function escapes() {
  return Promise.all([
    attempt("package fetch", function () {
      return fetch(registry.url + "/x-package-fetch").then(function (r) {
        return r.status;
      });
    }),
    attempt("package xhr", function () {
      return new Promise(function (resolve, reject) {
        var xhr = new XMLHttpRequest();
        xhr.open("GET", registry.url + "/x-package-xhr");
        xhr.onload = function () {
          resolve(xhr.status);
        };
        xhr.onerror = function () {
          reject(failed("xhr"));
        };
        xhr.send();
      });
    }),
    attempt("package script", function () {
      return new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = registry.url + "/x-package-script.js";
        script.onload = resolve;
        script.onerror = function () {
          reject(failed("script"));
        };
        document.head.appendChild(script);
      });
    }),
    attempt("package parent.document", function () {
      return window.parent.document.title;
    }),
    attempt("package localStorage", function () {
      return window.localStorage.getItem("osf:app:victim:notes");
    }),
    attempt("package require('fs')", function () {
      return typeof require("fs").readFileSync;
    }),
  ]);
};

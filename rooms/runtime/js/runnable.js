// What the Room's browser runtime will do with an app's files, found by the same compiler.
//
// Runs in the server's embedded V8 (rooms/runtime/jsengine.py), never in a browser, after
// static/vendor/sucrase/sucrase.js (window.Sucrase: the very file the app frame compiles with)
// and rooms/runtime/js/vendor/sucrase-parser/sucrase-parser.js (Sucrase's own tokenizer). It reports
// facts about each file; the rules (which imports resolve, what each problem says) are in
// rooms/runtime/runnable.py. tests/rooms/runtime/test_runnable_parity.py holds this and the frame together.
//
// check(JSON text of {path: text}) -> JSON text: {path: facts}, where facts is one of
//   {compile: {message, line, column}}         Sucrase refused the file
//   {syntax: message, code}                    Sucrase's output (code) is not valid JavaScript
//   {requires: [[spec, line, column], ...], default_export: bool}   a compiled code file
//   {json: null | {message, line, column}}     a .json file and JSON.parse's verdict
// Errors are caught here: the caller gets plain JSON, never a chunk of the minified bundle.
var OsfRunnable = (function () {
  "use strict";

  // Same as static/rooms/frame-runtime.js: CODE_EXT, transformsFor and the options of compile().
  var CODE_EXT = /\.(tsx|ts|jsx|js|mjs)$/;

  function transformsFor(path) {
    if (/\.(ts|mts)$/.test(path)) return ["typescript", "imports"];
    if (/\.tsx$/.test(path)) return ["typescript", "jsx", "imports"];
    return ["jsx", "imports"];
  }

  function compile(path, source) {
    return window.Sucrase.transform(source, {
      transforms: transformsFor(path),
      jsxRuntime: "automatic",
      production: true,
      filePath: path,
    }).code;
  }

  var tt = OsfSucraseParser.TokenType;
  var current = null; // the file being checked, for the caller to name after a timeout

  function errorText(err) {
    return err && typeof err.message === "string" ? err.message : String(err);
  }

  // "Error transforming src/App.tsx: Unexpected token (3:5)" -> "Unexpected token", as the
  // frame shows it; Sucrase's loc is 1-based, columns in UTF-16 units.
  function compileError(err) {
    var message = errorText(err)
      .replace(/^Error transforming [^:]*: /, "")
      .replace(/ \(\d+:\d+\)$/, "");
    var loc = err && err.loc;
    if (!loc || typeof loc.line !== "number") return {message: message, line: 1, column: 1};
    return {message: message, line: loc.line, column: loc.column};
  }

  // The frame wraps the output in `(function (require, module, exports) {...})` and evaluates
  // it; this parses the same body without running anything.
  function syntaxError(code) {
    try {
      new Function("require", "module", "exports", code);
      return null;
    } catch (err) {
      return errorText(err);
    }
  }

  var SINGLE = /^'(?:[^'\\\n\r]|\\[\s\S])*'$/;
  var DOUBLE = /^"(?:[^"\\\n\r]|\\[\s\S])*"$/;

  // A string token's value. The patterns admit one literal and nothing else, so evaluating it
  // runs no code.
  function stringValue(raw) {
    if (raw.indexOf("\\") < 0) return raw.slice(1, -1);
    return SINGLE.test(raw) || DOUBLE.test(raw) ? (0, eval)(raw) : null;
  }

  function textOf(code, token) {
    return code.slice(token.start, token.end);
  }

  // The specifier of the require(...) call whose `require` token is tokens[i], or null.
  function requiredSpec(code, tokens, i) {
    var prev = tokens[i - 1];
    if (prev && (prev.type === tt.dot || prev.type === tt.questionDot)) return null;
    var next = tokens[i + 1];
    if (!next || next.type !== tt.parenL) return null;
    var arg = tokens[i + 2];
    if (arg && arg.type === tt.string && tokens[i + 3] && tokens[i + 3].type === tt.parenR) {
      return {raw: textOf(code, arg), spec: stringValue(textOf(code, arg))};
    }
    var quasi = tokens[i + 3];
    if (arg && arg.type === tt.backQuote && quasi && quasi.type === tt.template) {
      var close = tokens[i + 4];
      if (close && close.type === tt.backQuote && tokens[i + 5].type === tt.parenR) {
        var text = textOf(code, quasi);
        return text.indexOf("\\") < 0 ? {raw: "`" + text + "`", spec: text} : null;
      }
    }
    return null;
  }

  function lineStarts(text) {
    var starts = [0];
    for (var i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
    return starts;
  }

  function lineOf(starts, offset) {
    var lo = 0;
    var hi = starts.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo; // 0-based
  }

  // Where the import stands in the source: its specifier, quoted as written or as Sucrase
  // re-quotes it. Sucrase keeps every line where it was, and puts an import's require(...) on
  // the line of its specifier, so look there first, then further on, then before.
  function sourcePosition(source, sourceStarts, line, call) {
    var from = sourceStarts[Math.min(line, sourceStarts.length - 1)];
    var quoted = [call.raw, "'" + call.spec + "'", '"' + call.spec + '"'];
    var at = -1;
    quoted.forEach(function (text) {
      var found = source.indexOf(text, from);
      if (found >= 0 && (at < 0 || found < at)) at = found;
    });
    if (at < 0) {
      quoted.forEach(function (text) {
        at = Math.max(at, source.lastIndexOf(text, from));
      });
    }
    if (at < 0) return [line + 1, 1];
    var found = lineOf(sourceStarts, at);
    return [found + 1, at - sourceStarts[found] + 1];
  }

  function requiresOf(code, tokens, source) {
    var found = [];
    var starts = null;
    var sourceStarts = null;
    for (var i = 0; i < tokens.length; i++) {
      var token = tokens[i];
      if (token.type !== tt.name || token.end - token.start !== 7) continue;
      if (textOf(code, token) !== "require") continue;
      var call = requiredSpec(code, tokens, i);
      if (!call || call.spec === null) continue;
      starts = starts || lineStarts(code);
      sourceStarts = sourceStarts || lineStarts(source);
      var at = sourcePosition(source, sourceStarts, lineOf(starts, token.start), call);
      found.push([call.spec, at[0], at[1]]);
    }
    return found;
  }

  function isText(code, token, text) {
    return !!token && textOf(code, token) === text;
  }

  // The forms Sucrase's output takes for a default export: `exports.default = ...`, and
  // `_createNamedExportFrom(_x, 'default', ...)` for `export {default} from './x'`.
  function hasDefaultExport(code, tokens) {
    for (var i = 0; i < tokens.length; i++) {
      var token = tokens[i];
      if (token.type !== tt.name) continue;
      var name = textOf(code, token);
      if (name === "exports" && tokens[i + 1] && tokens[i + 1].type === tt.dot) {
        if (isText(code, tokens[i + 2], "default") && tokens[i + 3].type === tt.eq) return true;
      } else if (name.indexOf("_createNamedExportFrom") === 0 && tokens[i + 3]) {
        var local = tokens[i + 4];
        if (local && local.type === tt.string && stringValue(textOf(code, local)) === "default") {
          return true;
        }
      }
    }
    return false;
  }

  function checkCode(path, source) {
    var code;
    try {
      code = compile(path, source);
    } catch (err) {
      return {compile: compileError(err)};
    }
    var syntax = syntaxError(code);
    if (syntax !== null) return {syntax: syntax, code: code};
    var tokens;
    try {
      tokens = OsfSucraseParser.parse(code, false, false, false).tokens;
    } catch (err) {
      return {syntax: errorText(err), code: code};
    }
    return {requires: requiresOf(code, tokens, source), default_export: hasDefaultExport(code, tokens)};
  }

  // V8 says "Expected ',' or '}' after property value in JSON at position 9 (line 2 column 1)",
  // or "Unexpected token '}', "...source..." is not valid JSON" without a position (then
  // rooms/runtime/runnable.py locates it).
  function checkJson(source) {
    try {
      JSON.parse(source);
      return {json: null};
    } catch (err) {
      var message = errorText(err);
      var where = /\(line (\d+) column (\d+)\)$/.exec(message);
      message = message
        .replace(/ in JSON at position \d+ \(line \d+ column \d+\)$/, "")
        .replace(/, "[\s\S]*" is not valid JSON$/, "");
      return {
        json: {
          message: message,
          line: where ? Number(where[1]) : null,
          column: where ? Number(where[2]) : null,
        },
      };
    }
  }

  function check(filesJson) {
    var files = JSON.parse(filesJson);
    var out = {};
    Object.keys(files)
      .sort()
      .forEach(function (path) {
        current = path;
        if (CODE_EXT.test(path)) out[path] = checkCode(path, files[path]);
        else if (/\.json$/.test(path)) out[path] = checkJson(files[path]);
      });
    current = null;
    return JSON.stringify(out);
  }

  return Object.freeze({
    check: check,
    current: function () {
      return current;
    },
  });
})();

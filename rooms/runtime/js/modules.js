// The files of npm packages, made ready for the frame's module loader, once, on the server.
//
// Runs in the server's embedded V8 (rooms/runtime/jsengine.py) after sucrase.js and Sucrase's tokenizer
// (see runnable.js). rooms/registry/modules.py hands it the package files an app's imports
// reach; for each it answers what the frame will run and what that code requires:
//
// prepare(JSON text of {id: source}) -> JSON text: {id: facts}, where facts is one of
//   {esm: true, code, requires: [spec, ...]}   an ES module, turned into CommonJS by the
//                                              frame's own Sucrase (the imports transform only)
//   {esm: false, requires: [spec, ...]}        CommonJS, run as it is (no "use strict" added:
//                                              sloppy-mode code stays sloppy)
//   {syntax: message}                          what the frame could not run (import.meta,
//                                              top-level await, a syntax error)
//
// The frame wraps each module as (function (require, module, exports, process, global,
// __filename, __dirname) {...}); the syntax check parses the same body.
var OsfModules = (function () {
  "use strict";

  var tt = OsfSucraseParser.TokenType;
  // The frame's REQUIRE_CALL: the fallback for code Sucrase's tokenizer does not take (a `with`
  // statement, an HTML comment: sloppy CommonJS).
  var REQUIRE_CALL = /(^|[^.\w$])require\s*\(\s*('(?:[^'\\\n\r]|\\[\s\S])*'|"(?:[^"\\\n\r]|\\[\s\S])*"|`[^`\\$]*`)\s*\)/g;
  var SINGLE = /^'(?:[^'\\\n\r]|\\[\s\S])*'$/;
  var DOUBLE = /^"(?:[^"\\\n\r]|\\[\s\S])*"$/;

  function errorText(err) {
    return err && typeof err.message === "string" ? err.message : String(err);
  }

  // A string literal's value; the patterns admit one literal and nothing else.
  function stringValue(raw) {
    if (raw.charAt(0) === "`") return raw.indexOf("\\") < 0 ? raw.slice(1, -1) : null;
    if (raw.indexOf("\\") < 0) return raw.slice(1, -1);
    return SINGLE.test(raw) || DOUBLE.test(raw) ? (0, eval)(raw) : null;
  }

  function tokensOf(code) {
    try {
      return OsfSucraseParser.parse(code, false, false, false).tokens;
    } catch (err) {
      return null;
    }
  }

  function isModule(code, tokens) {
    for (var i = 0; i < tokens.length; i++) {
      var type = tokens[i].type;
      if (type === tt._export) return true;
      if (type === tt._import) {
        var next = tokens[i + 1];
        if (!next || (next.type !== tt.parenL && next.type !== tt.dot)) return true;
      }
    }
    return false;
  }

  function requiresFromTokens(code, tokens) {
    var found = [];
    for (var i = 0; i < tokens.length; i++) {
      var token = tokens[i];
      if (token.type !== tt.name || token.end - token.start !== 7) continue;
      if (code.slice(token.start, token.end) !== "require") continue;
      var prev = tokens[i - 1];
      if (prev && (prev.type === tt.dot || prev.type === tt.questionDot)) continue;
      if (!tokens[i + 1] || tokens[i + 1].type !== tt.parenL) continue;
      var arg = tokens[i + 2];
      if (arg && arg.type === tt.string && tokens[i + 3] && tokens[i + 3].type === tt.parenR) {
        var spec = stringValue(code.slice(arg.start, arg.end));
        if (spec !== null && found.indexOf(spec) < 0) found.push(spec);
      } else if (arg && arg.type === tt.backQuote && tokens[i + 3] && tokens[i + 3].type === tt.template) {
        var close = tokens[i + 4];
        if (close && close.type === tt.backQuote && tokens[i + 5] && tokens[i + 5].type === tt.parenR) {
          var text = code.slice(tokens[i + 3].start, tokens[i + 3].end);
          if (text.indexOf("\\") < 0 && text.indexOf("${") < 0 && found.indexOf(text) < 0) found.push(text);
        }
      }
    }
    return found;
  }

  function requiresFromText(code) {
    var found = [];
    var match;
    REQUIRE_CALL.lastIndex = 0;
    while ((match = REQUIRE_CALL.exec(code))) {
      var spec = stringValue(match[2]);
      if (spec !== null && found.indexOf(spec) < 0) found.push(spec);
    }
    return found;
  }

  function syntaxError(code) {
    try {
      new Function("require", "module", "exports", "process", "global", "__filename", "__dirname", code);
      return null;
    } catch (err) {
      return errorText(err);
    }
  }

  function prepareOne(source) {
    var tokens = tokensOf(source);
    if (tokens && isModule(source, tokens)) {
      var code;
      try {
        code = window.Sucrase.transform(source, {transforms: ["imports"], production: true}).code;
      } catch (err) {
        return {syntax: errorText(err).replace(/^Error transforming [^:]*: /, "")};
      }
      var syntax = syntaxError(code);
      if (syntax !== null) return {syntax: syntax};
      var compiled = tokensOf(code);
      return {esm: true, code: code, requires: compiled ? requiresFromTokens(code, compiled) : requiresFromText(code)};
    }
    var problem = syntaxError(source);
    if (problem !== null) return {syntax: problem};
    return {esm: false, requires: tokens ? requiresFromTokens(source, tokens) : requiresFromText(source)};
  }

  var current = null;

  function prepare(sourcesJson) {
    var sources = JSON.parse(sourcesJson);
    var out = {};
    Object.keys(sources).forEach(function (id) {
      current = id;
      out[id] = prepareOne(sources[id]);
    });
    current = null;
    return JSON.stringify(out);
  }

  return Object.freeze({
    prepare: prepare,
    current: function () {
      return current;
    },
  });
})();

// Entry for rooms/runtime/js/vendor/sucrase-parser/sucrase-parser.js: Sucrase's own tokenizer, for the server only.
// rooms/runtime/js/runnable.js lists a compiled file's `require(...)` calls with it (exact where a
// regular expression is fooled by strings, comments and templates). The compiler itself is
// static/vendor/sucrase/sucrase.js, the very file the browser frame runs; this bundle comes
// from the same package and lock file.
import {parse} from "sucrase/dist/parser";
import {TokenType} from "sucrase/dist/parser/tokenizer/types";

globalThis.OsfSucraseParser = Object.freeze({parse, TokenType});

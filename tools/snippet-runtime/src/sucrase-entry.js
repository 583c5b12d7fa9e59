// Entry for static/vendor/sucrase/sucrase.js: exposes the one function the
// snippet frame needs (plus getVersion for diagnostics) as window.Sucrase.
import {transform, getVersion} from "sucrase";

window.Sucrase = Object.freeze({transform, getVersion});

// The curated library set: what an approved app may import besides React and its own files.
//
// Each entry is one bundle under static/vendor/libs/<file>/<file>.js (React external, mapped
// onto the vendored window.OsfReact). It registers the module specifiers listed here with the
// frame's loader (OsfLibraries.define in static/rooms/frame-runtime.js), each a function that
// returns what require(specifier) returns under a bundler, evaluated on first use. build.mjs
// writes static/vendor/libraries.json from this list: the one manifest the frame's loader and
// the server's run check (rooms/runtime/libraries.py) both read.
//
// The subpath rule: a specifier exists only if it is listed (no extension guessing, no deep
// imports of a package's files). A subpath is one the package itself exports:
//   lodash/<function>     each of lodash's per-method modules that lodash also has as _.<function>
//                         (lodash/debounce is _.debounce from the same bundle: no second copy)
//   date-fns/<function>   each function module of date-fns's exports map, and date-fns/constants
//   date-fns/locale, date-fns/locale/<code>   a second file, loaded only by apps that use a locale
//   chart.js/auto, chart.js/helpers, zustand/middleware, zustand/shallow, zustand/vanilla,
//   zustand/react/shallow, zustand/vanilla/shallow, three/addons/controls/OrbitControls.js
// and nothing else (no lodash/fp, date-fns/fp, mathjs/number, lucide-react/icons/*).
import {readdirSync, readFileSync} from "node:fs";
import {createRequire} from "node:module";
import {join} from "node:path";

const require = createRequire(import.meta.url);

function pkgDir(name) {
  return join(import.meta.dirname, "node_modules", name);
}

function lodashFunctions() {
  const lodash = require("lodash");
  return readdirSync(pkgDir("lodash"))
    .filter((f) => f.endsWith(".js") && !f.startsWith("_"))
    .map((f) => f.slice(0, -3))
    .filter((name) => typeof lodash[name] === "function")
    .sort();
}

function dateFnsExports(filter) {
  const exportsMap = JSON.parse(readFileSync(join(pkgDir("date-fns"), "package.json"), "utf8")).exports;
  return Object.keys(exportsMap)
    .filter((key) => key !== "./package.json")
    .map((key) => (key === "." ? "date-fns" : "date-fns/" + key.slice(2)))
    .filter(filter)
    .sort();
}

const isLocale = (spec) => spec === "date-fns/locale" || spec.startsWith("date-fns/locale/");
const isFp = (spec) => spec === "date-fns/fp" || spec.startsWith("date-fns/fp/");

// modules: {specifier: what require(specifier) returns}: {esm: "x"} is the ES module x as a
// bundler hands it to an import (its namespace, marked __esModule, so `import x from` gets its
// default export); {cjs: "x", pick: "name"} is CommonJS module x's exports (or one of them), as
// a bundler hands a CommonJS package to an import; {value: "js"} is what the expression gives.
// externals: {import specifier inside the library: curated specifier it resolves to}.
// requires: files that must be loaded before this one (their modules are its externals).
// note: how the refusal of an unknown subpath and the docs name the subpaths (default: listed).
export function libraries() {
  const lodash = lodashFunctions();
  const dateFns = dateFnsExports((spec) => !isLocale(spec) && !isFp(spec));
  const locales = dateFnsExports(isLocale);
  const esm = (...specs) => Object.fromEntries(specs.map((spec) => [spec, {esm: spec}]));
  return [
    {file: "chartjs", package: "chart.js", modules: esm("chart.js", "chart.js/auto", "chart.js/helpers")},
    {file: "clsx", package: "clsx", modules: esm("clsx")},
    {file: "d3", package: "d3", modules: esm("d3")},
    {file: "date-fns", package: "date-fns", modules: esm(...dateFns), note: "date-fns/<function>"},
    {
      file: "date-fns-locale",
      package: "date-fns",
      modules: esm(...locales),
      note: "date-fns/locale, date-fns/locale/<code>",
    },
    {file: "framer-motion", package: "framer-motion", modules: esm("framer-motion")},
    {
      file: "lodash",
      package: "lodash",
      modules: {
        lodash: {cjs: "lodash"},
        ...Object.fromEntries(lodash.map((name) => [`lodash/${name}`, {cjs: "lodash", pick: name}])),
      },
      note: "lodash/<function>",
    },
    {file: "lucide-react", package: "lucide-react", modules: esm("lucide-react")},
    {file: "mathjs", package: "mathjs", modules: esm("mathjs")},
    {file: "papaparse", package: "papaparse", modules: {papaparse: {cjs: "papaparse"}}},
    {
      file: "react-chartjs-2",
      package: "react-chartjs-2",
      modules: esm("react-chartjs-2"),
      externals: {"chart.js": "chart.js"},
      requires: ["chartjs"],
    },
    {file: "recharts", package: "recharts", modules: esm("recharts")},
    // The Tailwind runtime: importing it (or a CSS file asking for it, see build.mjs) loads
    // @tailwindcss/browser, which builds the utilities the page's class names use.
    {
      file: "tailwindcss",
      package: "@tailwindcss/browser",
      modules: {tailwindcss: {value: "{}"}},
      entry: 'import "@tailwindcss/browser";',
    },
    {file: "three", package: "three", modules: esm("three")},
    {
      file: "three-orbit-controls",
      package: "three",
      modules: {
        "three/addons/controls/OrbitControls.js": {esm: "three/addons/controls/OrbitControls.js"},
        "three/examples/jsm/controls/OrbitControls.js": {esm: "three/addons/controls/OrbitControls.js"},
      },
      externals: {three: "three"},
      requires: ["three"],
    },
    {file: "uuid", package: "uuid", modules: esm("uuid")},
    {
      file: "zustand",
      package: "zustand",
      modules: esm(
        "zustand",
        "zustand/middleware",
        "zustand/react/shallow",
        "zustand/shallow",
        "zustand/vanilla",
        "zustand/vanilla/shallow"
      ),
    },
  ];
}

// A CSS file the app loads asks for Tailwind when it has Tailwind v4's `@import "tailwindcss"`
// or v3's `@tailwind base|components|utilities`: what a Vite or Sandpack project with Tailwind
// has in its index.css. Read by the frame (JavaScript) and the server (Python): keep it to
// syntax both regular expression engines read alike.
export const TAILWIND_CSS = String.raw`@import\s+(?:url\(\s*)?["']tailwindcss["']|@tailwind\s+(?:base|components|utilities)\b`;

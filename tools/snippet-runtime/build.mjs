// Builds the vendored bundles for the snippet runtime:
//   ../../static/vendor/sucrase/sucrase.js          (window.Sucrase, served to the app frame)
//   ../../static/vendor/react/react.js              (window.OsfReact, served to the app frame)
//   ../../static/vendor/libs/<file>/<file>.js       (the curated libraries, see libraries.mjs)
//   ../../static/vendor/libraries.json              (the manifest of the curated set)
//   ../../rooms/runtime/js/vendor/sucrase-parser/sucrase-parser.js  (OsfSucraseParser, server only)
// plus the LICENSE of every npm package that ends up inside a bundle and a VERSIONS.json in
// each output folder (packages, exact versions, sha256).
//
// Usage: npm ci --ignore-scripts && npm run build
// The output is deterministic: rebuilding from the same lock file gives
// byte-identical files (and therefore identical hashes in VERSIONS.json).
import {createHash} from "node:crypto";
import {copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {dirname, join, relative, resolve} from "node:path";
import {fileURLToPath} from "node:url";
import {gzipSync} from "node:zlib";
import * as esbuild from "esbuild";
import {TAILWIND_CSS, libraries} from "./libraries.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// Browser bundles go where collectstatic finds them; the server's own stay out of static/.
const vendorDir = resolve(here, "../../static/vendor");
const serverVendorDir = resolve(here, "../../rooms/runtime/js/vendor");

const bundles = [
  {
    name: "sucrase",
    root: vendorDir,
    entry: "src/sucrase-entry.js",
    out: "sucrase/sucrase.js",
    // The bundle's own package keeps the plain LICENSE name; its dependencies
    // get LICENSE-<package>.
    primary: "sucrase",
  },
  {
    name: "react",
    root: vendorDir,
    entry: "src/react-entry.js",
    out: "react/react.js",
    primary: null, // LICENSE-react, LICENSE-react-dom, LICENSE-scheduler
  },
  {
    name: "sucrase-parser",
    root: serverVendorDir,
    entry: "src/sucrase-parser-entry.js",
    out: "sucrase-parser/sucrase-parser.js",
    primary: "sucrase",
  },
];

const sha256 = (buf) => createHash("sha256").update(buf).digest("hex");

// "node_modules/@scope/pkg/dist/x.js" -> "@scope/pkg"
function packageOf(inputPath) {
  const parts = inputPath.split("/");
  const i = parts.lastIndexOf("node_modules");
  if (i < 0) return null; // our own entry file
  return parts[i + 1].startsWith("@") ? `${parts[i + 1]}/${parts[i + 2]}` : parts[i + 1];
}

function packageDir(pkg) {
  return join(here, "node_modules", pkg);
}

function licenseFileOf(pkg) {
  for (const name of ["LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "license"]) {
    const p = join(packageDir(pkg), name);
    if (existsSync(p)) return p;
  }
  // A package that ships its licence only inside its code or README: licenses/<package>, the
  // text taken from there (see licenses/README.md).
  const taken = join(here, "licenses", pkg.replace("/", "+"));
  if (existsSync(taken)) return taken;
  // Never ship code whose licence text we cannot ship alongside it.
  throw new Error(`no LICENSE file found for bundled package ${pkg}`);
}

// The React modules a library may import: the frame's one React (window.OsfReact), never a
// copy of its own (two Reacts break hooks).
const REACT_GLOBALS = {
  react: "react",
  "react-dom": "reactDom",
  "react-dom/client": "reactDomClient",
  "react/jsx-runtime": "jsxRuntime",
};

// Resolves React, and the curated libraries a library builds on (`externals`), to the frame's
// objects instead of bundling them.
function externalsPlugin(externals) {
  return {
    name: "osf-externals",
    setup(build) {
      build.onResolve({filter: /^react(-dom)?(\/.*)?$/}, (args) => {
        if (REACT_GLOBALS[args.path]) return {path: args.path, namespace: "osf-react"};
        return {errors: [{text: `${args.importer} imports ${args.path}, which the frame has no React module for`}]};
      });
      build.onResolve({filter: /.*/}, (args) =>
        Object.hasOwn(externals, args.path) ? {path: externals[args.path], namespace: "osf-library"} : undefined
      );
      build.onLoad({filter: /.*/, namespace: "osf-react"}, (args) => ({
        contents: `module.exports = window.OsfReact.${REACT_GLOBALS[args.path]};`,
      }));
      build.onLoad({filter: /.*/, namespace: "osf-library"}, (args) => ({
        contents: `module.exports = OsfLibraries.require(${JSON.stringify(args.path)});`,
      }));
    },
  };
}

// A library's entry: registers each of its specifiers with the frame's loader, as a function
// the loader runs on the first require. An ES module is handed over as a frozen copy of its
// namespace marked __esModule: what Sucrase's import helpers expect of a bundler's module.
function libraryEntry(library) {
  const imports = [];
  const names = new Map();
  const namespace = (spec) => {
    if (!names.has(spec)) {
      names.set(spec, `m${names.size}`);
      imports.push(`import * as ${names.get(spec)} from ${JSON.stringify(spec)};`);
    }
    return names.get(spec);
  };
  const expression = (module) => {
    if (module.esm) return `esModule(${namespace(module.esm)})`;
    if (module.cjs) return `require(${JSON.stringify(module.cjs)})` + (module.pick ? `.${module.pick}` : "");
    return module.value;
  };
  const modules = Object.entries(library.modules)
    .map(([spec, module]) => `  ${JSON.stringify(spec)}: function () { return ${expression(module)}; }`)
    .join(",\n");
  return [
    library.entry || "",
    ...imports,
    "function esModule(ns) {",
    "  var copy = Object.assign({}, ns);",
    '  Object.defineProperty(copy, "__esModule", {value: true});',
    "  return Object.freeze(copy);",
    "}",
    `OsfLibraries.define(${JSON.stringify(library.file)}, {\n${modules}\n});`,
    "",
  ].join("\n");
}

async function buildOne(bundle) {
  const outFile = join(bundle.root, bundle.out);
  const outDir = dirname(outFile);
  // Only this bundle's folder is replaced, so stale licence files disappear
  // and other vendored libraries under static/vendor are left alone.
  rmSync(outDir, {recursive: true, force: true});
  mkdirSync(outDir, {recursive: true});

  const source = bundle.contents
    ? {stdin: {contents: bundle.contents, resolveDir: here, sourcefile: `${bundle.name}-entry.js`}}
    : {entryPoints: [bundle.entry]};
  const result = await esbuild.build({
    ...source,
    absWorkingDir: here,
    outfile: outFile,
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["es2020"],
    minify: true,
    legalComments: "eof",
    charset: "utf8",
    define: {"process.env.NODE_ENV": '"production"'},
    plugins: bundle.externals ? [externalsPlugin(bundle.externals)] : [],
    metafile: true,
    logLevel: "warning",
  });

  // Which npm packages actually ended up in the bundle (after tree shaking).
  const inputs = result.metafile.outputs[relative(here, outFile)].inputs;
  const pkgs = [...new Set(Object.keys(inputs).map(packageOf).filter(Boolean))].sort();
  if (bundle.externals && pkgs.some((pkg) => pkg in REACT_GLOBALS || pkg === "scheduler")) {
    throw new Error(`${bundle.out} bundles its own React`);
  }
  const packages = {};
  const licenses = [];
  for (const pkg of pkgs) {
    const meta = JSON.parse(readFileSync(join(packageDir(pkg), "package.json"), "utf8"));
    packages[pkg] = meta.version;
    const licenseName = pkg === bundle.primary ? "LICENSE" : `LICENSE-${pkg.replace(/^@/, "").replace(/[/.]/g, "-")}`;
    copyFileSync(licenseFileOf(pkg), join(outDir, licenseName));
    licenses.push({file: relative(bundle.root, join(outDir, licenseName)), package: pkg, license: meta.license});
  }

  const bytes = readFileSync(outFile);
  // Guard against a production bundle that still reads process.* at run time
  // (the frame has no `process`).
  if (/\bprocess\.env\b/.test(bytes.toString("utf8"))) {
    throw new Error(`${bundle.out} still references process.env`);
  }
  return {
    root: bundle.root,
    file: bundle.out,
    entry: {
      packages,
      sha256: sha256(bytes),
      bytes: bytes.length,
      licenses: licenses.map((l) => ({...l, sha256: sha256(readFileSync(join(bundle.root, l.file)))})),
    },
    gzipBytes: gzipSync(bytes, {level: 9}).length,
  };
}

// static/vendor/libraries.json: what exists (specifier -> file), and each file's package,
// version, licence, size and hash. The frame page embeds it for the frame's loader and the
// server's run check reads it (rooms/runtime/libraries.py), so the two cannot disagree.
function writeManifest(curated, built) {
  const files = {};
  const packages = {};
  for (const library of curated) {
    const {file, entry, gzipBytes} = built.get(library.file);
    const meta = JSON.parse(readFileSync(join(packageDir(library.package), "package.json"), "utf8"));
    files[library.file] = {
      path: file,
      package: library.package,
      bytes: entry.bytes,
      gzip_bytes: gzipBytes,
      sha256: entry.sha256,
      requires: library.requires || [],
      modules: Object.keys(library.modules).sort(),
    };
    // How the docs and a refusal name what the package offers: its specifiers, or a pattern.
    const known = packages[library.package] || {version: meta.version, license: meta.license, files: [], imports: []};
    known.files.push(library.file);
    const specs = Object.keys(library.modules).sort((a, b) => (a === library.package ? -1 : b === library.package ? 1 : a < b ? -1 : 1));
    if (library.note) known.imports.push(...specs.filter((spec) => spec === library.package), library.note);
    else known.imports.push(...specs);
    packages[library.package] = known;
  }
  const sorted = (object) => Object.fromEntries(Object.keys(object).sort().map((key) => [key, object[key]]));
  const manifest = {
    built_by: "tools/snippet-runtime (npm ci --ignore-scripts && npm run build), from libraries.mjs",
    packages: sorted(packages),
    files: sorted(files),
    tailwind: {file: "tailwindcss", css: TAILWIND_CSS},
  };
  writeFileSync(join(vendorDir, "libraries.json"), JSON.stringify(manifest, null, 2) + "\n");
}

const results = [];
for (const bundle of bundles) results.push(await buildOne(bundle));

// Every curated library is rebuilt from scratch: a library dropped from the list leaves no file.
rmSync(join(vendorDir, "libs"), {recursive: true, force: true});
const curated = libraries();
const built = new Map();
for (const library of curated) {
  const result = await buildOne({
    name: library.file,
    root: vendorDir,
    contents: libraryEntry(library),
    out: `libs/${library.file}/${library.file}.js`,
    primary: library.package,
    externals: library.externals || {},
  });
  built.set(library.file, result);
  results.push(result);
}
writeManifest(curated, built);

// Merge into each folder's VERSIONS.json so entries for other vendored files survive.
for (const root of new Set(results.map((r) => r.root))) {
  const versionsPath = join(root, "VERSIONS.json");
  const versions = existsSync(versionsPath) ? JSON.parse(readFileSync(versionsPath, "utf8")) : {};
  versions.files = versions.files || {};
  // libs/ was rebuilt from scratch: so are its entries.
  for (const file of Object.keys(versions.files)) if (file.startsWith("libs/")) delete versions.files[file];
  for (const {file, entry} of results.filter((r) => r.root === root)) {
    versions.files[file] = {...entry, built_by: "tools/snippet-runtime (npm ci --ignore-scripts && npm run build)", esbuild: esbuild.version};
  }
  const sorted = Object.fromEntries(Object.keys(versions.files).sort().map((k) => [k, versions.files[k]]));
  writeFileSync(versionsPath, JSON.stringify({...versions, files: sorted}, null, 2) + "\n");
}

for (const {file, entry} of results) {
  console.log(`${file}  ${entry.bytes} bytes  sha256 ${entry.sha256}`);
  console.log(`  ${Object.entries(entry.packages).map(([p, v]) => `${p}@${v}`).join(", ")}`);
}

// Builds the vendored bundles for the snippet runtime:
//   ../../static/vendor/sucrase/sucrase.js          (window.Sucrase, served to the app frame)
//   ../../static/vendor/react/react.js              (window.OsfReact, served to the app frame)
//   ../../rooms/js/vendor/sucrase-parser/sucrase-parser.js  (OsfSucraseParser, server only)
// plus the LICENSE of every npm package that ends up inside a bundle and a VERSIONS.json in
// each output folder (packages, exact versions, sha256).
//
// Usage: npm ci && npm run build
// The output is deterministic: rebuilding from the same lock file gives
// byte-identical files (and therefore identical hashes in VERSIONS.json).
import {createHash} from "node:crypto";
import {copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {dirname, join, relative, resolve} from "node:path";
import {fileURLToPath} from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
// Browser bundles go where collectstatic finds them; the server's own stay out of static/.
const vendorDir = resolve(here, "../../static/vendor");
const serverVendorDir = resolve(here, "../../rooms/js/vendor");

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
  for (const name of ["LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "license"]) {
    const p = join(packageDir(pkg), name);
    if (existsSync(p)) return p;
  }
  // Never ship code whose licence text we cannot ship alongside it.
  throw new Error(`no LICENSE file found for bundled package ${pkg}`);
}

async function buildOne(bundle) {
  const outFile = join(bundle.root, bundle.out);
  const outDir = dirname(outFile);
  // Only this bundle's folder is replaced, so stale licence files disappear
  // and other vendored libraries under static/vendor are left alone.
  rmSync(outDir, {recursive: true, force: true});
  mkdirSync(outDir, {recursive: true});

  const result = await esbuild.build({
    absWorkingDir: here,
    entryPoints: [bundle.entry],
    outfile: outFile,
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["es2020"],
    minify: true,
    legalComments: "eof",
    charset: "utf8",
    define: {"process.env.NODE_ENV": '"production"'},
    metafile: true,
    logLevel: "warning",
  });

  // Which npm packages actually ended up in the bundle (after tree shaking).
  const inputs = result.metafile.outputs[relative(here, outFile)].inputs;
  const pkgs = [...new Set(Object.keys(inputs).map(packageOf).filter(Boolean))].sort();
  const packages = {};
  const licenses = [];
  for (const pkg of pkgs) {
    const meta = JSON.parse(readFileSync(join(packageDir(pkg), "package.json"), "utf8"));
    packages[pkg] = meta.version;
    const licenseName = pkg === bundle.primary ? "LICENSE" : `LICENSE-${pkg.replace(/^@/, "").replace("/", "-")}`;
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
  };
}

const results = [];
for (const bundle of bundles) results.push(await buildOne(bundle));

// Merge into each folder's VERSIONS.json so entries for other vendored files survive.
for (const root of new Set(results.map((r) => r.root))) {
  const versionsPath = join(root, "VERSIONS.json");
  const versions = existsSync(versionsPath) ? JSON.parse(readFileSync(versionsPath, "utf8")) : {};
  versions.files = versions.files || {};
  for (const {file, entry} of results.filter((r) => r.root === root)) {
    versions.files[file] = {...entry, built_by: "tools/snippet-runtime (npm ci && npm run build)", esbuild: esbuild.version};
  }
  const sorted = Object.fromEntries(Object.keys(versions.files).sort().map((k) => [k, versions.files[k]]));
  writeFileSync(versionsPath, JSON.stringify({...versions, files: sorted}, null, 2) + "\n");
}

for (const {file, entry} of results) {
  console.log(`${file}  ${entry.bytes} bytes  sha256 ${entry.sha256}`);
  console.log(`  ${Object.entries(entry.packages).map(([p, v]) => `${p}@${v}`).join(", ")}`);
}

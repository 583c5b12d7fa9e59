// Copies the files /api/v1/docs serves from the pinned swagger-ui-dist package:
//   ../../static/vendor/swagger-ui/swagger-ui-bundle.js   (window.SwaggerUIBundle)
//   ../../static/vendor/swagger-ui/swagger-ui.css         (+ its .map: the manifest storage
//                                                          resolves the sourceMappingURL)
// with the package's LICENSE, NOTICE and the licences of what its bundle contains, and records
// each file (package, exact version, the npm tarball's integrity, sha256) in
// ../../static/vendor/VERSIONS.json.
//
// Usage: npm ci && npm run build
// The files are copied unchanged: their sha256 equals the one of the same file in the npm
// tarball, and a rebuild from the same lock file changes nothing (git diff --exit-code).
import {createHash} from "node:crypto";
import {copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {dirname, join, resolve} from "node:path";
import {fileURLToPath} from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const vendorDir = resolve(here, "../../static/vendor");
const outDir = join(vendorDir, "swagger-ui");
const pkg = "swagger-ui-dist";
const pkgDir = join(here, "node_modules", pkg);

// Served files, and the licence files that travel with them (Apache-2.0 asks for NOTICE too).
const served = ["swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui.css.map"];
const licenseFiles = {
  LICENSE: "LICENSE",
  NOTICE: "NOTICE",
  // The bundle includes other packages (React, Immutable, ...): their notices, as shipped.
  "LICENSE-bundled": "swagger-ui-bundle.js.LICENSE.txt",
};

const sha256 = (buf) => createHash("sha256").update(buf).digest("hex");

const manifest = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));
const meta = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
if (meta.version !== manifest.dependencies[pkg]) {
  throw new Error(`${pkg} ${meta.version} installed, ${manifest.dependencies[pkg]} pinned: run npm ci`);
}
const lock = JSON.parse(readFileSync(join(here, "package-lock.json"), "utf8"));
const integrity = lock.packages[`node_modules/${pkg}`].integrity;

// Only this folder is replaced, so files of an older version disappear.
rmSync(outDir, {recursive: true, force: true});
mkdirSync(outDir, {recursive: true});

const licenses = [];
for (const [name, source] of Object.entries(licenseFiles)) {
  const from = join(pkgDir, source);
  if (!existsSync(from)) throw new Error(`${pkg} ships no ${source}`);
  copyFileSync(from, join(outDir, name));
  const bytes = readFileSync(join(outDir, name));
  licenses.push({file: `swagger-ui/${name}`, package: pkg, license: meta.license, sha256: sha256(bytes)});
}

const versionsPath = join(vendorDir, "VERSIONS.json");
const versions = existsSync(versionsPath) ? JSON.parse(readFileSync(versionsPath, "utf8")) : {};
versions.files = Object.fromEntries(
  Object.entries(versions.files || {}).filter(([file]) => !file.startsWith("swagger-ui/")),
);
for (const name of served) {
  copyFileSync(join(pkgDir, name), join(outDir, name));
  const bytes = readFileSync(join(outDir, name));
  versions.files[`swagger-ui/${name}`] = {
    packages: {[pkg]: meta.version},
    sha256: sha256(bytes),
    bytes: bytes.length,
    licenses,
    copied_from: `${pkg}@${meta.version}/${name} (unchanged)`,
    integrity,
    built_by: "tools/swagger-ui (npm ci && npm run build)",
  };
  console.log(`swagger-ui/${name}  ${bytes.length} bytes  sha256 ${sha256(bytes)}`);
}
const sorted = Object.fromEntries(Object.keys(versions.files).sort().map((k) => [k, versions.files[k]]));
writeFileSync(versionsPath, JSON.stringify({...versions, files: sorted}, null, 2) + "\n");
console.log(`  ${pkg}@${meta.version} (${integrity})`);

"""Packages the registry tests publish on their own npm registry (tests/npmregistry.py), and an
app that uses them: small, but shaped as real packages are (an ES module package with an
`exports` map, CommonJS with a `browser` field, a React component, a nested version conflict)."""

import json

from tests.npmregistry import NpmRegistry

# An ES module package ("type": "module", exports with import/default conditions) that needs a
# CommonJS one at ^2.
FORMAT_INDEX = """import pad from "tiny-pad";
export function money(cents) {
  return "$" + pad(String(Math.floor(cents / 100)), 3) + "." + String(cents % 100).padStart(2, "0");
}
export const VERSION = "1.2.0";
export default money;
"""
# CommonJS whose `browser` field swaps the Node file for a browser one, and maps fs away.
PAD_NODE = "var fs = require('fs');\nmodule.exports = function () { return fs; };\n"
PAD_BROWSER = """var repeat = require('./repeat');
module.exports = function pad(text, width) {
  return repeat(' ', Math.max(0, width - text.length)) + text;
};
"""
REPEAT = (
    "module.exports = function (s, n) { var out = ''; while (n-- > 0) out += s; return out; };\n"
)
# A React component, as a library ships one: CommonJS, React from the app (a peer).
BADGE = """'use strict';
var React = require('react');
var jsx = require('react/jsx-runtime');
var pad = require('tiny-pad');
function Badge(props) {
  var padding = pad('', 3).length;
  return jsx.jsx('span', {className: 'ui-badge', 'data-pad': padding, children: props.label});
}
exports.Badge = Badge;
exports.version = React.version;
"""
BADGE_CSS = ".ui-badge { border-radius: 9px; padding: 2px 8px; background: #dfe; }\n"


def publish_all(registry: NpmRegistry) -> None:
    for version in ("2.0.0", "2.1.0", "3.0.0"):
        registry.publish(
            "tiny-pad",
            version,
            {"lib/node.js": PAD_NODE, "lib/browser.js": PAD_BROWSER, "lib/repeat.js": REPEAT},
            manifest={
                "main": "lib/node.js",
                "browser": {"./lib/node.js": "./lib/browser.js", "fs": False},
            },
            tag=version == "3.0.0",
        )
    registry.publish(
        "tiny-format",
        "1.2.0",
        {"index.js": FORMAT_INDEX, "README.md": "# tiny-format\n"},
        manifest={
            "type": "module",
            "exports": {".": {"import": "./index.js", "default": "./index.js"}},
        },
        dependencies={"tiny-pad": "^2.0.0"},
    )
    registry.publish(
        "ui-badge",
        "1.0.0",
        {"dist/index.js": BADGE, "dist/badge.css": BADGE_CSS},
        manifest={
            "main": "dist/index.js",
            "exports": {".": "./dist/index.js", "./badge.css": "./dist/badge.css"},
        },
        dependencies={"tiny-pad": "^3.0.0"},
        peers={"react": ">=17"},
        license="ISC",
    )


APP = """import {useState} from "react";
import money from "tiny-format";
import {Badge} from "ui-badge";
import "ui-badge/badge.css";

export default function App() {
  const [cents, setCents] = useState(1999);
  return (
    <main>
      <p className="price">{money(cents)}</p>
      <Badge label="new" />
      <button onClick={() => setCents(cents + 1)}>More</button>
    </main>
  );
}
"""


DEPENDENCIES = {"tiny-format": "^1.0.0", "ui-badge": "~1.0.0"}


def app_files(**dependencies: str) -> dict[str, str]:
    """The app, its package.json naming `dependencies` (by default DEPENDENCIES)."""
    manifest = {
        "name": "price-tag",
        "private": True,
        "dependencies": dependencies or DEPENDENCIES,
        "devDependencies": {"vite": "^7.0.0", "typescript": "^5.9.0"},
    }
    return {"src/App.tsx": APP, "package.json": json.dumps(manifest, indent=2) + "\n"}

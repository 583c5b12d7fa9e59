"""One corpus of apps, good and bad, for the server's runnable check and the browser's frame.

tests/rooms/runtime/test_runnable_parity.py feeds every case to both and they must agree: the server
refuses exactly what the frame cannot run. `error` is None for an app that runs, else a part
of the server's message for it (file:line:col included where the case pins it down).
"""

from dataclasses import dataclass

from rooms.demo import standup_timer_files

APP = "export default function App() {\n  return <p>Hello</p>;\n}\n"


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str]
    error: str | None = None

    @property
    def runs(self) -> bool:
        return self.error is None


def app(body: str, head: str = "") -> str:
    """An entry whose component renders `body` (JSX), after the lines in `head`."""
    return f"{head}export default function App() {{\n  return {body};\n}}\n"


RUNS = [
    Case("the standup timer", standup_timer_files()),
    Case(
        "relative imports find .ts, .jsx, .json and .css by extension",
        {
            "src/App.tsx": app(
                "<p className={Badge.cls}>{add(1, 2)} {data.name}</p>",
                "import {add} from './lib/math';\nimport * as Badge from './Badge';\n"
                "import data from './data.json';\nimport './style.css';\n",
            ),
            "src/lib/math.ts": "export const add = (a: number, b: number): number => a + b;\n",
            "src/Badge.jsx": "export const cls = 'badge';\nexport const Badge = () => <b/>;\n",
            "src/data.json": '{"name": "Ada"}\n',
            "src/style.css": "p { color: green; }\n",
        },
    ),
    Case(
        "a folder import finds its index file, also from a nested folder",
        {
            "src/App.tsx": app("<p>{label}</p>", "import {label} from './lib';\n"),
            "src/lib/index.ts": "export {label} from './deep/name';\n",
            "src/lib/deep/name.ts": "import {base} from '../..';\nexport const label = base;\n",
            "src/index.ts": "export const base = 'ok';\n",
        },
    ),
    Case(
        "an import starting with / is read from the app's root",
        {
            "src/App.tsx": app("<p>{x}</p>", "import {x} from '/src/util';\n"),
            "src/util.ts": "export const x = 1;\n",
        },
    ),
    Case(
        "type-only imports of files that do not exist vanish when compiled",
        {
            "src/App.tsx": app(
                "<p>{n}</p>",
                "import type {Props} from './types';\nimport {Shape} from './shapes';\n"
                "const n: Shape | Props = 1 as any;\n",
            ),
        },
    ),
    Case(
        "an unused import of a missing package in TSX vanishes too",
        {"src/App.tsx": app("<p>ok</p>", "import pad from 'left-pad';\n")},
    ),
    Case(
        "require and import in strings, comments and templates are only text",
        {
            "src/App.tsx": app(
                "<p>{s}{t}</p>",
                "// import pad from 'left-pad'; require('left-pad')\n"
                "const s = \"require('left-pad')\";\nconst t = `import('left-pad')`;\n"
                "/* require('x') */ const o = {require: (x: string) => x};\n"
                "o.require('left-pad');\n",
            ),
        },
    ),
    Case(
        "JSX edge cases: fragments, spreads, entities, member tags, generics, JSX in .js",
        {
            "src/App.tsx": (
                "import {Parts} from './Parts';\n"
                "const id = <T,>(x: T): T => x;\n"
                "const props = {title: 'spread'};\n"
                "export default function App() {\n"
                "  return (\n    <>\n      <div {...props} data-x={id(1)}>a&nbsp;b &amp; c</div>\n"
                '      <Parts.Item />\n      <svg><use xlinkHref="#a" /></svg>\n'
                "      {[1, 2].map((n) => <span key={n}>{n > 1 ? <i>{n}</i> : null}</span>)}\n"
                "    </>\n  );\n}\n"
            ),
            "src/Parts.js": "export const Parts = {Item: () => <em>item</em>};\n",
        },
    ),
    Case(
        "a .ts file uses <T>value as a type assertion",
        {
            "src/App.tsx": app("<p>{n}</p>", "import {n} from './n';\n"),
            "src/n.ts": "const raw: unknown = 2;\nexport const n = <number>raw;\n",
        },
    ),
    Case(
        "a dynamic import of a relative file",
        {
            "src/App.tsx": app(
                "<p>{text}</p>",
                "import {useEffect, useState} from 'react';\n"
                "function useLazy() {\n  const [text, setText] = useState('');\n"
                "  useEffect(() => { import('./lazy').then((m) => setText(m.text)); }, []);\n"
                "  return text;\n}\n",
            ).replace("return <p>{text}</p>", "const text = useLazy();\n  return <p>{text}</p>"),
            "src/lazy.ts": "export const text = 'lazy';\n",
        },
    ),
    Case(
        "the default export can be named in an export list or re-exported",
        {
            "src/App.tsx": "export {default} from './Real';\n",
            "src/Real.tsx": (
                "function Real() {\n  return <p>real</p>;\n}\nexport {Real as default};\n"
            ),
        },
    ),
    Case(
        "react-dom and react-dom/client exist",
        {
            "src/App.tsx": app(
                "<p>{typeof createPortal}{typeof createRoot}{version}</p>",
                "import {createPortal, version} from 'react-dom';\n"
                "import {createRoot} from 'react-dom/client';\n"
                "import {jsx} from 'react/jsx-runtime';\nvoid jsx;\n",
            ),
        },
    ),
    Case(
        "a file nothing loads may import anything: it never runs",
        {
            "src/App.tsx": APP,
            "src/App.test.tsx": "import {test} from 'vitest';\ntest('x', () => {});\n",
            "vite.config.ts": (
                "import {defineConfig} from 'vite';\nexport default defineConfig({});\n"
            ),
            "package.json": '{\n  // comments are not JSON\n  "name": "x",\n}\n',
            "README.md": "# Hello\n",
        },
    ),
    Case(
        "an .mjs file loads when imported by its exact name",
        {
            "src/App.tsx": app("<p>{n}</p>", "import {n} from './n.mjs';\n"),
            "src/n.mjs": "export const n = 3;\n",
        },
    ),
    Case(
        "await inside an async function",
        {
            "src/App.tsx": app(
                "<p>{String(typeof load)}</p>",
                "async function load() {\n  const r = await Promise.resolve(1);\n  return r;\n}\n",
            ),
        },
    ),
]

# Apps that use the curated libraries (rooms/runtime/libraries.py), written as agents write them.
LIBRARY_RUNS = [
    Case(
        "recharts, lucide-react and clsx in one app",
        {
            "src/App.tsx": app(
                "<div className={clsx('chart', {wide: true})}><Sun size={16} />"
                "<LineChart width={200} height={100} data={[{x: 1}, {x: 3}]}>"
                "<Line dataKey='x' isAnimationActive={false} /></LineChart></div>",
                "import {Line, LineChart} from 'recharts';\nimport {Sun} from 'lucide-react';\n"
                "import clsx from 'clsx';\n",
            )
        },
    ),
    Case(
        "lodash, as a whole and by its per-function paths",
        {
            "src/App.tsx": app(
                "<p>{_.chunk([1, 2, 3], 2).length} {typeof debounce} {uniq([1, 1]).length}</p>",
                "import _ from 'lodash';\nimport debounce from 'lodash/debounce';\n"
                "import uniq from 'lodash/uniq';\n",
            )
        },
    ),
    Case(
        "date-fns functions, a function path and a locale",
        {
            "src/App.tsx": app(
                "<p>{format(addDays(new Date(2026, 0, 1), 1), 'PPPP', {locale: de})} "
                "{isWeekend(new Date(2026, 0, 3)) ? 'weekend' : ''}</p>",
                "import {addDays, format} from 'date-fns';\n"
                "import isWeekend from 'date-fns/isWeekend';\n"
                "import {de} from 'date-fns/locale';\n",
            )
        },
    ),
    Case(
        "chart.js/auto with react-chartjs-2",
        {
            "src/App.tsx": app(
                "<Doughnut data={{labels: ['a', 'b'], datasets: [{data: [1, 2]}]}} />",
                "import 'chart.js/auto';\nimport {Doughnut} from 'react-chartjs-2';\n",
            )
        },
    ),
    Case(
        "zustand with its middleware",
        {
            "src/App.tsx": (
                "import {create} from 'zustand';\nimport {devtools, subscribeWithSelector} from "
                "'zustand/middleware';\n"
                "const useStore = create<{n: number}>()(devtools(subscribeWithSelector(() => "
                "({n: 1}))));\n" + app("<p>{useStore((s) => s.n)}</p>")
            )
        },
    ),
    Case(
        "d3, three, uuid, mathjs, papaparse and framer-motion, each used",
        {
            "src/App.tsx": app(
                "<motion.p animate={{opacity: 1}}>{d3.sum([1, 2])} {new THREE.Vector3(1, 2, 2)"
                ".length()} {validate(v4()) ? 'id' : ''} {evaluate('2 + 3')} "
                "{Papa.parse('a,b').data.length} {typeof OrbitControls}</motion.p>",
                "import * as d3 from 'd3';\nimport * as THREE from 'three';\n"
                "import {OrbitControls} from 'three/examples/jsm/controls/OrbitControls.js';\n"
                "import {v4, validate} from 'uuid';\nimport {evaluate} from 'mathjs';\n"
                "import Papa from 'papaparse';\nimport {motion} from 'framer-motion';\n",
            )
        },
    ),
    Case(
        "a curated library imported only by an imported file, and one written with require()",
        {
            "src/App.tsx": app("<p>{rows}</p>", "import {rows} from './csv';\n"),
            "src/csv.ts": "const Papa = require('papaparse');\n"
            "import {sum} from 'd3';\n"
            "export const rows = sum([Papa.parse('a\\nb').data.length]);\n",
        },
    ),
    Case(
        "a dynamic import of a curated library",
        {
            "src/App.tsx": app(
                "<p>{text}</p>",
                "import {useEffect, useState} from 'react';\n"
                "function useLazy() {\n  const [text, setText] = useState('');\n"
                "  useEffect(() => {\n"
                "    import('clsx').then((m) => setText(m.default('a', 'b')));\n  }, []);\n"
                "  return text;\n}\n",
            ).replace("return <p>{text}</p>", "const text = useLazy();\n  return <p>{text}</p>"),
        },
    ),
    Case(
        "a CSS file that asks for Tailwind, with @theme and @apply",
        {
            "src/App.tsx": app(
                "<p className='btn p-4 text-brand'>x</p>", "import './index.css';\n"
            ),
            "src/index.css": '@import "tailwindcss";\n@theme { --color-brand: #7c3aed; }\n'
            ".btn { @apply rounded bg-blue-600; }\n",
        },
    ),
    Case(
        "Tailwind 3's directives, and tailwindcss imported in code",
        {
            "src/App.tsx": app(
                "<p className='p-4'>x</p>", "import 'tailwindcss';\nimport './index.css';\n"
            ),
            "src/index.css": "@tailwind base;\n@tailwind components;\n@tailwind utilities;\n",
        },
    ),
]

RUNS += LIBRARY_RUNS

FAILS = [
    Case(
        "a syntax error",
        {"src/App.tsx": "export default function App() {\n  return <p>{'open}</p>;\n}\n"},
        "src/App.tsx:2:",
    ),
    Case(
        "JSX in a .ts file",
        {
            "src/App.tsx": app("<View />", "import {View} from './view';\n"),
            "src/view.ts": "export const View = () => <div />;\n",
        },
        "src/view.ts:1:",
    ),
    Case(
        "an unknown package",
        {"src/App.tsx": app("<p>{leftPad('1', 3)}</p>", "import leftPad from 'left-pad';\n")},
        "src/App.tsx:1:21: module 'left-pad' is not available in Rooms; an app imports its own "
        "files (relative paths), react, react-dom, react-dom/client, react/jsx-runtime and the "
        "curated packages chart.js (chart.js/auto",
    ),
    Case(
        "a subpath of a curated package that the curated set does not have",
        {"src/App.tsx": app("<p>{typeof fp.map}</p>", "import fp from 'lodash/fp';\n")},
        "src/App.tsx:1:16: module 'lodash/fp' is not available in Rooms: of lodash 4.18.1 an app "
        "may import lodash, lodash/<function>",
    ),
    Case(
        "a per-function path with an extension",
        {"src/App.tsx": app("<p>{typeof d}</p>", "import d from 'lodash/debounce.js';\n")},
        "module 'lodash/debounce.js' is not available in Rooms: of lodash",
    ),
    Case(
        "a deep import of a curated package's own files",
        {"src/App.tsx": app("<p>{typeof Line}</p>", "import {Line} from 'recharts/lib/index';\n")},
        "module 'recharts/lib/index' is not available in Rooms: of recharts 3.11.3 an app may "
        "import recharts",
    ),
    Case(
        "date-fns's fp paths are not in the curated set",
        {
            "src/App.tsx": app(
                "<p>{typeof format}</p>", "import format from 'date-fns/fp/format';\n"
            )
        },
        "module 'date-fns/fp/format' is not available in Rooms: of date-fns 4.4.0",
    ),
    Case(
        "a three addon other than OrbitControls",
        {
            "src/App.tsx": app(
                "<p>{typeof T}</p>",
                "import {TrackballControls as T} from "
                "'three/addons/controls/TrackballControls.js';\n",
            )
        },
        "of three 0.187.0 an app may import three, three/addons/controls/OrbitControls.js",
    ),
    Case(
        "Tailwind 2's stylesheet import in code",
        {"src/App.tsx": app("<p className='p-4'>x</p>", "import 'tailwindcss/tailwind.css';\n")},
        "module 'tailwindcss/tailwind.css' is not available in Rooms: of @tailwindcss/browser "
        "4.3.5 an app may import tailwindcss",
    ),
    Case(
        "react-dom/server does not exist",
        {
            "src/App.tsx": app(
                "<p>{typeof renderToString}</p>",
                "import {renderToString} from 'react-dom/server';\n",
            )
        },
        "module 'react-dom/server' is not available",
    ),
    Case(
        "a missing relative file",
        {"src/App.tsx": app("<Nav />", "import Nav from './Nav';\n")},
        "src/App.tsx:1:17: cannot find './Nav'",
    ),
    Case(
        "a relative import in another case",
        {
            "src/App.tsx": app("<p>{x}</p>", "import {x} from './util';\n"),
            "src/Util.ts": "export const x = 1;\n",
        },
        "did you mean src/Util.ts?",
    ),
    Case(
        "an import above the app's root",
        {
            "src/App.tsx": app("<p>{x}</p>", "import {x} from '../../x';\n"),
            "x.ts": "export const x=1;",
        },
        "points above the app's root folder",
    ),
    Case(
        "an import of a file type the Room does not load",
        {
            "src/App.tsx": app("<img src={logo} />", "import logo from './logo.svg';\n"),
            "src/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
        },
        "src/logo.svg is not a file type the Room loads",
    ),
    Case(
        "imported JSON that does not parse",
        {
            "src/App.tsx": app("<p>{data.a}</p>", "import data from './data.json';\n"),
            "src/data.json": '{\n  "a": 1,\n}\n',
        },
        "src/data.json:3:1: invalid JSON",
    ),
    Case(
        "imported JSON with NaN",
        {
            "src/App.tsx": app("<p>{data.a}</p>", "import data from './data.json';\n"),
            "src/data.json": '{"a": NaN}',
        },
        "src/data.json:",
    ),
    Case(
        "no default export",
        {"src/App.tsx": "export function App() {\n  return <p>Hi</p>;\n}\n"},
        "src/App.tsx:1:1: no default export",
    ),
    Case(
        "a default export that is only a type",
        {"src/App.tsx": "export default interface Props {\n  title: string;\n}\n"},
        "no default export",
    ),
    Case(
        "await at the top level",
        {"src/App.tsx": "const data = await Promise.resolve(1);\n" + app("<p>{data}</p>")},
        "src/App.tsx:1:14: await is only valid in async functions",
    ),
    Case(
        "await in a function that is not async",
        {"src/App.tsx": "function f() {\n  return await 1;\n}\n" + app("<p>{f()}</p>")},
        "src/App.tsx:2:",
    ),
    Case(
        "a name declared twice",
        {"src/App.tsx": "const a = 1;\nconst a = 2;\n" + app("<p>{a}</p>")},
        "src/App.tsx:2:7: Identifier 'a' has already been declared",
    ),
    Case(
        "namespaced JSX, which Sucrase turns into invalid JavaScript",
        {"src/App.tsx": app("<svg><svg:rect /></svg>")},
        "src/App.tsx:2:",
    ),
    Case(
        "a decorator",
        {
            "src/App.tsx": "function d(c: any) { return c; }\n@d\nclass A {}\n"
            + app("<p>{A.name}</p>")
        },
        "src/App.tsx:",
    ),
    Case(
        "a #! line",
        {"src/App.tsx": "#!/usr/bin/env node\n" + app("<p>x</p>")},
        "src/App.tsx:1:",
    ),
    Case(
        "a syntax error in a file nothing loads (the frame compiles every file first)",
        {"src/App.tsx": APP, "src/Old.tsx": "export const = 1;\n"},
        "src/Old.tsx:1:",
    ),
    Case(
        "a missing file imported by an imported file",
        {
            "src/App.tsx": app("<p>{x}</p>", "import {x} from './a';\n"),
            "src/a.ts": "export {x} from './b';\n",
        },
        "src/a.ts:1:17: cannot find './b'",
    ),
    Case(
        "a star re-export of a missing file",
        {"src/App.tsx": "export * from './nope';\n" + APP},
        "cannot find './nope'",
    ),
    Case(
        "require() of a package written in the source",
        {"src/App.tsx": "const left = require('left-pad');\n" + app("<p>{left}</p>")},
        "src/App.tsx:1:22: module 'left-pad' is not available",
    ),
    Case(
        "an unknown package imported by a file that imports a curated one",
        {
            "src/App.tsx": app("<p>{label}</p>", "import {label} from './label';\n"),
            "src/label.ts": "import clsx from 'clsx';\nimport pad from 'left-pad';\n"
            "export const label = clsx('a', pad('b', 2));\n",
        },
        "src/label.ts:2:17: module 'left-pad' is not available",
    ),
    Case(
        "a dynamic import of a package that runs on mount",
        {
            "src/App.tsx": app(
                "<p>lazy</p>",
                "import {useEffect} from 'react';\n",
            ).replace(
                "return <p>lazy</p>",
                "useEffect(() => { import('left-pad').then(() => {}); }, []);\n"
                "  return <p>lazy</p>",
            ),
        },
        "module 'left-pad' is not available",
    ),
]

CASES = RUNS + FAILS

"""The snippets under tests/rooms/snippets/, as the files an agent would propose.

A case is a folder of real files, or a `files.json` ({"about": ..., "files": {path: text}})
where the characters must stay written as escapes: bidirectional controls, invisible and
control characters, lone surrogates (which no UTF-8 file can even hold). No editor, diff or
review tool can then hide them from whoever reads the test data.
"""

import json
from pathlib import Path

SNIPPETS = Path(__file__).parent / "snippets"


def case_files(name: str) -> dict[str, str]:
    folder = SNIPPETS / name
    escaped = folder / "files.json"
    if escaped.exists():
        return json.loads(escaped.read_text())["files"]
    return {
        path.relative_to(folder).as_posix(): path.read_text()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }

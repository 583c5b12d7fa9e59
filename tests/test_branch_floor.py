"""tools/coverage/branch_floor.py: branch coverage per package, and a failing exit below the
floor (make test runs it after the coverage report)."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "branch_floor", ROOT / "tools" / "coverage" / "branch_floor.py"
)
assert spec is not None and spec.loader is not None
branch_floor = importlib.util.module_from_spec(spec)
spec.loader.exec_module(branch_floor)


def report(tmp_path, files: dict[str, tuple[int, int]]) -> str:
    data = {
        "files": {
            path: {"summary": {"covered_branches": covered, "num_branches": branches}}
            for path, (covered, branches) in files.items()
        }
    }
    path = tmp_path / "coverage.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_each_package_is_counted_on_its_own(tmp_path, capsys):
    path = report(
        tmp_path,
        {"rooms/a.py": (9, 10), "rooms/b.py": (10, 10), "agents/c.py": (18, 20), "x/d.py": (0, 9)},
    )
    assert branch_floor.main([path, "90", "rooms", "agents"]) == 0
    out = capsys.readouterr().out
    assert "branches covered in rooms: 95.0% (19 of 20)" in out
    assert "branches covered in agents: 90.0% (18 of 20)" in out
    assert "in x:" not in out  # packages not asked for are not counted


def test_a_package_below_the_floor_fails_the_run(tmp_path, capsys):
    path = report(tmp_path, {"rooms/a.py": (19, 20), "agents/c.py": (17, 20)})
    assert branch_floor.main([path, "90", "rooms", "agents"]) == 1
    assert "below the floor of 90% of branches: agents" in capsys.readouterr().out

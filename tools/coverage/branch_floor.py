"""Branch coverage per package, from coverage's JSON report (`coverage json`); exits 1 when a
package is below the floor.

    .venv/bin/python tools/coverage/branch_floor.py coverage.json 95 osfoundry rooms agents

`coverage report --fail-under` holds lines and branches together; the suite promises branches
on their own too: each `if` taken both ways by some test.
"""

import json
import sys
from pathlib import Path


def branch_coverage(report: dict, packages: list[str]) -> dict[str, tuple[int, int]]:
    """package -> (covered branches, branches)."""
    totals = {package: (0, 0) for package in packages}
    for path, data in report["files"].items():
        package = Path(path).parts[0]
        if package in totals:
            covered, branches = totals[package]
            summary = data["summary"]
            totals[package] = (
                covered + summary["covered_branches"],
                branches + summary["num_branches"],
            )
    return totals


def main(argv: list[str]) -> int:
    path, floor, packages = argv[0], float(argv[1]), argv[2:]
    totals = branch_coverage(json.loads(Path(path).read_text()), packages)
    below = []
    for package, (covered, branches) in totals.items():
        percent = 100.0 * covered / branches if branches else 100.0
        print(f"branches covered in {package}: {percent:.1f}% ({covered} of {branches})")
        if percent < floor:
            below.append(package)
    if below:
        print(f"below the floor of {floor:g}% of branches: {', '.join(below)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

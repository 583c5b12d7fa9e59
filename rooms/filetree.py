"""The order files are shown in: a folder tree, folders before files, names in natural order
(W2 before W10, as people count), the same on the card, its diff, and a version's page."""

import re

DIGITS = re.compile(r"(\d+)")


def natural(name: str) -> tuple:
    """`W10` after `W2`: digit runs compare as numbers (types alternate str, int, str …)."""
    parts = DIGITS.split(name.casefold())
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts))


def tree_key(path: str) -> tuple:
    """Sort key of a path in its tree: at each level folders first, then files, naturally."""
    parts = path.split("/")
    return tuple((index == len(parts) - 1, natural(part)) for index, part in enumerate(parts))


def tree_order(paths) -> list[str]:
    return sorted(paths, key=tree_key)


def file_tree(paths) -> list[dict]:
    """Flat rows with a depth, each folder before its contents, for an indented tree."""
    rows, seen = [], set()
    for path in tree_order(paths):
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            folder = "/".join(parts[: depth + 1])
            if folder not in seen:
                seen.add(folder)
                rows.append({"name": parts[depth], "path": folder, "depth": depth, "is_dir": True})
        rows.append({"name": parts[-1], "path": path, "depth": len(parts) - 1, "is_dir": False})
    return rows

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
    """Flat rows with a depth, each folder before its contents, for an indented tree. A row's
    `ends` names the folders whose contents end with it, innermost first: a page that nests
    them closes those after it, with no recursion however deep the tree."""
    rows: list[dict] = []
    seen = set()
    for path in tree_order(paths):
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            folder = "/".join(parts[: depth + 1])
            if folder not in seen:
                seen.add(folder)
                rows.append({"name": parts[depth], "path": folder, "depth": depth, "is_dir": True})
        rows.append({"name": parts[-1], "path": path, "depth": len(parts) - 1, "is_dir": False})
    open_folders: list[str] = []
    for row, following in zip(rows, rows[1:] + [None], strict=True):
        if row["is_dir"]:
            open_folders.append(row["path"])
        row["ends"] = []
        while open_folders and (
            following is None or not following["path"].startswith(open_folders[-1] + "/")
        ):
            row["ends"].append(open_folders.pop())
    return rows

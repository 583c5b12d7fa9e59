"""The order files are shown in: folders first, names as people count."""

from rooms.content.filetree import file_tree, natural, tree_order


def test_numbers_in_names_count_as_numbers():
    names = ["W10.ts", "W2.ts", "w1.ts", "W11.ts", "a.ts"]
    assert sorted(names, key=natural) == ["a.ts", "w1.ts", "W2.ts", "W10.ts", "W11.ts"]


def test_folders_come_before_the_files_beside_them():
    paths = ["src/z.ts", "README.md", "src/ui/B.tsx", "src/App.tsx", "docs/a.md"]
    assert tree_order(paths) == [
        "docs/a.md",
        "src/ui/B.tsx",
        "src/App.tsx",
        "src/z.ts",
        "README.md",
    ]


def test_the_tree_has_each_folder_once_before_its_contents():
    rows = file_tree(["src/ui/B.tsx", "src/App.tsx"])
    assert [(row["path"], row["depth"], row["is_dir"]) for row in rows] == [
        ("src", 0, True),
        ("src/ui", 1, True),
        ("src/ui/B.tsx", 2, False),
        ("src/App.tsx", 1, False),
    ]

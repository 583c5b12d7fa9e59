"""The Room page and its launcher: the tab bar, the apps' revisions and rollback."""

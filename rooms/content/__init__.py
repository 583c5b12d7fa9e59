"""Pure functions of text: characters, scripts, highlighting, diffs, file trees. Imports nothing
else of rooms (pyproject.toml holds it)."""

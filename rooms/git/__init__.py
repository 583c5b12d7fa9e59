"""Project repositories: the database object store, reading pushes, git over smart HTTP."""

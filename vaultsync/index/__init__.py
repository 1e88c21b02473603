"""The derived index of one commit: chunks, SQLite FTS5 and the WikiLink graph, vectors in LanceDB, kept in step with git incrementally."""

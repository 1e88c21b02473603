"""The derived index: notes, chunks and embeddings of HEAD in SQLite and LanceDB, kept in step by sync."""

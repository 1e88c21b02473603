"""Validation of a vault snapshot: frontmatter against JSON Schema, vocabulary, TTL and supersession, WikiLinks and paths, reported as ``path:line:col: CODE message``."""

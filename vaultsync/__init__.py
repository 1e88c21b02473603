"""vaultsync: a Git-native memory layer for AI coding agents.

Markdown notes with YAML frontmatter in Git are the source of truth; vaultsync
validates them before a commit lands (``vaultsync check``), keeps derived
indices (SQLite FTS5 + LanceDB) in step with HEAD after it lands
(``vaultsync sync``), and serves hybrid multilingual search
(``vaultsync search`` / ``git memsearch``).
"""

__version__ = "0.1.0"

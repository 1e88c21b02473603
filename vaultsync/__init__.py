"""vaultsync: a Git-native memory layer for AI coding agents.

Markdown notes with YAML frontmatter in Git are the source of truth; vaultsync
validates them before a commit lands (``vaultsync check``), keeps derived
indices (SQLite FTS5 + LanceDB) in step with HEAD after it lands
(``vaultsync sync``), and serves hybrid multilingual search
(``vaultsync search`` / ``git memsearch``).
"""

import os

__version__ = "0.1.0"

# onnxruntime (1.2x+, also on Linux) starts Microsoft's 1DS telemetry when imported: it writes a device id
# under ~/.cache/Microsoft/DeveloperTools and queues events for an HTTPS endpoint. vaultsync runs offline;
# this switch, read by onnxruntime's native library when it loads, keeps it off unless a user set it.
if not os.environ.get("ORT_DISABLE_TELEMETRY"):  # unset or empty: an empty value leaves it on
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"

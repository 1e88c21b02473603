"""memory_id allocation: ``PREFIX-NNNN``, the next free number of the type's prefix in the vault.

The prefix of a type is, in order: ``types.T.id_prefix`` in ``.vaultsync.yaml``; the prefix
most notes of that type already use; the built-in one (ADR, INC, RULE); the type's name in
capitals. The number is one more than the highest in use for that prefix anywhere in the
vault; its width follows the widest existing one (at least 4 digits, as in the schemas'
examples ``ADR-0007``, ``INC-0012``). Callers allocate under :meth:`Workspace.lock`.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter

from vaultsync.memory.errors import MemoryWriteError
from vaultsync.vault.config import Config
from vaultsync.vault.vault import Vault

BUILTIN_PREFIXES = {"adr": "ADR", "incident": "INC", "rule": "RULE"}
MAX_DIGITS = 6  # as the built-in schemas' memory_id pattern allows
MEMORY_ID = re.compile(rf"^([A-Z][A-Z0-9]*)-([0-9]{{1,{MAX_DIGITS}}})$")
MIN_WIDTH = 4


def type_prefix(config: Config, vault: Vault, type_name: str) -> str:
    """The memory_id prefix of ``type_name`` (see the module docstring)."""
    spec = (config.raw.get("types") or {}).get(type_name) or {}
    if isinstance(spec.get("id_prefix"), str):
        return str(spec["id_prefix"])
    used: Counter[str] = Counter()
    for note in vault.notes.values():
        fm = note.frontmatter or {}
        m = MEMORY_ID.match(str(fm.get("memory_id", "")))
        if m and fm.get("type") == type_name:
            used[m.group(1)] += 1
    if used:
        return used.most_common(1)[0][0]
    return BUILTIN_PREFIXES.get(type_name) or re.sub(r"[^A-Z0-9]", "", type_name.upper()) or "MEM"


def next_memory_id(vault: Vault, prefix: str) -> str:
    """``prefix-N`` with N one above the highest number in use for ``prefix`` (zero-padded): in a memory_id,
    or in a file name (``ADR-0007-….md``: a note whose frontmatter cannot be read still holds its id). A
    number of more than :data:`MAX_DIGITS` digits in a file name is no id (the form allows 1–6) and is not
    counted.

    Raises:
        MemoryWriteError: the highest id in use is ``prefix-999999``, the last the form allows (naming the
            file that holds it).
    """
    highest, width, holder = 0, MIN_WIDTH, ""
    named = re.compile(rf"{re.escape(prefix)}-([0-9]{{1,{MAX_DIGITS}}})(?=-|\.md$)", re.IGNORECASE)
    numbers = [(m.group(2), path) for mid, paths in vault.by_memory_id.items()
               if (m := MEMORY_ID.match(mid)) and m.group(1) == prefix for path in paths[:1]]
    numbers += [(m.group(1), path) for path in vault.files if (m := named.match(posixpath.basename(path)))]
    for number, path in numbers:
        if int(number) > highest:
            highest, holder = int(number), path
        width = max(width, len(number))
    if highest >= 10 ** MAX_DIGITS - 1:
        raise MemoryWriteError(f"no {prefix} memory_id is left: {holder} holds {prefix}-{highest}, the highest the "
                               f"form {prefix}-N (at most {MAX_DIGITS} digits) allows — renumber that note, or set "
                               "another id_prefix for the type in .vaultsync.yaml")
    return f"{prefix}-{highest + 1:0{width}d}"

"""Repeated mapping keys (FM007): the same text, or two spellings a YAML 1.1 reader loads as one key.

vaultsync keeps every key as its text, but a note is also read by others (Obsidian, Python's
``yaml.safe_load``): there ``~:`` and ``null:``, ``0x1:`` and ``1:``, ``true:`` and ``True:`` are one
key, and the last value silently wins. Two keys are one where their text is (after NFC) or where PyYAML's
SafeLoader loads both to the same null, boolean, number (``1`` and ``1.0``) or date. A boolean is not
taken for a number (``true`` and ``1`` are two keys to YAML, though a Python dict would merge them).
A quoted ``"1"`` is the string, not the number ``1``: only plain scalars are resolved.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

import yaml

from vaultsync.vault.core_schema import STR, core_tag
from vaultsync.vault.yamlsafety import YamlProblem, each_node

_YAML11 = yaml.resolver.Resolver()  # PyYAML's YAML 1.1 implicit resolution (SafeLoader's)
_SAFE = yaml.constructor.SafeConstructor()
_NAN = object()  # every NaN key is one key to a reader of the text, though NaN != NaN
_NULL = object()  # apart from any key's text (``seen`` holds both)


def loaded_key(node: yaml.ScalarNode) -> Any:
    """What ``yaml.safe_load`` makes of the plain key scalar ``node`` when it is not a string (None, a bool,
    a number, a date), else None: a string key is compared by its text."""
    if node.style not in (None, ""):  # quoted or a block scalar: a string
        return None
    explicit = node.tag != core_tag(node.value)  # "!!str null", "! 1" (retagged as a string)
    tag = node.tag if explicit else _YAML11.resolve(yaml.ScalarNode, node.value, (True, False))
    if tag == STR:
        return None
    try:
        value = _SAFE.yaml_constructors[tag](_SAFE, yaml.ScalarNode(tag, node.value))
    except (KeyError, ValueError, TypeError, OverflowError, yaml.YAMLError):  # "2024-02-30", "<<": no value
        return None
    if isinstance(value, float) and math.isnan(value):
        return _NAN
    return _NULL if value is None else ("bool" if isinstance(value, bool) else "value", value)


def _shown(loaded: Any) -> str:
    """A :func:`loaded_key` as YAML writes it: ``null``, ``.nan``, ``true``, ``1``."""
    if not isinstance(loaded, tuple):
        return ".nan" if loaded is _NAN else "null"
    value = loaded[1]
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return str(value).lower() if loaded[0] == "bool" else str(value)


def repeated(seen: dict[Any, yaml.Node], key_node: yaml.ScalarNode) -> YamlProblem | None:
    """FM007 when ``key_node`` repeats a key of ``seen`` (its mapping's keys so far, by NFC text and by
    :func:`loaded_key`), else None; ``key_node`` is added to ``seen`` where its text or value is new."""
    key = str(key_node.value)
    same = unicodedata.normalize("NFC", key)  # "título" typed twice, once decomposed, is one key to a reader
    mark = key_node.start_mark
    if same in seen and seen[same] is key_node:  # "&k key: 1" then "*k : 2": the alias is this very node
        return YamlProblem(mark.line, mark.column, f"duplicate key '{key}': an alias of this key repeats it "
                           "in the same mapping", code="FM007")
    loaded = loaded_key(key_node)
    first = seen.get(same) or (seen.get(loaded) if loaded is not None else None)
    seen.setdefault(same, key_node)  # a repeated key too: `~`, `null`, then `'null'` repeats the second's text
    if loaded is not None:
        seen.setdefault(loaded, key_node)
    if first is None:
        return None
    if str(first.value) == key:
        spelled = ""
    elif unicodedata.normalize("NFC", str(first.value)) == same:
        spelled = ", spelled with other Unicode code points"
    else:
        spelled = f" as '{first.value}': YAML reads both as the key {_shown(loaded_key(first))}"
    return YamlProblem(mark.line, mark.column,
                       f"duplicate key '{key}' (first defined on line {{first}}{spelled})",  # see render()
                       code="FM007", other_line=first.start_mark.line)


def every_repeated_key(root: yaml.Node) -> list[YamlProblem]:
    """FM007 for every repeated key of every mapping in the tree, in the order of the text."""
    found = []
    for node in each_node(root):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Node] = {}
            found += [p for k, _ in node.value if isinstance(k, yaml.ScalarNode) and (p := repeated(seen, k))]
    return sorted(found, key=lambda p: (p.line, p.col))

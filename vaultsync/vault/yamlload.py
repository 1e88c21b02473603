"""A strict, safe YAML loader for frontmatter.

Differences from ``yaml.safe_load`` (all deliberate, see field cases FM-01..FM-11):

* YAML 1.2 core schema for scalars: only ``true``/``false`` (any capitalisation
  of those two words) are booleans, so ``NO``, ``yes``, ``on`` stay strings;
  integers are decimal, ``0o``/``0x`` only (no sexagesimal ``1:20``, no ``_``).
* Timestamps are never resolved: ``2024-03-01`` stays the string it was written as.
* Duplicate mapping keys are an error naming both lines, at any depth.
* Only the safe standard tags construct; any other tag (``!!python/...``, ``!Ref``)
  is an error, and nothing is ever executed.
* Aliases are allowed, but a document whose alias-expanded size exceeds
  ``MAX_EXPANDED_NODES`` is rejected ("billion laughs", :mod:`vaultsync.vault.yamlsafety`).
* Mapping keys are always strings: a non-scalar key is an error.

Errors are :class:`YamlProblem` with a 0-based line/column relative to the YAML
text; callers add the frontmatter's offset in the Markdown file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import yaml

from vaultsync.vault.core_schema import (
    BOOL,
    MAP,
    MAX_NUMBER_CHARS,
    NULL,
    NUMBER_START,
    SCALARS,
    SEQ,
    STR,
    core_tag,
)
from vaultsync.vault.scalars import Finding, odd_number_text, scalar_findings
from vaultsync.vault.tabs import compose_past_blank_tabs
from vaultsync.vault.yamlhints import explain
from vaultsync.vault.yamlkeys import every_repeated_key, repeated
from vaultsync.vault.yamlsafety import YamlProblem, check_tags_and_size, each_node, short_tag

try:  # libyaml's parser and composer are ~10x faster; fall back to pure Python
    from yaml.cyaml import CParser as _BaseLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

# libyaml's refusal of `|` content whose first line starts with a tab after the indentation (YAML allows it)
_LIBYAML_BLOCK_TAB = "found a tab character where an indentation space is expected"




class _CoreResolution:
    """The YAML 1.2 core schema's tag resolution, for a parser and composer whose node tree is all
    that is used: :func:`_build` turns it into data (strict mappings, core-schema scalars) in one
    pass, several times faster than PyYAML's generic constructor.
    """

    odd_numbers = False  # a plain scalar that starts like a number gives a fidelity finding

    def descend_resolver(self, parent: Any, index: Any) -> None:  # noqa: D102 - no path resolvers here
        pass

    def ascend_resolver(self) -> None:  # noqa: D102
        pass

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:  # noqa: D102
        if kind is yaml.ScalarNode:
            if implicit[0]:  # plain scalar
                tag = core_tag(value)
                if tag not in (NULL, BOOL) and value[0] in NUMBER_START and not self.odd_numbers and \
                        len(value) <= MAX_NUMBER_CHARS and odd_number_text(value, SCALARS[tag](value)):
                    self.odd_numbers = True  # longer: _build refuses it
                return tag
            return STR
        return SEQ if kind is yaml.SequenceNode else MAP




class _StrictLoader(_CoreResolution, _BaseLoader):  # type: ignore[misc,valid-type]
    """libyaml's parser and composer with :class:`_CoreResolution`."""


class _PureLoader(_CoreResolution, yaml.SafeLoader):
    """PyYAML's own parser and composer with :class:`_CoreResolution`: for the block scalars libyaml
    refuses (a first content line that starts with a tab after its indentation, valid YAML)."""


def _build(node: yaml.Node) -> Any:
    """The data of a composed node (tags already checked by :func:`_check_tags_and_size`).

    Mapping keys are strings (their source text); a duplicate key or a non-scalar
    key is a :class:`YamlProblem`. Raises ValueError for an explicit tag whose text
    does not fit (``!!int abc``).
    """
    if isinstance(node, yaml.ScalarNode):
        if node.tag not in SCALARS:
            return node.value
        try:
            return SCALARS[node.tag](node.value)
        except (ValueError, TypeError, OverflowError):  # "!!int abc": said at the value, not the document
            mark = node.start_mark
            shown = node.value if len(node.value) <= 60 else f"{node.value[:40]}… ({len(node.value):,} characters)"
            raise YamlProblem(mark.line, mark.column, f"{shown!r} is not a valid {short_tag(node.tag)}") from None
    if node.tag != (SEQ if isinstance(node, yaml.SequenceNode) else MAP):  # "!!str [a, b]"
        mark = node.start_mark
        kind = "list" if isinstance(node, yaml.SequenceNode) else "mapping"
        raise YamlProblem(mark.line, mark.column, f"a {kind} cannot be tagged {short_tag(node.tag)}")
    if isinstance(node, yaml.SequenceNode):
        return [_build(item) for item in node.value]
    seen: dict[Any, yaml.Node] = {}
    mapping: dict[str, Any] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            mark = key_node.start_mark
            raise YamlProblem(mark.line, mark.column, "mapping keys must be plain strings")
        twice = repeated(seen, key_node)
        if twice is not None:
            raise twice
        mapping[str(key_node.value)] = _build(value_node)
    return mapping


@dataclass
class YamlDocument:
    """A loaded YAML document: ``data``, its fidelity ``findings``, and the 0-based (line, col) of every value.

    ``findings`` lists the plain scalars whose stored value differs from their
    text (see :mod:`vaultsync.vault.scalars`). ``positions`` maps a path tuple (keys and list indices, as in JSON Schema's
    ``absolute_path``) to the position of that value's node; the key of a mapping
    entry is at ``key_positions[path]``. Positions are only computed by
    :func:`yaml_positions` when a caller needs them.
    """

    data: Any
    positions: dict[tuple[Any, ...], tuple[int, int]]
    key_positions: dict[tuple[Any, ...], tuple[int, int]]
    findings: list[Finding] = field(default_factory=list)


_MAYBE_TAG_OR_ALIAS = re.compile(r"[!&*]")


def load_yaml(text: str, with_positions: bool = True) -> YamlDocument:
    """Parse one YAML document strictly.

    Args:
        text: the YAML source (LF line endings).
        with_positions: also build the position maps (skip for speed, then call
            :func:`yaml_positions` on demand).
    Returns:
        YamlDocument with the data (and positions when asked).
    Raises:
        YamlProblem: syntax error, tab indentation, duplicate key, unsafe tag,
            alias bomb, more than one document, or a character YAML forbids.
    """
    blanked: list[tuple[int, int, str]] = []
    try:
        loader, node, text = compose_past_blank_tabs(text, _compose, blanked)
    except yaml.MarkedYAMLError as exc:
        raise _problem_from(exc, text) from None
    except yaml.reader.ReaderError:
        raise _reader_problem(text) from None
    except RecursionError:
        raise YamlProblem(0, 0, "YAML nested too deeply") from None
    try:
        if node is None:
            return YamlDocument(None, {}, {})
        if _MAYBE_TAG_OR_ALIAS.search(text):  # no '!', '&', '*' anywhere: no tags, no aliases
            check_tags_and_size(node)
            if "!" in text:
                _non_specific_tags(node, text.split("\n"))
        try:
            data = _build(node)
        except YamlProblem as exc:  # a repeated key: every one is said at once, not one per run
            if exc.code == "FM007" and len(every := every_repeated_key(node)) > 1:
                raise replace(every[0], also=tuple(every[1:])) from None
            raise
        except yaml.MarkedYAMLError as exc:
            raise _problem_from(exc, text) from None
        except (ValueError, TypeError, RecursionError) as exc:
            mark = node.start_mark
            raise YamlProblem(mark.line, mark.column, f"YAML error: {exc}") from None
        positions: dict[tuple[Any, ...], tuple[int, int]] = {}
        key_positions: dict[tuple[Any, ...], tuple[int, int]] = {}
        if with_positions:
            _index_positions(node, (), positions, key_positions, depth=0, lines=text.split("\n"))
        findings = scalar_findings(node, text, data, odd_numbers=loader.odd_numbers)
        if blanked:  # each a tab on a line of blanks or after a dash, which YAML 1.1 readers refuse
            findings = sorted(findings + [Finding("tab", (), line, col, kind, None) for line, col, kind in blanked],
                              key=lambda f: (f.line, f.col))
        return YamlDocument(data, positions, key_positions, findings)
    except RecursionError:
        raise YamlProblem(0, 0, "YAML nested too deeply") from None
    finally:
        loader.dispose()


_NON_SPECIFIC = re.compile(r"(?:&\S+\s+)?!(?:\s|$)")  # an optional anchor, then "!" alone


def _non_specific_tags(root: yaml.Node, lines: list[str]) -> None:
    """Scalars tagged ``!`` (the non-specific tag: ``! 123``, ``! "7"``) are strings (YAML 1.2 §6.9.1, §3.3.2).

    libyaml and PyYAML resolve them as plain scalars (123, an int); the node's start mark is at its
    anchor or tag, so the source text there tells them apart. Retags in place.
    """
    for node in each_node(root):
        mark = node.start_mark
        if isinstance(node, yaml.ScalarNode) and node.tag != STR and mark.line < len(lines) \
                and _NON_SPECIFIC.match(lines[mark.line], mark.column):
            node.tag = STR


def _compose(text: str) -> tuple[Any, yaml.Node | None]:
    """``(loader, node tree)`` of one YAML document: libyaml's, or PyYAML's own where libyaml refuses a
    block scalar YAML allows (:data:`_LIBYAML_BLOCK_TAB`). The caller disposes of the loader.

    Raises:
        yaml.MarkedYAMLError, yaml.reader.ReaderError: the text is not one YAML document.
    """
    loader = _StrictLoader(text)
    try:
        return loader, loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        loader.dispose()
        if exc.problem != _LIBYAML_BLOCK_TAB:
            raise
    except BaseException:
        loader.dispose()
        raise
    loader = _PureLoader(text)
    try:
        return loader, loader.get_single_node()
    except BaseException:
        loader.dispose()
        raise


def yaml_positions(
    text: str,
) -> tuple[dict[tuple[Any, ...], tuple[int, int]], dict[tuple[Any, ...], tuple[int, int]], dict[tuple[Any, ...], str]]:
    """(value positions, key positions, raw scalar texts) of a YAML text that :func:`load_yaml` accepted.

    The raw text of a one-line scalar is its source as written, quotes included.
    """
    loader, node, text = compose_past_blank_tabs(text, _compose, [])
    try:
        positions: dict[tuple[Any, ...], tuple[int, int]] = {}
        key_positions: dict[tuple[Any, ...], tuple[int, int]] = {}
        raw: dict[tuple[Any, ...], str] = {}
        if node is not None:
            _index_positions(node, (), positions, key_positions, depth=0, raw=raw, lines=text.split("\n"))
        return positions, key_positions, raw
    finally:
        loader.dispose()


def _index_positions(
    node: yaml.Node,
    path: tuple[Any, ...],
    positions: dict[tuple[Any, ...], tuple[int, int]],
    key_positions: dict[tuple[Any, ...], tuple[int, int]],
    depth: int,
    raw: dict[tuple[Any, ...], str] | None = None,
    lines: list[str] | None = None,
    seen: set[int] | None = None,
    after: tuple[int, int] | None = None,
) -> tuple[int, int] | None:
    """Fill the tables for ``node`` at ``path``; return where its source ends, ``(line, col)``, when known.

    An alias (a node met again) sits at its ``*name`` — the first after ``after``, the end of what precedes
    it — not at its anchor's value: ``projects: *t`` is reported on its own line.
    """
    if path in positions or depth > 50:
        return None
    start = node.start_mark
    seen = set() if seen is None else seen
    alias = _alias_at(lines, after) if id(node) in seen and lines is not None and after is not None else None
    seen.add(id(node))
    positions[path] = alias[0] if alias else _content_start(node, lines) or (start.line, start.column)
    if alias is None and isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            child = path + (str(k.value),)
            key_positions[child] = (k.start_mark.line, k.start_mark.column)
            _index_positions(v, child, positions, key_positions, depth + 1, raw, lines, seen,
                             (k.end_mark.line, k.end_mark.column))
    elif alias is None and isinstance(node, yaml.SequenceNode):
        cursor: tuple[int, int] | None = (start.line, start.column + 1)
        for i, v in enumerate(node.value):
            cursor = _index_positions(v, path + (i,), positions, key_positions, depth + 1, raw, lines, seen, cursor)
    if isinstance(node, yaml.ScalarNode) and raw is not None and lines is not None \
            and start.line == node.end_mark.line < len(lines):
        raw[path] = lines[start.line][start.column:node.end_mark.column]
    return alias[1] if alias else (node.end_mark.line, node.end_mark.column)


def _content_start(node: yaml.Node, lines: list[str] | None) -> tuple[int, int] | None:
    """Where a block scalar's (``key: |``) text starts, its first line with text at its indentation: a
    message about the value stands there, not at the ``|`` or ``>``. None for any other node, and for one
    with no text (its end mark lies on the next key's line: the indicator is where it is)."""
    if lines is None or not isinstance(node, yaml.ScalarNode) or node.style not in ("|", ">") \
            or not node.value.strip():
        return None
    for i in range(node.start_mark.line + 1, min(node.end_mark.line + 1, len(lines))):
        if lines[i].strip():
            return i, len(lines[i]) - len(lines[i].lstrip(" "))
    return None


_ALIAS = re.compile(r"(?:^|(?<=[\s,\[{:-]))\*[^\s,\[\]{}]+")  # `*name` where a value starts
_COMMENT = re.compile(r"(?:^|\s)#")


def _alias_at(lines: list[str], after: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """``(start, end)`` of the first ``*name`` at or after ``after`` (0-based line and column), a comment's
    text skipped, or None."""
    line, col = after
    for i in range(line, min(line + 50, len(lines))):  # an alias follows its key or the item before it closely
        text = lines[i]
        comment = _COMMENT.search(text, col if i == line else 0)
        found = _ALIAS.search(text[:comment.start() if comment else len(text)], col if i == line else 0)
        if found:
            return (i, found.start()), (i, found.end())
    return None


def _problem_from(exc: yaml.MarkedYAMLError, text: str) -> YamlProblem:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line, mark.column) if mark is not None else (0, 0)
    problem = exc.problem or str(exc)
    lines = text.split("\n")
    here = lines[line] if 0 <= line < len(lines) else ""
    indent = here[: len(here) - len(here.lstrip(" \t"))]
    if "\t" in indent or here[col : col + 1] == "\t":
        col = here.index("\t")
        where = "for indentation" if "\t" in indent else \
            "after a list item's '-', before a key or an item" if here[:col].strip() == "-" else "after a value"
        return YamlProblem(line, col, f"YAML error: tab used {where} (YAML needs spaces)", code="FM006")
    if "found undefined tag handle" in problem or "could not determine a constructor" in problem:
        return YamlProblem(line, col, f"unsupported YAML tag: {problem}", code="FM008")
    if "expected a single document" in problem or "but found another document" in problem:
        return YamlProblem(line, col, "frontmatter holds more than one YAML document", code="FM005")
    line, col, message = explain(exc, lines, line, col)
    first = exc.context_mark.line if "{first}" in message and exc.context_mark is not None else None
    return YamlProblem(line, col, message, other_line=first)


@lru_cache(maxsize=1)
def _not_printable() -> re.Pattern[str]:
    """YAML's non-printable characters (compiled on first use: the wide class costs ~10 ms)."""
    return re.compile(r"[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


def _reader_problem(text: str) -> YamlProblem:
    """FM018 at the first character outside YAML's printable set (YAML 1.2, section 5.1).

    The reader's own offset is not used: libyaml counts bytes, the pure-Python reader characters.
    """
    m = _not_printable().search(text)
    if m is None:  # pragma: no cover - the reader rejects only what the pattern matches
        return YamlProblem(0, 0, "YAML error: unprintable character in frontmatter", code="FM018")
    at, cp = m.start(), ord(m.group())
    line = text.count("\n", 0, at)
    col = at - (text.rfind("\n", 0, at) + 1)
    kind = "control character" if cp < 0x20 or 0x7F <= cp <= 0x9F else "non-character"
    escape = f"\\x{cp:02X}" if cp < 0x100 else f"\\u{cp:04X}"
    return YamlProblem(line, col, f"{kind} U+{cp:04X} is not allowed in YAML — delete it "
                                  f'(or write it as "{escape}" inside a double-quoted string)', code="FM018")

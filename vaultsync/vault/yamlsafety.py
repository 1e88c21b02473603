"""What a frontmatter may not hold: tags that construct anything but the core schema's values, and aliases
that recurse or expand past :data:`MAX_EXPANDED_NODES` nodes ("billion laughs"); and :class:`YamlProblem`,
the located error every YAML check raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import yaml

from vaultsync.vault.core_schema import BOOL, FLOAT, INT, MAP, NULL, SEQ, STR

MAX_EXPANDED_NODES = 10_000
SAFE_TAGS = {STR, INT, FLOAT, BOOL, NULL, SEQ, MAP}


@dataclass(frozen=True)
class YamlProblem(Exception):
    """A YAML error at ``line``/``col`` (0-based, relative to the YAML text)."""

    line: int
    col: int
    message: str
    code: str = "FM005"
    other_line: int | None = None  # duplicate keys: the first definition
    also: tuple[YamlProblem, ...] = ()  # more of the same kind, later in the text (repeated keys)

    def __str__(self) -> str:
        return self.message

    def render(self, line_offset: int) -> str:
        """The message with any referenced line shifted by ``line_offset`` and made 1-based."""
        if self.other_line is None:
            return self.message
        return self.message.replace("{first}", str(self.other_line + line_offset + 1))


def children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def each_node(root: yaml.Node) -> Iterator[yaml.Node]:
    """Every node of the tree once, an alias's target included only once (no expansion)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            yield node
            stack.extend(children(node))


def check_tags_and_size(root: yaml.Node) -> None:
    """Reject unsafe tags, recursive aliases and alias bombs in one post-order walk."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        mark = node.start_mark
        if expanded:
            total = 1
            for child in children(node):
                size = sizes.get(id(child))
                if size is None:
                    raise YamlProblem(mark.line, mark.column, "recursive YAML alias", code="FM009")
                total += size
            if total - len(sizes) > MAX_EXPANDED_NODES:  # nodes aliases add, not the document's own
                raise YamlProblem(
                    mark.line, mark.column,
                    f"YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes (alias bomb?)", code="FM009",
                )
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in visiting:
            raise YamlProblem(mark.line, mark.column, "recursive YAML alias", code="FM009")
        if node.tag not in SAFE_TAGS:
            raise _unsafe_tags(root)
        visiting.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(children(node)) if id(child) not in sizes)  # in order


def _unsafe_tags(root: yaml.Node) -> YamlProblem:
    """FM008 at the first unsupported tag in document order, naming the others after it."""
    found = [node for node in each_node(root) if node.tag not in SAFE_TAGS]
    first = min(found, key=lambda n: (n.start_mark.line, n.start_mark.column))
    others = list(dict.fromkeys(short_tag(n.tag) for n in sorted(found, key=lambda n: (n.start_mark.line,
                                                                                          n.start_mark.column))[1:]))
    also = f" (and after it {', '.join(repr(t) for t in others)})" if others else ""
    return YamlProblem(first.start_mark.line, first.start_mark.column,
                       f"unsupported YAML tag '{short_tag(first.tag)}'{also}", code="FM008")


def short_tag(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag

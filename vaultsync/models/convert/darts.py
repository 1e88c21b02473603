"""A darts-clone compatible double-array trie: the key index inside SentencePiece's
``precompiled_charsmap`` (and so inside a ``tokenizers`` ``Precompiled`` normaliser).

Format (darts-clone by Susumu Yata, as read by SentencePiece and by the
``spm_precompiled`` crate that ``tokenizers`` uses): an array of uint32
*units*. A unit holds a label (bits 0–7), a has-leaf flag (bit 8) and an
offset (bits 10–30, shifted left by 8 more when bit 9 is set); a value unit
has bit 31 set and the value in bits 0–30. Traversal from node ``p`` along
byte ``c``: ``child = p ^ offset(unit[p]) ^ c``, valid iff
``label(unit[child]) == c``; a node has a value iff its has-leaf flag is set,
stored at ``child_base = child ^ offset(unit[child])`` (the label-0 slot).

:func:`build` only needs to produce *an* array with these semantics (it does
not reproduce darts-clone's suffix sharing, so the array is larger); the
lookups :func:`common_prefix_search` and :func:`items` define correctness.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

_MAX_UNITS = 1 << 21  # offsets then always fit the unshifted 21-bit field
_BLOCK = 256
_OPEN_BLOCKS = 1


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _label(unit: int) -> int:
    return unit & ((1 << 31) | 0xFF)


def _has_leaf(unit: int) -> bool:
    return bool((unit >> 8) & 1)


def _value(unit: int) -> int:
    return unit & ((1 << 31) - 1)


def build(entries: Iterable[tuple[bytes, int]]) -> array[int]:
    """Build a double array mapping each non-empty byte-string key to a value (< 2**31).

    Keys must not contain NUL bytes. Returns ``array('I')`` of units.

    Raises:
        ValueError: on an empty or NUL-containing key, a duplicate key, or when the
            array would exceed 2**21 units.
    """
    keys = sorted(entries)
    for i, (k, v) in enumerate(keys):
        if not k or b"\0" in k:
            raise ValueError(f"invalid key {k!r}")
        if i and keys[i - 1][0] == k:
            raise ValueError(f"duplicate key {k!r}")
        if not 0 <= v < (1 << 31):
            raise ValueError(f"value out of range for {k!r}")
    units = array("I", [0]) * _BLOCK
    used = bytearray(_BLOCK)
    used_bases: set[int] = set()
    used[0] = 1
    open_begin = 0  # only the last _OPEN_BLOCKS blocks are searched (darts-clone does the same)

    def find_base(labels: list[int]) -> int:
        nonlocal open_begin, units, used
        p = used.find(0, open_begin)
        while p != -1:
            base = p ^ labels[0]  # every base ^ label stays inside p's 256-unit block
            if base not in used_bases and base != 0 and all(not used[base ^ c] for c in labels):
                return base
            p = used.find(0, p + 1)
        p = len(used)
        if p + _BLOCK > _MAX_UNITS:
            raise ValueError("double array too large")
        units.extend(array("I", [0]) * _BLOCK)
        used.extend(bytearray(_BLOCK))
        open_begin = max(open_begin, len(used) - _OPEN_BLOCKS * _BLOCK)
        return p ^ labels[0]

    # breadth-first over (node index, depth, begin, end) ranges of the sorted keys
    queue = [(0, 0, 0, len(keys))]
    qi = 0
    while qi < len(queue):
        node, depth, begin, end = queue[qi]
        qi += 1
        terminal = len(keys[begin][0]) == depth
        labels: list[int] = [0] if terminal else []
        groups: list[tuple[int, int, int]] = []
        i = begin + 1 if terminal else begin
        while i < end:
            c = keys[i][0][depth]
            j = i
            while j < end and keys[j][0][depth] == c:
                j += 1
            labels.append(c)
            groups.append((c, i, j))
            i = j
        base = find_base(labels)
        used_bases.add(base)
        units[node] |= ((node ^ base) << 10) | ((1 << 8) if terminal else 0)
        if terminal:
            used[base] = 1
            units[base] = (1 << 31) | keys[begin][1]
        for c, b, e in groups:
            child = base ^ c
            used[child] = 1
            units[child] = c
            queue.append((child, depth + 1, b, e))
    last = len(used.rstrip(b"\0"))
    return units[:last]


def common_prefix_search(units: array[int], key: bytes) -> list[int]:
    """Values of every key that is a prefix of ``key``, shortest first (the crate's order)."""
    out: list[int] = []
    pos = _offset(units[0])
    for c in key:
        if c == 0:
            break
        pos ^= c
        if pos >= len(units):
            break
        unit = units[pos]
        if _label(unit) != c:
            break
        pos ^= _offset(unit)
        if _has_leaf(unit):
            out.append(_value(units[pos]))
    return out


def items(units: array[int]) -> Iterator[tuple[bytes, int]]:
    """Enumerate every (key, value) of a double array (exhaustive comparison in tests)."""
    import numpy as np

    arr = np.frombuffer(units.tobytes(), dtype=np.uint32) if units.itemsize == 4 else np.asarray(units, dtype=np.uint32)
    n = len(arr)
    labels = np.arange(1, 256, dtype=np.int64)
    stack = [(_offset(int(arr[0])), b"")]
    while stack:
        base, prefix = stack.pop()
        pos = base ^ labels
        ok = pos < n
        cand_pos, cand_lab = pos[ok], labels[ok]
        u = arr[cand_pos].astype(np.int64)
        hit = (u & ((1 << 31) | 0xFF)) == cand_lab
        for child, c in zip(cand_pos[hit].tolist(), cand_lab[hit].tolist(), strict=True):
            unit = int(arr[child])
            nxt = child ^ _offset(unit)
            key = prefix + bytes([c])
            if _has_leaf(unit):
                yield key, _value(int(arr[nxt]))
            stack.append((nxt, key))

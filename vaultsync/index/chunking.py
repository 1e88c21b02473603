"""Heading-aware chunking of a note body.

A chunk is a run of whole blocks (paragraphs, list items, fenced code) under one
heading path. Sections longer than ``target_tokens`` are split between blocks
near the target. A block longer than ``MAX_BLOCK_FACTOR × target_tokens`` (a
pasted log, a list without blank lines, a fence of generated code, one line of
40,000 words) is cut into pieces near the target first, between lines, and a
line too long on its own between words: the embedder reads 512 tokens at most,
so the rest of such a block could never be found by meaning, and one chunk could
fill any token budget. Each chunk carries:

* ``id`` = ``path#n`` (``n`` from 0, stable for unchanged notes),
* ``heading`` = the heading path (``"Decision > Consequences"``),
* ``text`` (what BM25 indexes and search returns) and ``embed_text`` (title and
  heading path prepended, what the embedder sees),
* ``hash`` = sha256 of ``embed_text`` (the embedding-cache key),
* ``blocks`` = Obsidian block ids (``^id``) inside the chunk, for turn-level
  provenance, and 1-based file ``start_line``/``end_line``.

Token counts are estimated without a tokenizer (words and punctuation, one per
CJK character): within ~15 % of the XLM-R count on English and CJK prose, and
cheap enough for the commit hook path.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from vaultsync.index.format import DEFAULT_TARGET_TOKENS
from vaultsync.vault import markdown
from vaultsync.vault.headings import atx_heading, setext_headings

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W\d_]+|\d+|[^\w\s]", re.UNICODE)
_FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})")
_BLOCK_ID = re.compile(r"(?:^|\s|\]\])\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")
_WORD_RUNS = re.compile(r"\S+\s*")
MAX_BLOCK_FACTOR = 4  # a block over 4 × the target (400 estimated tokens by default) is cut: under 512 real ones


def estimate_tokens(text: str) -> int:
    """Approximate subword token count of ``text`` (see module docstring)."""
    return sum(2 if len(m) > 8 else 1 for m in _TOKEN.findall(text))


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable unit of a note (see module docstring for the fields)."""

    id: str
    path: str
    n: int
    heading: str
    text: str
    embed_text: str
    hash: str
    start_line: int
    end_line: int
    tokens: int
    blocks: tuple[str, ...]
    spans: tuple[tuple[int, int, tuple[str, ...]], ...] = ()  # (start, end, block ids) of each block in ``text``


@dataclass
class _Block:
    lines: list[str]
    start: int  # 0-based line index in the body
    alone: bool = False  # a piece cut from a blob by characters: a chunk of its own
    ids: tuple[str, ...] | None = None  # a piece's block ids (^id): those of the Obsidian blocks it is part of

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _blocks(body: str, masked: str) -> list[tuple[tuple[str, ...], list[_Block]]]:
    """Split the body into (heading path, blocks) sections; fences, and HTML comments, ``%%`` comments and
    ``$$`` math across blank lines, stay whole."""
    lines = body.split("\n")
    masked_lines = masked.split("\n")
    sections: list[tuple[tuple[str, ...], list[_Block]]] = [((), [])]
    stack: list[tuple[int, str]] = []
    current: _Block | None = None
    fence: str | None = None
    heading_at = 0
    setext = {h.line - 1: (h, under) for h, under in setext_headings(body, masked)  # paragraph, then ===/---
              if not masked_lines[h.line - 1].lstrip().startswith(">")}  # in a block quote: as an ATX one there
    skip_to = -1

    def keep_heading(upcoming: tuple[str, ...]) -> None:
        """A heading with nothing under it, which no later heading path carries, is a block of its own line:
        its words are indexed (``## Open questions`` as a note's last line)."""
        path, blocks = sections[-1]
        if path and not blocks and upcoming[:len(path)] != path:
            blocks.append(_Block([lines[heading_at]], heading_at))

    for i, line in enumerate(lines):
        if i <= skip_to:
            continue  # a setext heading's later lines and its underline
        if fence is None:
            heading = atx_heading(masked_lines[i]) if "#" in masked_lines[i] else None
            if heading is None and i in setext:
                heading, skip_to = setext[i][0][:2], setext[i][1]
            if heading is not None:
                level = heading[0]
                text = (atx_heading(line) or (0, ""))[1] if i not in setext else heading[1]
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, text))
                keep_heading(tuple(t for _, t in stack))
                sections.append((tuple(t for _, t in stack), []))
                heading_at, current = i, None
                continue
        fm = _FENCE.match(line)
        if fence is None and fm:
            fence = fm.group(1)[0] * 3
            if current is None:
                current = _Block([], i)
                sections[-1][1].append(current)
            current.lines.append(line)
            continue
        if fence is not None:
            current = current or _Block([], i)
            current.lines.append(line)
            if line.strip().lstrip(">").strip().startswith(fence):
                fence = None
                current = None
            continue
        if not line.strip():
            if current is not None and _open(current):
                current.lines.append(line)  # a blank line inside a comment or math: the block goes on
            else:
                current = None
            continue
        if current is None:
            current = _Block([], i)
            sections[-1][1].append(current)
        current.lines.append(line)
    keep_heading(())
    return [(path, blocks) for path, blocks in sections if blocks or path]


_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)


def _open(block: _Block) -> bool:
    """Whether ``block`` ends inside an HTML comment, an Obsidian ``%%`` comment or ``$$`` math, which
    CommonMark and Obsidian read on past blank lines to their close (search may deliver one block alone:
    half a comment would leave the rest of the answer inside it)."""
    text = _CODE_SPAN.sub("", block.text)  # `$$` or `%%` in a code span opens nothing
    return text.count("<!--") > text.count("-->") or text.count("$$") % 2 == 1 or text.count("%%") % 2 == 1


def chunk_note(path: str, title: str, body: str, body_line: int = 1,
               target_tokens: int = DEFAULT_TARGET_TOKENS) -> list[Chunk]:
    """Chunk a note body.

    Args:
        path: repository-relative note path (chunk ids are ``path#n``).
        title: the note title (frontmatter ``title``, first H1 or the file name).
        body: Markdown after the frontmatter.
        body_line: 1-based file line of the body's first line.
        target_tokens: split long sections near this many (estimated) tokens.
    Returns:
        Chunks in document order; a note with an empty body yields one chunk
        holding the title, so every note is findable.
    """
    masked = markdown.mask_code(body)
    chunks: list[Chunk] = []
    for heading_path, whole in _blocks(body, masked):
        blocks = [piece for block in whole for piece in _pieces(block, target_tokens)]
        group: list[_Block] = []
        size = 0
        for block in blocks + [None]:  # type: ignore[list-item]
            block_tokens = 0 if block is None else target_tokens if block.alone else estimate_tokens(block.text)
            if group and (block is None or size + block_tokens > target_tokens):
                chunks.append(_make(path, title, heading_path, group, body_line, len(chunks)))
                group, size = [], 0
            if block is not None:
                group.append(block)
                size += block_tokens
    if not chunks:
        chunks.append(_make(path, title, (), [], body_line, 0))
    return chunks


def _pieces(block: _Block, target_tokens: int) -> list[_Block]:
    """``block`` whole, or cut near ``target_tokens`` when it is too long (:func:`_too_long`): between
    lines, and a line too long on its own between words (each piece keeps its line)."""
    if not _too_long(block.text, target_tokens):
        return [block]
    owners = _line_ids(block.lines)
    out: list[_Block] = []
    size = 0
    for i, line in enumerate(block.lines):
        if not line.strip():
            if out:
                out[-1].lines.append(line)  # a blank line in a fence starts no piece of its own
            continue
        if _too_long(line, target_tokens):
            out.extend(_Block([part], block.start + i, alone, owners[i]) for part, alone in _split_line(line, target_tokens))
            size = target_tokens  # a cut line's last piece takes nothing more
            continue
        tokens = estimate_tokens(line)
        if out and size + tokens <= target_tokens:
            out[-1].lines.append(line)
            out[-1].ids = tuple(dict.fromkeys((out[-1].ids or ()) + owners[i]))
            size += tokens
        else:
            out.append(_Block([line], block.start + i, ids=owners[i]))
            size = tokens
    return out


def _line_ids(lines: list[str]) -> list[tuple[str, ...]]:
    """For each line, the block id (``^id``) of the Obsidian block it is part of: an id ends a
    paragraph and names all of it, or a list item (from its marker line on); ``()`` where none."""
    owners: list[tuple[str, ...]] = [()] * len(lines)
    start = 0
    for i, line in enumerate(lines):
        if markdown.LIST_ITEM.match(line[markdown.CONTAINER.match(line).end():]):
            start = i  # an item starts a block of its own
        m = _BLOCK_ID.search(line)
        if m:
            owners[start:i + 1] = [(m.group(1),)] * (i + 1 - start)
            start = i + 1
    return owners


def _too_long(text: str, target_tokens: int) -> bool:
    """Over ``MAX_BLOCK_FACTOR × target_tokens`` estimated tokens, or over that many characters × 4 (a
    blob, whose estimate is far below its real token count)."""
    cap = MAX_BLOCK_FACTOR * target_tokens
    return len(text) > 4 * cap or estimate_tokens(text) > cap


def _split_line(line: str, target_tokens: int) -> list[tuple[str, bool]]:
    """``line`` cut between words into runs of about ``target_tokens``; a word over that (CJK text holds
    no spaces) or over ``4 × target_tokens`` characters (a blob) is cut every ``target_tokens``
    characters (a token per character at most). Returns ``(piece, cut by characters)`` pairs."""
    parts: list[tuple[str, bool]] = []
    current, size = "", 0
    for m in _WORD_RUNS.finditer(line):
        word = m.group(0)
        tokens = estimate_tokens(word)
        if tokens > target_tokens or len(word) > 4 * target_tokens:
            if current.strip():
                parts.append((current.rstrip(), False))
            parts.extend((word[i:i + target_tokens], True) for i in range(0, len(word), target_tokens))
            current, size = "", 0
            continue
        if current and size + tokens > target_tokens:
            parts.append((current.rstrip(), False))
            current, size = "", 0
        current += word
        size += tokens
    if current.strip():
        parts.append((current.rstrip(), False))
    parts = [(p, alone) for p, alone in parts if p.strip()]
    return parts or [(line, False)]


def embed_text_of(title: str, heading: str, text: str) -> str:
    """What the embedder reads of a chunk: its note's title, its heading path, then its text (its
    ``hash`` is this text's sha256). Search gives MaxSim the same text, so it finds the token vectors a
    sync stored by that hash (:mod:`vaultsync.index.token_vectors`)."""
    context = "\n".join(part for part in (title, heading) if part)
    return f"{context}\n{text}".strip() if text else context


def _make(path: str, title: str, heading_path: tuple[str, ...], group: list[_Block], body_line: int, n: int) -> Chunk:
    joined = "\n\n".join(b.text for b in group)
    text = joined.strip()
    # A heading that repeats the title (the usual H1) is dropped: the title travels separately.
    heading = " > ".join(h for h in heading_path if h and h.casefold() != title.casefold())
    embed_text = embed_text_of(title, heading, text)
    start = (group[0].start if group else 0) + body_line
    end = (group[-1].start + len(group[-1].lines) - 1 if group else 0) + body_line
    blocks = tuple(dict.fromkeys(block_id for b in group for block_id in _ids(b)))
    digest = hashlib.sha256(embed_text.encode("utf-8")).hexdigest()
    return Chunk(id=f"{path}#{n}", path=path, n=n, heading=heading, text=text or title, embed_text=embed_text,
                 hash=digest, start_line=start, end_line=end, tokens=estimate_tokens(embed_text), blocks=blocks,
                 spans=_spans(group, len(joined) - len(joined.lstrip()), text))


def _spans(group: list[_Block], lead: int, text: str) -> tuple[tuple[int, int, tuple[str, ...]], ...]:
    """Where each block of ``group`` lies in the chunk's ``text`` (its blocks joined by a blank line, then
    stripped of ``lead`` characters), without its own surrounding white space; blank blocks are left out."""
    out, at = [], -lead
    for b in group:
        piece = b.text
        start, end = at + len(piece) - len(piece.lstrip()), at + len(piece.rstrip())
        at += len(piece) + 2
        if end > start:
            out.append((max(start, 0), min(end, len(text)), _ids(b)))
    return tuple(out)


def block_key(chunk: Chunk) -> tuple[str, tuple[tuple[int, int, tuple[str, ...]], ...]]:
    """What a chunk's block row belongs to (:mod:`vaultsync.index.block_vectors`): chunks alike in what
    the embedder reads (their hash) may differ in text (a heading ``## X`` against a first line ``X``),
    in spans, or in a block id outside their text (a piece cut from a long paragraph carries its ``^id``)."""
    return chunk.hash, chunk.spans


def _ids(block: _Block) -> tuple[str, ...]:
    if block.ids is not None:
        return block.ids
    return tuple(m.group(1) for line in block.lines for m in [_BLOCK_ID.search(line)] if m)


def title_chunks(path: str, title: str, aliases: list[str]) -> list[Chunk]:
    """The note's *name vectors*: ``path#title`` and one ``path#alias:N`` per alias.

    They are never returned as hits; they let a note rank by its name, which is
    what a known-item query in another language matches best (a translated
    title against a 200-token section dilutes; one vector per name beats one
    vector of all names joined — see docs/eval.md).
    """
    names = list(dict.fromkeys(n.strip() for n in [title, *aliases] if n and n.strip()))
    out = []
    for i, name in enumerate(names):
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()
        out.append(Chunk(id=f"{path}#title" if i == 0 else f"{path}#alias:{i}", path=path, n=-1 - i, heading="",
                         text=name, embed_text=name, hash=digest, start_line=0, end_line=0,
                         tokens=estimate_tokens(name), blocks=()))
    return out

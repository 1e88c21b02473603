"""Output formats of a search: text (people), markdown (what an agent pastes into its context), JSON.

Every format shows each hit's relevance and note identity, says how many blocks of its chunk it left
out, says "nothing relevant" with the best rejected candidate when the floor left no hit, says when the
hits it has are weak, and lists what the filters hid.
"""

from __future__ import annotations

import json

from vaultsync.diagnostics import terminal_safe
from vaultsync.search.results import ELISION, WEAK_RELEVANCE, Hit, SearchResult


def _identity(h: Hit) -> str:
    """``relevance 0.82 · adr · accepted · confidence 0.9 · created … · expires … · replaces … · shown by
    an include flag: expired …`` (unset parts left out)."""
    parts = [f"relevance {shown_relevance(h.relevance)}" if h.relevance is not None else f"score {h.score:.3f}"]
    parts += [v for v in (h.memory_id, h.type, h.status) if v]
    if h.confidence is not None:
        parts.append(f"confidence {h.confidence:g}")
    parts += [f"{k} {v}" for k, v in (("created", h.created), ("expires", h.expires), ("replaces", h.replaces)) if v]
    if h.lifted:
        parts.append(f"shown by an include flag: {', '.join(h.lifted)}")
    return _one_line(" · ".join(parts))  # a memory_id or status may hold a line break too


def shown_relevance(p: float) -> str:
    """A relevance as people read it: two decimals, three under 0.1, four under 0.02 (the floor is 0.006 and
    the weak line 0.015: a candidate turned away at 0.0059 must not read "0.006", a weak 0.0149 not "0.015",
    nor one at 0.0004 "0.000")."""
    return f"{p:.2f}" if p >= 0.1 else f"{p:.3f}" if p >= 0.02 else f"{p:.4f}"


def nothing_relevant(result: SearchResult) -> str:
    """The one-line answer of an empty result."""
    if result.min_relevance is None:
        return "no matching memories"
    best = result.best_rejected
    tail = f" (best: {best['chunk_id']} at {shown_relevance(best['relevance'])})" if best else ""
    return f"no memory above relevance {result.min_relevance:g}{tail}"


def weak_answer(result: SearchResult) -> str | None:
    """The line that says the hits may not answer the query (:attr:`SearchResult.weak`), or None."""
    if not result.weak:
        return None
    best = max(h.relevance for h in result.hits if h.relevance is not None)  # type: ignore[type-var]
    return (f"weak answer: the best relevance is {shown_relevance(best)}, under {WEAK_RELEVANCE:g} — "
            "these hits may not answer the question")


def hidden_lines(result: SearchResult) -> list[str]:
    """One line per matching note the filters hid: ``path (memory_id): reason — to show it: FLAG``
    (a flag to add, or ``without --type`` and the like); a note under :data:`WEAK_RELEVANCE` is called a weak
    match, and when every one is, so is the heading: a filter hides no answer then."""
    notes = (result.hidden or {}).get("notes") or []
    weak = [n for n in notes if n.get("relevance") is not None and n["relevance"] < WEAK_RELEVANCE]
    how = "weakly matching" if weak and len(weak) == len(notes) else "matching"  # (a "no memory" answer's, often)
    lines = [f"{len(notes)} {how} note{'s' if len(notes) != 1 else ''} hidden by filters:"] if notes else []
    for n in notes:
        mid = f" ({n['memory_id']})" if n.get("memory_id") else ""
        said = f" — a weak match (relevance {shown_relevance(n['relevance'])})" if n in weak else ""
        lines.append(f"  {n['path']}{mid}: {n['reason']}{said} — to show it: {n['show_with']}")
    if len({n["show_with"] for n in notes}) > 1 and result.hidden.get("show_all"):  # the notes need other flags
        lines.append(f"  to show them all: {result.hidden['show_all']}")
    return lines


def _trace(trace: dict[str, dict[str, float]]) -> str:
    parts = []
    for stage in ("bm25", "dense", "fusion", "supersedes", "graph", "rerank", "relevance", "final"):
        if stage in trace:
            fields = ", ".join(f"{k}={v}" for k, v in trace[stage].items())
            parts.append(f"{stage}({fields})")
    return " → ".join(parts)


def render(result: SearchResult, fmt: str, explain: bool = False) -> str:
    """Format ``result`` as ``text``, ``markdown`` or ``json``, with no control character a terminal acts
    on (:func:`vaultsync.diagnostics.terminal_safe`; in JSON its escape is JSON's own, so nothing is lost)."""
    if fmt == "json":
        data = result.to_dict()
        if not explain:
            for hit in data["hits"]:
                hit.pop("trace", None)
        return terminal_safe(json.dumps(data, ensure_ascii=False, indent=2))
    return terminal_safe(_markdown(result, explain) if fmt == "markdown" else _text(result, explain))


def _markdown(result: SearchResult, explain: bool) -> str:
    lines = [f"## Memory search: {_one_line(result.query)}\n"]
    for w in result.warnings:
        lines.append(f"> ⚠ {w}\n")
    for i, h in enumerate(result.hits, 1):
        lines.append(f"### {i}. `{h.chunk_id}` — {_place(h)}\n")
        lines.append(f"_{_identity(h)}_\n")
        if h.text.strip():
            lines.append(h.text.strip() + "\n")
        if h.left_out:
            lines.append(f"_{_left_out(h)} of this chunk (lines {h.start_line}-{h.end_line}) left out_\n")
        if h.links:
            lines.append("Links: " + ", ".join(f"`{p}`" for p in h.links) + "\n")
        if explain:
            lines.append(f"<!-- {_trace(h.trace)} -->\n")
    if not result.hits:
        lines.append(f"_{nothing_relevant(result)}._\n")
    if weak := weak_answer(result):
        lines.append(f"_{weak}._\n")
    hidden = hidden_lines(result)
    if hidden:
        lines.append("> " + "\n> ".join(hidden) + "\n")
    hits = f"{len(result.hits)} hit{'' if len(result.hits) == 1 else 's'}"
    lines.append(f"<!-- {hits}, {sum(h.tokens for h in result.hits)} tokens "
                 f"({result.token_counter}); rerank: {result.rerank or 'off'} -->")
    return "\n".join(lines)


def _text(result: SearchResult, explain: bool) -> str:
    lines: list[str] = []
    for w in result.warnings:
        lines.append(f"warning: {w}")
    for i, h in enumerate(result.hits, 1):
        part = f"; {_left_out(h)} left out" if h.left_out else ""
        lines.append(f"{i}. {h.chunk_id}  (lines {h.start_line}-{h.end_line}{part})")
        lines.append(f"   {_place(h)}")
        lines.append(f"   {_identity(h)}")
        snippet = " ".join(h.text.replace(ELISION, " […] ").split())  # […]: blocks left out; … at the end: cut
        if snippet:
            lines.append(f"   {snippet[:300]}{'…' if len(snippet) > 300 else ''}")
        if explain:
            lines.append(f"   why: {_trace(h.trace)}")
    if not result.hits:
        lines.append(nothing_relevant(result))
    if weak := weak_answer(result):
        lines.append(weak)
    lines.extend(hidden_lines(result))
    return "\n".join(lines)


def _left_out(h: Hit) -> str:
    """``2 more blocks`` of a narrowed hit; ``its only block`` / ``all 3 blocks`` of one with no text."""
    if h.text:
        return f"{h.left_out} more block{'s' if h.left_out != 1 else ''}"
    return "its only block" if h.left_out == 1 else f"all {h.left_out} blocks"


def _place(h: Hit) -> str:
    """``title › heading`` of a hit, on one line."""
    return _one_line(h.title) + (f" › {_one_line(h.heading)}" if h.heading else "")


def _one_line(text: str) -> str:
    """``text`` with every run of whitespace, line breaks included, as one space: a title or heading that
    spans lines (a quoted ``title:`` with ``\\n``, a setext heading) must not start lines of its own."""
    return " ".join(text.split())

"""Output formats of a search: text (people), markdown (what an agent pastes into its context), JSON."""

from __future__ import annotations

import json

from vaultsync.search.results import SearchResult


def _trace(trace: dict[str, dict[str, float]]) -> str:
    parts = []
    for stage in ("bm25", "dense", "fusion", "supersedes", "graph", "rerank", "final"):
        if stage in trace:
            fields = ", ".join(f"{k}={v}" for k, v in trace[stage].items())
            parts.append(f"{stage}({fields})")
    return " → ".join(parts)


def render(result: SearchResult, fmt: str, explain: bool = False) -> str:
    """Format ``result`` as ``text``, ``markdown`` or ``json``."""
    if fmt == "json":
        data = result.to_dict()
        if not explain:
            for hit in data["hits"]:
                hit.pop("trace", None)
        return json.dumps(data, ensure_ascii=False, indent=2)
    lines: list[str] = []
    if fmt == "markdown":
        lines.append(f"## Memory search: {result.query}\n")
        for w in result.warnings:
            lines.append(f"> ⚠ {w}\n")
        for i, h in enumerate(result.hits, 1):
            where = f" › {h.heading}" if h.heading else ""
            lines.append(f"### {i}. `{h.chunk_id}` — {h.title}{where} (score {h.score:.3f})\n")
            lines.append(h.text.strip() + "\n")
            if h.links:
                lines.append("Links: " + ", ".join(f"`{p}`" for p in h.links) + "\n")
            if explain:
                lines.append(f"<!-- {_trace(h.trace)} -->\n")
        if not result.hits:
            lines.append("_No matching memories._\n")
        lines.append(f"<!-- {len(result.hits)} chunks, {sum(h.tokens for h in result.hits)} tokens "
                     f"({result.token_counter}); rerank: {result.rerank or 'off'} -->")
        return "\n".join(lines)
    for w in result.warnings:
        lines.append(f"warning: {w}")
    for i, h in enumerate(result.hits, 1):
        where = f" › {h.heading}" if h.heading else ""
        lines.append(f"{i}. {h.chunk_id}  (lines {h.start_line}-{h.end_line}, score {h.score:.3f})")
        lines.append(f"   {h.title}{where}")
        snippet = " ".join(h.text.split())
        lines.append(f"   {snippet[:300]}{'…' if len(snippet) > 300 else ''}")
        if explain:
            lines.append(f"   why: {_trace(h.trace)}")
    if not result.hits:
        lines.append("no matching memories")
    return "\n".join(lines)

"""Cross-lingual recall on XQuAD: questions in 12 languages over a vault of the English paragraphs.

    python bench/bench_xquad.py [--data ../shared/train/qa/xquad.jsonl.gz] [--every 1]
                                [--variant default --variant script-gate ...] [--json out.json]

The 240 English paragraphs of XQuAD (Artetxe et al. 2020, CC BY-SA 4.0) become one note
each (frontmatter like the example vault's notes, the article title as the note's title),
committed into a git workspace and indexed through the real sync path with both embedders
(reused under $VAULTSYNC_CACHE_DIR/eval/xquad, so a second run only searches). Every
question of a *held-out* title (``training.splits.held_out``: 24 of the 48 articles, 554
questions) is asked in each of the 12 languages (ar, de, el, en, es, hi, ro, ru, th, tr,
vi, zh; the ``id`` links the translations); a question is found when its English paragraph
is in the top 5 notes. Reports recall@5 per language and overall, and the p50 latency of
the first variant (later variants reuse its query embeddings, so only it pays them).

Variants (``--variant``, repeatable; default: all of :data:`VARIANTS`) switch one thing:
``default`` is the shipped pipeline, ``before`` the pipeline before ADR-0061 (the
secondary leg gated by script only, no per-family weights), ``gate-only`` that with the
language gate; the others change one weight or run single legs. Exits 0 with a message when
the data is absent (no ../shared here).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.splits import held_out  # noqa: E402
from vaultsync.eval.harness import evaluation_options, prepare_workspace  # noqa: E402
from vaultsync.search import weights  # noqa: E402

EMBEDDERS = ("multilingual-e5-small", "use-multilingual")
LANGS = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")
NO_GRAPH = {"graph_hops": 0}
_USE_SCRIPTS = re.compile(r"[A-Za-zÀ-ɏ\u0400-\u04ff\u0600-\u06ff\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def script_gate(query: Any, opts: Any, coverage: float | None = None) -> float:
    """The secondary leg's gate before language ID: by script only."""
    w = opts.secondary_weight if opts is not None else 0.5
    letters = [ch for ch in query.text if ch.isalpha()]
    if not letters:
        return 0.0
    return w if sum(1 for ch in letters if _USE_SCRIPTS.match(ch)) / len(letters) >= 0.6 else 0.0


# name -> (option overrides, replacement for weights.secondary_weight or None)
BEFORE = {"secondary_cross_cjk": 1.0, "bm25_power_alone": 2.0}
VARIANTS: dict[str, tuple[dict[str, Any], Callable[..., float] | None]] = {
    "default": ({}, None),
    "before": (BEFORE, script_gate),  # the pipeline before language ID (ADR-0061)
    "gate-only": (BEFORE, None),
    "cjk-1.0": ({"secondary_cross_cjk": 1.0}, None),
    "cjk-2.0": ({"secondary_cross_cjk": 2.0}, None),
    "alone-1.0": ({"bm25_power_alone": 1.0}, None),
    "alone-2.0": ({"bm25_power_alone": 2.0}, None),
    "no-names": ({"title_vectors": False}, None),
    "dense": ({"legs": ("dense",), **NO_GRAPH}, None),
    "dense2": ({"legs": ("dense2",), **NO_GRAPH}, None),
    "bm25+dense": ({"legs": ("bm25", "dense")}, None),
}


def load_rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")


def build_dataset(rows: list[dict[str, Any]], out: Path, every: int = 1) -> list[dict[str, Any]]:
    """Write ``out/vault`` (one note per English paragraph) and return the held-out queries."""
    english = [r for r in rows if r["lang"] == "en"]
    note_of: dict[str, str] = {}
    count: dict[str, int] = defaultdict(int)
    notes: dict[str, str] = {}
    for r in english:
        if r["passage"] in note_of:
            continue
        count[r["title"]] += 1
        n, title = count[r["title"]], r["title"].replace("_", " ")
        path = f"wiki/{_slug(r['title'])}-{n}.md"
        note_of[r["passage"]] = path
        notes[path] = (f"---\nmemory_id: XQ-{len(notes) + 1:04d}\ntype: note\ntitle: \"{title} ({n})\"\n"
                       f"status: active\ncreated: \"2020-01-01\"\nconfidence: 0.9\nimportance: 5\ntags: [xquad]\n"
                       f"---\n# {title} ({n})\n\n{r['passage'].strip()}\n")
    vault = out / "vault"
    for path, text in notes.items():
        target = vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    gold = {r["id"]: note_of[r["passage"]] for r in english}
    asked = sorted({r["id"] for r in english if held_out(r["title"])})[::every]
    wanted = set(asked)
    queries = [{"id": f"{r['lang']}:{r['id']}", "query": r["query"], "relevant": [gold[r["id"]]], "lang": r["lang"]}
               for r in rows if r["id"] in wanted and r["lang"] in LANGS]
    (out / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries),
                                       encoding="utf-8")
    return queries


class CachedEmbedder:
    """A query embedder that remembers its answers, so later variants cost only the search."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.memo: dict[tuple[str, ...], Any] = {}

    def embed_queries(self, texts: Sequence[str]) -> Any:
        key = tuple(texts)
        if key not in self.memo:
            self.memo[key] = self.inner.embed_queries(texts)
        return self.memo[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def gate(replacement: Callable[..., float] | None) -> Iterator[None]:
    original = weights.secondary_weight
    if replacement is not None:
        weights.secondary_weight = replacement  # type: ignore[assignment]
    try:
        yield
    finally:
        weights.secondary_weight = original  # type: ignore[assignment]


def evaluate(searcher: Any, queries: list[dict[str, Any]], variant: str) -> dict[str, Any]:
    """Recall@5 per language and overall, and latencies, for one variant."""
    overrides, replacement = VARIANTS[variant]
    opts = evaluation_options(**overrides)
    found: dict[str, list[int]] = defaultdict(list)
    ms: list[float] = []
    with gate(replacement):
        for q in queries:
            start = time.perf_counter()
            result = searcher.search(q["query"], opts)
            ms.append((time.perf_counter() - start) * 1000)
            top: list[str] = []
            for h in result.hits:
                if h.path not in top:
                    top.append(h.path)
            hit = int(q["relevant"][0] in top[:5])
            found[q["lang"]].append(hit)
            found["all"].append(hit)
    recall = {lang: round(sum(v) / len(v), 3) for lang, v in sorted(found.items())}
    return {"recall@5": recall, "n": len(found["all"]), "p50_ms": round(statistics.median(ms), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/train/qa/xquad.jsonl.gz"))
    ap.add_argument("--every", type=int, default=1, help="ask every N-th held-out question")
    ap.add_argument("--variant", action="append", dest="variants", choices=sorted(VARIANTS))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if not args.data.is_file():
        print(f"bench_xquad: no data at {args.data} (../shared absent?); nothing to do")
        return
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.sync import sync
    from vaultsync.models.convert.build import load_embedder
    from vaultsync.search.pipeline import Searcher

    root = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path("~/.cache/vaultsync").expanduser()) / "eval" / "xquad"
    started = time.perf_counter()
    queries = build_dataset(load_rows(args.data), root / "xquad", args.every)
    models = {name: load_embedder(name, threads=2) for name in EMBEDDERS}
    repo = prepare_workspace(root / "xquad", root / "ws", EMBEDDERS, None,
                             sync_fn=lambda r: sync(open_repo(r), embedder_factory=lambda c, n: models[n], wait=600))
    searcher = Searcher(layout_for(open_repo(repo)).sqlite, {n: CachedEmbedder(m) for n, m in models.items()})
    print(f"{len(queries)} queries, workspace ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    results: dict[str, Any] = {}
    try:
        for i, variant in enumerate(args.variants or list(VARIANTS)):
            t0 = time.perf_counter()
            results[variant] = evaluate(searcher, queries, variant)
            results[variant]["embedded"] = i == 0
            print(f"{variant}: {json.dumps(results[variant])} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    finally:
        searcher.close()
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


def markdown(results: dict[str, Any]) -> str:
    """The results as a Markdown table: one row per variant, recall@5 per language."""
    lines = ["| variant | n | all | " + " | ".join(LANGS) + " | p50 ms |", "|---|---|---|" + "---|" * len(LANGS) + "---|"]
    for name, r in results.items():
        rec = r["recall@5"]
        p50 = f"{r['p50_ms']}" if r.get("embedded") else f"({r['p50_ms']})"
        lines.append(f"| {name} | {r['n']} | {rec['all']:.3f} | " + " | ".join(f"{rec.get(lang, 0):.3f}" for lang in LANGS)
                     + f" | {p50} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

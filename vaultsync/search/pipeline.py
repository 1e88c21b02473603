"""The search pipeline: a query in any language → the 3–5 chunks that matter, with provenance.

Stages (each in its own module, each switchable for evaluation):

1. ``dense`` (vector top-N) and ``bm25`` (FTS5 top-N) run in parallel threads;
   lifecycle exclusions (expired, superseded, low confidence), type/tag filters
   and the folder scope are applied to both legs *before* anything is ranked.
2. Fusion at note level: a convex combination of min-max normalised scores
   (Bruch et al. 2023; RRF with k = 60, Cormack et al. 2009, as an option), with
   per-query leg weights (:func:`leg_weights`): BM25 counts in proportion to how
   much of the query the vault contains at all, so a query in another language
   leans on the vectors.
3. Graph hop over WikiLinks (both directions, decayed).
4. Superseded hits are replaced by their superseding note.
5. Rerank of the top candidates (MaxSim or a cross-encoder), then the
   importance/recency blend.
6. At most ``per_note`` chunks per note, then the top-k within the token budget.

Every hit carries a ``trace`` of its rank and score at each stage (``--explain``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from vaultsync.index.fastpath import readonly_uri
from vaultsync.search import budget as budget_mod
from vaultsync.search import graph, scoring
from vaultsync.search.bm25 import Candidate, bm25_candidates, bm25_notes, fts_string
from vaultsync.search.dense import VectorIndex
from vaultsync.search.fusion import convex, rerank_order, rrf
from vaultsync.search.lifecycle import Exclusions, LifecyclePolicy, exclusions
from vaultsync.search.options import check_options
from vaultsync.search.query import Query, parse_query


class QueryEmbedder(Protocol):
    model_id: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...


class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: list[str]) -> np.ndarray: ...


@dataclass
class SearchOptions:
    """Knobs of one search (defaults chosen on the evaluation sets, see docs/eval.md)."""

    top_k: int = 5
    budget: int = 1200
    candidates: int = 50
    rerank_top: int = 20
    rrf_k: int = 60
    fusion: str = "convex"  # "convex" | "rrf-adaptive" (both with per-query leg weights) | "rrf" (equal)
    legs: tuple[str, ...] = ("bm25", "dense", "dense2")
    secondary_weight: float = 0.5
    secondary_cross: float = 1.0  # the secondary leg's weight on a query the vault's words do not cover
    title_vectors: bool = True
    graph_hops: int = 1
    graph_decay: float = 0.5
    graph_seeds: int = 5
    rerank: bool = True
    rerank_cutoff: bool = False  # drop candidates under a calibrated reranker's threshold (the best one stays)
    w_importance: float = 0.1
    w_recency: float = 0.05
    half_life_days: float = 365.0
    per_note: int = 2
    second_chunk: float = 0.8  # a note's second-best chunk ranks at this fraction of the note's score
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    scope: str | None = None
    include_expired: bool = False
    include_superseded: bool = False
    min_confidence: float = 0.5
    today: dt.date | None = None

    @classmethod
    def from_config(cls, values: dict[str, Any], **overrides: Any) -> SearchOptions:
        """Options from the ``search:`` section of ``.vaultsync.yaml`` plus explicit overrides.

        Raises:
            ValueError: an unknown option or a value of the wrong type or range
                (:data:`vaultsync.search.options.RANGES`).
        """
        merged = dict(values)
        merged.update({k: v for k, v in overrides.items() if v is not None})
        unknown = sorted(set(merged) - set(cls.__dataclass_fields__) - {"port"})
        if unknown:
            raise ValueError(f"unknown search option(s): {', '.join(unknown)}")
        merged.pop("port", None)
        for key in ("legs", "types", "tags"):
            if key in merged:
                value = merged[key]
                merged[key] = (value,) if isinstance(value, str) else tuple(str(v) for v in value)
        opts = cls(**merged)
        check_options(opts)
        return opts


@dataclass
class Hit:
    """One result chunk with its provenance."""

    chunk_id: str
    path: str
    title: str
    heading: str
    text: str
    score: float
    start_line: int
    end_line: int
    blocks: list[str]
    links: list[str]
    tokens: int = 0
    trace: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class SearchResult:
    """Hits plus what the caller should know (stale index, token counting, timings)."""

    query: str
    hits: list[Hit]
    warnings: list[str]
    indexed_commit: str | None
    head: str | None
    token_counter: str
    rerank: str | None
    timings_ms: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchResult:
        """Inverse of :meth:`to_dict` (what the daemon sends back)."""
        hits = [Hit(**h) for h in data.get("hits", [])]
        return cls(**{**data, "hits": hits})


def leg_weights(db: sqlite3.Connection, query: Query, mode: str, dense_legs: Sequence[str] = ("dense",),
                opts: SearchOptions | None = None) -> dict[str, float]:
    """Per-query leg weights for fusion.

    ``rrf`` gives equal weights; the other modes weigh BM25 by its *coverage* of
    the query: the share of the query's informative characters that occur in the
    vault at all, squared. Units are the long terms (CJK terms as 3-character
    shingles); a unit present in more than half of the notes says nothing about
    which note is meant and is left out of both sides of the ratio. A German or
    Japanese query over English notes, or "Obsidian 同步", gets a weight near 0 and
    leaves ranking to the vectors; an English query over English notes keeps both.
    A secondary dense leg (USE, where its script gate lets it vote) moves linearly
    from ``secondary_weight`` on a query the vault's words cover to
    ``secondary_cross`` on one they do not: cross-lingual queries are where it is strong.
    """
    weights = {name: 1.0 if name == "dense" else secondary_weight(query, opts) for name in dense_legs}
    if mode == "rrf":
        return {"bm25": 1.0, **{name: 1.0 for name in dense_legs}}
    units = [u for u in _or_units(query)][:24]
    if not units:
        return {"bm25": 0.5 if query.short_terms else 0.0, **weights}
    total_notes = db.execute("SELECT count(*) FROM notes").fetchone()[0] or 1
    common = total_notes // 2 + 1
    seen = matched = 0
    for unit in units:
        df = db.execute("SELECT count(*) FROM (SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? LIMIT ?)",
                        (fts_string(unit), common)).fetchone()[0]
        if df >= common and total_notes > 2:
            continue
        seen += len(unit)
        matched += len(unit) if df else 0
    coverage = matched / seen if seen else 0.25
    bm25 = coverage ** 2
    # a query the vault's words do not cover is cross-lingual: there USE's vote counts more
    cross = opts.secondary_cross if opts is not None else 1.0
    weights = {name: w if name == "dense" or w == 0 else w + (cross - w) * (1 - bm25) for name, w in weights.items()}
    return {"bm25": bm25, **weights}


# Scripts of the 16 languages USE multilingual was trained on (Yang et al. 2020).
_USE_SCRIPTS = re.compile(r"[A-Za-zÀ-ɏ\u0400-\u04ff\u0600-\u06ff\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def secondary_weight(query: Query, opts: SearchOptions | None) -> float:
    """Weight of a secondary dense leg (USE multilingual): ``opts.secondary_weight`` when most of the
    query's letters are in a script of USE's 16 training languages, else 0 — USE is strong where it
    was trained and collapses elsewhere, so it must not vote there."""
    w = opts.secondary_weight if opts is not None else 0.5
    letters = [ch for ch in query.text if ch.isalpha()]
    if not letters:
        return 0.0
    covered = sum(1 for ch in letters if _USE_SCRIPTS.match(ch))
    return w if covered / len(letters) >= 0.6 else 0.0


def _or_units(query: Query) -> list[str]:
    from vaultsync.search.bm25 import _CJK

    units: list[str] = []
    for term in query.long_terms:
        if _CJK.search(term) and len(term) > 3:
            units.extend(term[i:i + 3] for i in range(len(term) - 2))
        else:
            units.append(term)
    return list(dict.fromkeys(units))


@dataclass
class DenseLeg:
    """One embedder's vectors: chunk vectors aligned with SQLite rowids, and note-name vectors."""

    name: str
    embedder: QueryEmbedder
    chunks: VectorIndex
    chunk_paths: np.ndarray
    name_paths: list[str]
    name_matrix: np.ndarray


class Searcher:
    """Holds the warm resources of one index: SQLite, the vectors of each embedder, the models.

    Args:
        db_path: the index's ``index.sqlite``.
        embedders: embedder name → query embedder, primary first (the legs ``dense``,
            ``dense2``, ...); a single embedder is taken as the primary one. None: BM25 only.
        reranker: rerank stage (None: no rerank).
    """

    def __init__(self, db_path: Path, embedders: dict[str, QueryEmbedder] | QueryEmbedder | None,
                 reranker: Reranker | None = None) -> None:
        self.db = sqlite3.connect(readonly_uri(db_path), uri=True, check_same_thread=False, timeout=10)
        # a second connection lets whole-note BM25 run beside chunk BM25 (one connection serialises)
        self._notes_db = sqlite3.connect(readonly_uri(db_path), uri=True, check_same_thread=False, timeout=10)
        self._exclusions: dict[LifecyclePolicy, Exclusions] = {}
        self.meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        self.reranker = reranker
        self._replaced: dict[str, str] = {}
        self._chunks_of: dict[str, list[int]] | None = None
        models = json.loads(self.meta.get("embed_models") or "{}")
        if embedders is not None and not isinstance(embedders, dict):
            embedders = {next(iter(models), "primary"): embedders}
        self.legs: list[DenseLeg] = []
        for name, embedder in (embedders or {}).items():
            leg = self._load_leg(name, embedder, models.get(name) or {})
            if leg is not None:
                self.legs.append(leg)

    @property
    def embedder(self) -> QueryEmbedder | None:
        """The primary embedder (token counts, MaxSim), if loaded."""
        return self.legs[0].embedder if self.legs else None

    @property
    def vectors(self) -> VectorIndex | None:
        """The primary embedder's chunk vectors."""
        return self.legs[0].chunks if self.legs else None

    def _load_leg(self, name: str, embedder: QueryEmbedder, info: dict[str, Any]) -> DenseLeg | None:
        model, dim = info.get("id", getattr(embedder, "model_id", "")), int(info.get("dim") or embedder.dim)
        rowids, paths, matrix = self._read_vectors(
            "SELECT c.rowid, c.path, v.vector FROM vectors v JOIN chunks c ON c.id = v.id "
            "WHERE v.model = ? AND v.kind = 'chunk'", model, dim)
        if not len(rowids):
            return None
        _, names, name_matrix = self._read_vectors(
            "SELECT 0, path, vector FROM vectors WHERE model = ? AND kind = 'name'", model, dim)
        return DenseLeg(name, embedder, VectorIndex(rowids, matrix), paths, list(names), name_matrix)

    def _read_vectors(self, sql: str, model: str, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rowids int64[n], paths object[n], vectors float32[n, dim]) streamed into preallocated arrays, so
        loading never holds a second copy of the vectors (peak memory ≈ the final matrix). The arrays are
        sized by the model's row count (a covering-index count; names included): the pages of ``np.empty``
        that are never written are never resident."""
        n = self.db.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0]
        rowids, paths = np.empty(n, np.int64), np.empty(n, dtype=object)
        matrix = np.empty((n, dim), np.float32)
        cursor, i = self.db.execute(sql, (model,)), 0
        while batch := cursor.fetchmany(4096):
            j = i + len(batch)
            ids, ps, blobs = zip(*batch)
            rowids[i:j], paths[i:j] = ids, ps
            matrix[i:j] = np.frombuffer(b"".join(blobs), "<f4").reshape(j - i, dim)
            i = j
        return rowids[:i], paths[:i], matrix[:i]

    def close(self) -> None:
        self.db.close()
        self._notes_db.close()

    # -- stages ---------------------------------------------------------------------------------

    def _allowed(self, opts: SearchOptions, excluded: Exclusions) -> set[str] | None:
        """Paths that may be returned (None = all), from type/tag/scope filters and exclusions."""
        clauses, params = [], []
        if opts.types:
            clauses.append(f"type IN ({','.join('?' * len(opts.types))})")
            params.extend(opts.types)
        if opts.tags:
            clauses.append("EXISTS (SELECT 1 FROM json_each(notes.frontmatter, '$.tags') t "
                           f"WHERE t.value IN ({','.join('?' * len(opts.tags))}))")
            params.extend(opts.tags)
        if opts.scope:
            clauses.append("substr(path, 1, ?) = ?")
            params.extend([len(opts.scope), opts.scope])
        if not clauses and not excluded.reasons:
            return None
        sql = "SELECT path FROM notes" + (" WHERE " + " AND ".join(clauses) if clauses else "")
        # Superseded notes with a successor stay in the legs: they are swapped for it after fusion.
        return {p for (p,) in self.db.execute(sql, params) if p not in excluded or p in excluded.replacement}

    def _dense(self, leg: DenseLeg, qvec: np.ndarray, opts: SearchOptions,
               allowed: set[str] | None) -> list[Candidate]:
        mask = None
        if allowed is not None:
            mask = np.fromiter((p in allowed for p in leg.chunk_paths), dtype=bool, count=len(leg.chunk_paths))
        return leg.chunks.top(qvec, opts.candidates * 4, mask)  # deep: many notes get a best-chunk score

    def _dense_notes(self, leg: DenseLeg, qvec: np.ndarray, chunks: list[Candidate], paths: dict[int, str],
                     allowed: set[str] | None, opts: SearchOptions) -> dict[str, float]:
        """Notes by their best vector: the max cosine over their chunks and name vectors, best first."""
        best: dict[str, float] = {}
        for c in chunks:
            p = paths[c.rowid]
            if c.score > best.get(p, -2.0):
                best[p] = c.score
        if len(leg.name_paths) and opts.title_vectors:
            sims = leg.name_matrix @ qvec
            if allowed is not None or opts.scope:
                ok = np.fromiter(((allowed is None or p in allowed) and (not opts.scope or p.startswith(opts.scope))
                                  for p in leg.name_paths), dtype=bool, count=len(leg.name_paths))
                sims = np.where(ok, sims, -np.inf)
            k = min(len(sims), opts.candidates * 4)  # deeper names cannot reach the fused candidates
            for i in np.argpartition(-sims, k - 1)[:k]:
                p, sim = leg.name_paths[i], float(sims[i])
                if np.isfinite(sim) and sim > best.get(p, -2.0):
                    best[p] = sim
        return dict(sorted(best.items(), key=lambda kv: -kv[1]))

    def _bm25(self, query: Query, opts: SearchOptions, allowed: set[str] | None) -> list[Candidate]:
        restrict, params = "", ()
        if opts.scope:
            restrict, params = "substr(c.path, 1, ?) = ?", (len(opts.scope), opts.scope)
        raw = bm25_candidates(self.db, query, opts.candidates * 3 if allowed is not None else opts.candidates,
                              restrict, params)
        if allowed is not None:
            paths = self._paths([c.rowid for c in raw])
            raw = [c for c in raw if paths.get(c.rowid) in allowed]
        return [Candidate(c.rowid, c.score, rank) for rank, c in enumerate(raw[:opts.candidates])]

    def _paths(self, rowids: Sequence[int]) -> dict[int, str]:
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        return dict(self.db.execute(f"SELECT rowid, path FROM chunks WHERE rowid IN ({marks})", list(rowids)))

    # -- the pipeline ---------------------------------------------------------------------------

    def search(self, raw_query: str, opts: SearchOptions | None = None, head: str | None = None) -> SearchResult:
        """Run the whole pipeline (see the module docstring).

        Raises:
            QueryError: empty query.
        """
        opts = opts or SearchOptions()
        query = parse_query(raw_query)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        excluded = self._excluded(LifecyclePolicy(opts.include_expired, opts.include_superseded,
                                                  opts.min_confidence, opts.today))
        allowed = self._allowed(opts, excluded)
        legs = [(f"dense{i + 1 if i else ''}", leg) for i, leg in enumerate(self.legs)]
        legs = [(name, leg) for name, leg in legs if name in opts.legs]
        use_bm25 = "bm25" in opts.legs
        trace: dict[int, dict[str, dict[str, Any]]] = {}
        # 1. all legs in parallel (onnxruntime, numpy and SQLite release the GIL)
        with ThreadPoolExecutor(max_workers=3) as pool:
            qfuts = {name: pool.submit(leg.embedder.embed_queries, [query.text]) for name, leg in legs}
            notes_fut = pool.submit(self._bm25_notes, query, opts, allowed) if use_bm25 else None
            bm25_chunks = self._bm25(query, opts, allowed) if use_bm25 else []
            bm25_notes = notes_fut.result() if notes_fut is not None else []
            weights = leg_weights(self.db, query, opts.fusion, [name for name, _ in legs], opts) if use_bm25 \
                else {name: 1.0 for name, _ in legs}
            qvecs = {name: np.asarray(f.result()[0], dtype=np.float32) for name, f in qfuts.items()}
        dense_chunks = {name: self._dense(leg, qvecs[name], opts, allowed) for name, leg in legs}
        qvec = qvecs.get("dense")
        timings["retrieve"] = (time.perf_counter() - t0) * 1000
        for name, cands in (("bm25", bm25_chunks), *dense_chunks.items()):
            for c in cands:
                trace.setdefault(c.rowid, {})[name] = {"rank": c.rank + 1, "score": round(c.score, 4)}
        # 2. fusion at note level: BM25 over whole notes, dense = a note's best chunk or name
        paths = self._paths([c.rowid for c in bm25_chunks] + [c.rowid for cs in dense_chunks.values() for c in cs])
        # whole-note BM25 first; notes found only by chunk BM25 (short terms such as "CI") after
        bm25_note_scores = dict(bm25_notes)
        floor = min(bm25_note_scores.values(), default=0.0)
        for c in bm25_chunks:
            bm25_note_scores.setdefault(paths[c.rowid], floor)
        note_scores = {"bm25": bm25_note_scores} | {
            name: self._dense_notes(leg, qvecs[name], dense_chunks[name], paths, allowed, opts) for name, leg in legs}
        chunk_legs = {"bm25": bm25_chunks, **dense_chunks}
        if opts.fusion == "convex":
            fused_notes = convex({k: dict(list(v.items())[:opts.candidates]) for k, v in note_scores.items() if v},
                                 weights)
            chunk_scores = dict(convex({k: {c.rowid: c.score for c in v} for k, v in chunk_legs.items()}, weights))
        else:
            fused_notes = rrf({k: list(v) for k, v in note_scores.items() if v}, weights, opts.rrf_k)
            chunk_scores = dict(rrf({k: [c.rowid for c in v] for k, v in chunk_legs.items()}, weights, opts.rrf_k))
        notes = dict(fused_notes[:max(opts.rerank_top, opts.top_k * 4)])
        notes = self._supersede_notes(notes, excluded, allowed)
        # 3. graph hop
        t1 = time.perf_counter()
        graph_added: dict[str, dict[str, Any]] = {}
        if opts.graph_hops > 0 and notes:
            seeds = dict(list(notes.items())[:opts.graph_seeds])
            for path, (score, seed, depth) in graph.neighbours(self.db, seeds, opts.graph_hops, opts.graph_decay).items():
                if path not in notes and (allowed is None or path in allowed) and path not in excluded:
                    notes[path] = score
                    graph_added[path] = {"from": seed, "depth": depth, "score": round(score, 5)}
        timings["graph"] = (time.perf_counter() - t1) * 1000
        # 4. chunks of the best notes: the note's best chunk carries its score, a second one half of it
        ranked: list[tuple[int, float]] = []
        for rank, (path, score) in enumerate(sorted(notes.items(), key=lambda kv: -kv[1])):
            for i, rowid in enumerate(self._chunks_for(path, chunk_scores, qvec)[:2]):
                ranked.append((rowid, score * (1.0 if i == 0 else opts.second_chunk)))
                entry = trace.setdefault(rowid, {})
                entry["fusion"] = {"note_rank": rank + 1, "score": round(score, 5),
                                   **{f"w_{k}": round(v, 3) for k, v in weights.items()}}
                if path in graph_added:
                    entry["graph"] = graph_added[path]
                if path in self._replaced:
                    entry["supersedes"] = {"replaces": self._replaced[path]}
        ranked.sort(key=lambda kv: -kv[1])
        ranked = ranked[:max(opts.rerank_top, opts.top_k * 4)]
        rows = self._rows([r for r, _ in ranked])
        relevance = dict(ranked)
        # 5. rerank
        t2 = time.perf_counter()
        rerank_name = None
        if opts.rerank and self.reranker is not None and ranked:
            head_ids = [r for r, _ in ranked[:opts.rerank_top]]
            scores = self.reranker.score(query.text, [rows[r]["rerank_text"] for r in head_ids])
            rerank_name = self.reranker.name
            score_of = {r: float(x) for r, x in zip(head_ids, scores, strict=True)}
            weight = getattr(self.reranker, "fusion_weight", None)
            reordered = rerank_order(head_ids, scores, weight, opts.rrf_k)
            for pos, r in enumerate(reordered):
                entry = {"rank": pos + 1, "score": round(score_of[r], 4)}
                if weight is not None and weight < 1.0:  # the rank fuses the score's rank with the first stage's
                    entry["fusion_weight"] = weight
                trace.setdefault(r, {})["rerank"] = entry
            threshold = getattr(self.reranker, "threshold", None)
            if opts.rerank_cutoff and threshold is not None:
                # calibrated scores: drop what falls under the cut-off (and the unjudged tail), keep the best
                kept = [r for r in reordered if score_of[r] >= threshold]
                reordered = kept or reordered[:1]
            else:
                reordered += [r for r, _ in ranked[opts.rerank_top:]]
            relevance = {r: float(len(reordered) - pos) for pos, r in enumerate(reordered)}
            ranked = [(r, relevance[r]) for r in reordered]
        timings["rerank"] = (time.perf_counter() - t2) * 1000
        hits = self._finish(ranked, rows, relevance, trace, opts, excluded)
        timings["total"] = (time.perf_counter() - t0) * 1000
        return self._result(query, hits, opts, bool(legs), head, rerank_name, timings)

    def _finish(self, ranked: list[tuple[int, float]], rows: dict[int, dict[str, Any]], relevance: dict[int, float],
                trace: dict[int, dict[str, dict[str, Any]]], opts: SearchOptions,
                excluded: Exclusions) -> list[Hit]:
        """Importance/recency blend, per-note cap, token counts, budget cut; hidden notes left out of links."""
        today = opts.today or dt.datetime.now(dt.timezone.utc).date()
        ids = [r for r, _ in ranked]
        final = scoring.blend([relevance[r] for r in ids], [rows[r]["importance"] for r in ids],
                              [rows[r]["last_validated"] or rows[r]["created"] for r in ids], today,
                              opts.w_importance, opts.w_recency, opts.half_life_days)
        per_note: dict[str, int] = {}
        chosen: list[Hit] = []
        for i in sorted(range(len(ids)), key=lambda i: (-final[i], i)):
            row = rows[ids[i]]
            if per_note.get(row["path"], 0) >= opts.per_note:
                continue
            per_note[row["path"]] = per_note.get(row["path"], 0) + 1
            trace.setdefault(ids[i], {})["final"] = {"rank": len(chosen) + 1, "score": round(final[i], 4)}
            chosen.append(self._hit(row, final[i], trace.get(ids[i], {}), excluded))
            if len(chosen) >= opts.top_k * 3:
                break
        return budget_mod.cut(chosen, [h.tokens for h in chosen], opts.budget, opts.top_k)

    def _result(self, query: Query, hits: list[Hit], opts: SearchOptions, use_dense: bool, head: str | None,
                rerank_name: str | None, timings: dict[str, float]) -> SearchResult:
        warnings: list[str] = []
        indexed = self.meta.get("indexed_commit") or None
        if head and indexed != head:
            warnings.append(f"index is behind HEAD (indexed {indexed[:10] if indexed else 'nothing'}, HEAD {head[:10]}); "
                            "run `vaultsync sync`")
        if "dense" in opts.legs and not use_dense:
            warnings.append("vector leg unavailable (no embeddings in the index): BM25 only")
        counter = self.meta.get("token_counter", "estimate")
        return SearchResult(query.text, hits, warnings, indexed, head, counter, rerank_name,
                            {k: round(v, 1) for k, v in timings.items()})

    def _excluded(self, policy: LifecyclePolicy) -> Exclusions:
        """Lifecycle exclusions, evaluated once per policy and day (a Searcher holds one index state)."""
        policy = replace(policy, today=policy.today or dt.datetime.now(dt.timezone.utc).date())
        if policy not in self._exclusions:
            self._exclusions[policy] = exclusions(self.db, policy)
        return self._exclusions[policy]

    def _bm25_notes(self, query: Query, opts: SearchOptions, allowed: set[str] | None) -> list[tuple[str, float]]:
        raw = bm25_notes(self._notes_db, query,
                         opts.candidates * 3 if (allowed is not None or opts.scope) else opts.candidates)
        if opts.scope:
            raw = [(p, s) for p, s in raw if p.startswith(opts.scope)]
        if allowed is not None:
            raw = [(p, s) for p, s in raw if p in allowed]
        return raw[:opts.candidates]

    def _chunks_for(self, path: str, chunk_scores: dict[int, float], qvec: np.ndarray | None) -> list[int]:
        """A note's chunks, best first: by fused chunk evidence, else by similarity to the query."""
        rowids = self._note_chunks(path)
        scored = [r for r in rowids if r in chunk_scores]
        scored.sort(key=lambda r: -chunk_scores[r])
        if len(scored) >= 2 or not rowids:
            return scored
        rest = [r for r in rowids if r not in chunk_scores]
        if qvec is not None and self.vectors is not None:
            sims = self.vectors.similarity(qvec, rest)
            rest.sort(key=lambda r: -sims.get(r, -1.0))
        return scored + rest

    def _note_chunks(self, path: str) -> list[int]:
        if self._chunks_of is None:
            self._chunks_of = {}
            for rowid, p in self.db.execute("SELECT rowid, path FROM chunks ORDER BY path, n"):
                self._chunks_of.setdefault(p, []).append(rowid)
        return self._chunks_of.get(path, [])

    def _supersede_notes(self, notes: dict[str, float], excluded: Exclusions,
                         allowed: set[str] | None) -> dict[str, float]:
        """Swap superseded notes for their successor (kept at the superseded note's place)."""
        self._replaced: dict[str, str] = {}
        out: dict[str, float] = {}
        for path, score in notes.items():
            successor = excluded.replacement.get(path)
            if successor is None:
                out.setdefault(path, score)
            elif successor not in notes and (allowed is None or successor in allowed) and successor not in out:
                out[successor] = score
                self._replaced[successor] = path
        return out

    def _rows(self, rowids: Sequence[int]) -> dict[int, dict[str, Any]]:
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        out: dict[int, dict[str, Any]] = {}
        for (rowid, cid, path, heading, text, start, end, blocks, title, importance, created, validated,
             tokens) in self.db.execute(
            "SELECT c.rowid, c.id, c.path, c.heading, c.text, c.start_line, c.end_line, c.blocks, n.title, "
            f"n.importance, n.created, n.last_validated, c.tokens FROM chunks c JOIN notes n ON n.path = c.path "
            f"WHERE c.rowid IN ({marks})", list(rowids),
        ):
            context = " > ".join(p for p in (title, heading) if p)
            out[rowid] = {"id": cid, "path": path, "heading": heading, "text": text, "start": start, "end": end,
                          "blocks": json.loads(blocks), "title": title, "importance": importance,
                          "created": created, "last_validated": validated, "rerank_text": f"{context}\n{text}",
                          "tokens": tokens}
        return out

    def _hit(self, row: dict[str, Any], score: float, trace: dict[str, dict[str, float]],
             excluded: Exclusions) -> Hit:
        links = [t for (t,) in self.db.execute(
            "SELECT DISTINCT resolved FROM links WHERE source = ? AND resolved IS NOT NULL AND resolved != source "
            "ORDER BY resolved", (row["path"],)) if t not in excluded]
        return Hit(row["id"], row["path"], row["title"], row["heading"], row["text"], round(score, 4), row["start"],
                   row["end"], row["blocks"], links, tokens=row["tokens"], trace=trace)

"""The search pipeline: a query in any language → the 3–5 chunks that matter, with provenance.

Stages (:data:`STAGES`, each a function ``stage(ctx, cands) -> cands`` in
:mod:`vaultsync.search.stages`, each switchable for evaluation):

1. ``retrieve``: dense (vector top-N per embedder) and BM25 (FTS5 top-N) legs run in
   parallel threads; lifecycle exclusions (expired, superseded, low confidence), type/tag
   filters and the folder scope are applied to every leg *before* anything is ranked.
2. ``fuse`` at note level: a convex combination of min-max normalised scores
   (Bruch et al. 2023; RRF with k = 60, Cormack et al. 2009, as an option), with
   per-query leg weights (:func:`vaultsync.search.weights.leg_weights`): BM25 counts in
   proportion to how much of the query the vault contains at all, so a query in another
   language leans on the vectors.
3. ``supersede``: superseded notes are replaced by their superseding note.
4. ``graph`` hop over WikiLinks (both directions, decayed).
5. ``chunks``: each note's best chunks carry its score.
6. ``rerank`` of the top candidates (MaxSim or a cross-encoder).
7. ``relevance``: each candidate's calibrated P(it answers the query).
8. ``finish``: the importance/recency blend, at most ``per_note`` chunks per note, the
   relevance floor and adaptive cut, the top-k within the token budget, then the best
   blocks of those chunks (ADR-0116).

Every hit carries a ``trace`` of its rank and score at each stage (``--explain``). The result
says what the filters hid (:mod:`vaultsync.search.hidden`) and warns about a filter value no
note has.
"""

from __future__ import annotations

import json
import time
from typing import Any

from vaultsync.index.lock import sync_running
from vaultsync.search.candidates import Candidates, Context, Stage
from vaultsync.search.chinese import embedding_text
from vaultsync.search.deliver import deliver
from vaultsync.search.handles import IndexHandles
from vaultsync.search.hidden import hidden_matches
from vaultsync.search.lifecycle import LifecyclePolicy
from vaultsync.search.named import named_notes
from vaultsync.search.options import SearchOptions
from vaultsync.search.query import Query, parse_query
from vaultsync.search.results import Hit, SearchResult
from vaultsync.search.rows import allowed_paths, stored_scope, unknown_filter_values
from vaultsync.search.stages.chunks import chunks
from vaultsync.search.stages.finish import finish
from vaultsync.search.stages.fuse import fuse
from vaultsync.search.stages.graph_hop import graph_hop
from vaultsync.search.stages.relevance import relevance
from vaultsync.search.stages.rerank import rerank
from vaultsync.search.stages.retrieve import retrieve
from vaultsync.search.stages.supersede import supersede

STAGES: tuple[tuple[str, Stage], ...] = (
    ("retrieve", retrieve), ("fuse", fuse), ("supersede", supersede), ("graph", graph_hop),
    ("chunks", chunks), ("rerank", rerank), ("relevance", relevance), ("finish", finish),
)


class Searcher(IndexHandles):
    """The pipeline over one index's warm handles (see :class:`IndexHandles` for the arguments)."""

    def search(self, raw_query: str, opts: SearchOptions | None = None, head: str | None = None) -> SearchResult:
        """Run every stage (see the module docstring); ``head``: the commit the index should be at.

        Raises:
            QueryError: empty query.
        """
        query = parse_query(raw_query)
        opts = stored_scope(self.db, opts or SearchOptions())
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        ctx, cands = self._run(query, opts, Candidates(), timings)
        started = time.perf_counter()
        vectors = cands.query_vectors  # the flags followed are searched on the same query vectors

        def shown_with(followed: SearchOptions) -> set[str]:
            return {h.path for h in self._run(query, followed, Candidates(query_vectors=dict(vectors)))[1].hits}

        hidden = hidden_matches(ctx, cands, {h.path for h in cands.hits}, shown_with)
        timings["hidden"] = (time.perf_counter() - started) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000
        return self._result(ctx, cands, head, timings, hidden)

    def deliver(self, raw_query: str, hits: list[Hit]) -> list[Hit]:
        """``hits`` narrowed to their best blocks, as a search with ``blocks`` on narrows its own
        (:mod:`vaultsync.search.deliver`): for a caller that picks its own hits from a deeper ranking
        (the evaluation harness). Raises QueryError on an empty query."""
        query = parse_query(raw_query)
        embedder = self.embedder
        vector = embedder.embed_queries([embedding_text(self.db, query)])[0] if embedder is not None else None
        return deliver(self.db, hits, vector, query.text)

    def _run(self, query: Query, opts: SearchOptions, cands: Candidates,
             timings: dict[str, float] | None = None) -> tuple[Context, Candidates]:
        """Every stage of :data:`STAGES` over ``cands``; ``timings``: milliseconds per stage, filled in when given."""
        excluded = self.excluded(LifecyclePolicy(opts.include_expired, opts.include_superseded,
                                                 opts.min_confidence, opts.today, opts.zone))
        legs = [(f"dense{i + 1 if i else ''}", leg) for i, leg in enumerate(self.legs)]
        ctx = Context(self, query, opts, [(name, leg) for name, leg in legs if name in opts.legs], excluded,
                      allowed_paths(self.db, opts, excluded))
        for name, stage in STAGES:
            started = time.perf_counter()
            cands = stage(ctx, cands)
            if timings is not None:
                timings[name] = (time.perf_counter() - started) * 1000
        return ctx, cands

    def _result(self, ctx: Context, cands: Candidates, head: str | None, timings: dict[str, float],
                hidden: dict[str, Any]) -> SearchResult:
        """The hits with what the caller should know: a stale index, a missing vector leg."""
        warnings: list[str] = list(ctx.opts.config_warnings)
        indexed = self.meta.get("indexed_commit") or None
        rebuilding = self.db_path.with_name(self.db_path.name + ".rebuilding-old").exists()  # index/aside.py
        if rebuilding and sync_running(self.db_path.with_name("sync.lock")):  # index/layout.py
            warnings.append("the index is being rebuilt (`vaultsync index --rebuild`): the results hold only the "
                            "notes it has indexed so far")
        elif rebuilding:  # the rebuild was killed: the next sync puts the old index back (index/aside.recover)
            warnings.append("a rebuild (`vaultsync index --rebuild`) was stopped before it finished: the results hold "
                            "only the notes it had indexed; run `vaultsync sync` to put the previous index back")
        elif head and indexed != head:
            at = f"index is not at HEAD (indexed {indexed[:10] if indexed else 'nothing'}, HEAD {head[:10]})"
            if ctx.opts.config_refused:  # `vaultsync sync` refuses that config too: say what would mend it
                warnings.append(f"{at}: the committed .vaultsync.yaml is invalid ({ctx.opts.config_refused}), and no "
                                "sync indexes a commit until it is fixed and committed (`vaultsync check` lists why)")
            else:
                warnings.append(f"{at}; a sync is running (the hook's, or another): search again in a moment"
                                if sync_running(self.db_path.with_name("sync.lock")) else f"{at}; run `vaultsync sync`")
        if not rebuilding and (unread := json.loads(self.meta.get("retry_paths") or "[]")):
            from vaultsync.index.status import unread_warning  # only then: status loads the hook modules

            warnings.append(unread_warning(unread))
        if "dense" in ctx.opts.legs and not ctx.legs and not rebuilding:
            empty = self.db.execute("SELECT 1 FROM notes LIMIT 1").fetchone() is None
            warnings.append("the index holds no notes (is `vault:` in .vaultsync.yaml the folder of the notes?)"
                            if empty else "vector leg unavailable (no embeddings in the index): BM25 only")
        warnings.extend(unknown_filter_values(self.db, ctx.opts))
        stood_in = {h.replaces for h in cands.hits if h.replaces}  # a named superseded note: its successor answers
        asked = named_notes(ctx.query.text, self.note_names)[0] if hidden else []  # cands.named: the allowed only
        for n in (hidden or {}).get("notes", []):  # the note asked for by name is hidden: say so
            if n["path"] in asked and n["path"] not in stood_in:
                warnings.append(f"the note the query names, {n['memory_id'] or n['path']}, is hidden by a filter "
                                f"({n['reason']}) — to show it: {n['show_with']}")
        if cands.rerank_note:
            warnings.append(cands.rerank_note)
        if cands.hits and cands.hits[0].tokens > ctx.opts.budget:  # budget.cut keeps the first hit, whatever its size
            warnings.append(f"the best hit alone holds {cands.hits[0].tokens} tokens, over --budget "
                            f"{ctx.opts.budget}: it is kept so that the answer is not empty")
        counter = self.meta.get("token_counter", "estimate")
        floor = ctx.opts.min_relevance if self.relevance_model is not None else None
        return SearchResult(ctx.query.text, cands.hits, warnings, indexed, head, counter, cands.rerank,
                            {k: round(v, 1) for k, v in timings.items()}, floor, cands.best_rejected, hidden)

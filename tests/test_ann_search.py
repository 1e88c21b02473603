"""Past ``index.ann_min_rows`` vectors a dense leg is served by LanceDB's IVF-PQ index (ADR-0073).

Real git, SQLite and LanceDB files; the embedder is the deterministic hashing stand-in.
At this size every partition is probed and the refine step re-scores every row, so the
ANN leg must give exactly the exact leg's answer: any difference is a bug in the leg
(ids, filters, versions), not approximation. Recall at scale is measured by
``bench/bench_ann.py``.
"""

from __future__ import annotations

import shutil
from functools import partial
import sqlite3

import numpy as np
import pytest
from conftest import QueryHash, Vault, adr, hash_embedders, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("hashed_models")]

CONFIG = "vault: docs\nindex:\n  embedders: [multilingual-e5-small]\n  ann_min_rows: 256\n"
ANN_LEGS = '["multilingual-e5-small"]'  # meta.lance_ann of an index with an ANN index
WORDS = "cache index shard replica latency budget rollout canary queue retry backoff lock schema".split()


def _note(i: int) -> str:
    body = "".join(f"## Part {j}\n{' '.join(WORDS[(i * 7 + j * 3 + k) % len(WORDS)] for k in range(40))}.\n\n"
                   for j in range(5))
    extra = 'expires: "2020-01-01"\n' if i % 10 == 3 else ""
    return adr(f"ADR-{i:04d}", f"Decision {i}", extra=extra, body=body)


@pytest.fixture
def big(make_vault):  # type: ignore[no-untyped-def]
    v = make_vault({".vaultsync.yaml": CONFIG, **{
        f"docs/adr/ADR-{i:04d}.md" if i % 2 else f"docs/other/ADR-{i:04d}.md": _note(i) for i in range(60)}})
    v.commit("init")
    v.synced()
    return v


def _handles(v: Vault, ann: bool = True):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.engine import open_vector_table
    from vaultsync.search.pipeline import Searcher

    layout = layout_for(open_repo(v.root))
    path = layout.sqlite
    with sqlite3.connect(path) as db:  # ann=False: the same index read the exact way
        db.execute("UPDATE meta SET value = ? WHERE key = 'lance_ann'", (ANN_LEGS if ann else "[]",))
    return Searcher(path, {"multilingual-e5-small": QueryHash("multilingual-e5-small")}, relevance_model=None,
                    open_table=partial(open_vector_table, layout.lance))


def _legs(v: Vault):  # type: ignore[no-untyped-def]
    from vaultsync.search.ann import AnnLeg
    from vaultsync.search.dense import DenseLeg

    ann, exact = _handles(v).legs[0], _handles(v, ann=False).legs[0]
    assert isinstance(ann, AnnLeg) and isinstance(exact, DenseLeg)
    return ann, exact


def _queries(n: int = 12) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [q / np.linalg.norm(q) for q in rng.random((n, 16), dtype=np.float32) + 0.5]


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    """The same chunks (or (path, cosine) names) in the same order, with the same scores."""
    a = [(c.rowid, c.score) if hasattr(c, "rowid") else c for c in a]
    b = [(c.rowid, c.score) if hasattr(c, "rowid") else c for c in b]
    assert [x for x, _ in a] == [x for x, _ in b]
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-4)


def test_past_the_threshold_the_sync_builds_the_index_and_search_reads_lancedb(big):
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for

    with sqlite3.connect(layout_for(open_repo(big.root)).sqlite) as db:
        meta = dict(db.execute("SELECT key, value FROM meta"))
    assert meta["lance_ann"] == ANN_LEGS
    ann, exact = _legs(big)
    assert len(ann.chunks) == len(exact.chunks) > 256
    for q in _queries():
        _same(ann.top_chunks(q, 20, None), exact.top_chunks(q, 20, None))
        _same(ann.top_names(q, 10, None, None), exact.top_names(q, 10, None, None))
        rowids = [c.rowid for c in exact.top_chunks(q, 5, None)]
        assert ann.chunks.similarity(q, rowids) == pytest.approx(exact.chunks.similarity(q, rowids))


def test_the_sync_indexes_kind_and_path_beside_the_vectors_and_adds_what_an_older_table_lacks(big):
    """A table indexed before the path B-tree existed gets it from the next ``ensure_ann_index`` (the
    lifecycle filters' ``path NOT IN``), and nothing is built twice."""
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.vector_store import ChunkVectors

    table = ChunkVectors(layout_for(open_repo(big.root)).lance, 16)
    kinds = lambda: {ix.columns[0]: ix.index_type for ix in table.table.list_indices()}  # noqa: E731
    assert kinds()["kind"] == "Bitmap" and kinds()["path"] == "BTree" and kinds()["vector"].startswith("Ivf")
    table.table.drop_index(next(ix.name for ix in table.table.list_indices() if ix.columns == ["path"]))
    assert "path" not in kinds()
    assert table.ensure_ann_index(min_rows=256) and kinds()["path"] == "BTree"
    assert not table.ensure_ann_index(min_rows=256)


def test_a_vector_index_of_another_type_is_replaced_once_and_the_others_are_kept(big):
    """An index built by an older version (IVF_PQ, ADR-0073) is replaced by the next ``ensure_ann_index``
    with the type this version searches (IVF_SQ, ADR-0084), once; the other indices are kept."""
    from lancedb.index import IvfPq

    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.vector_store import ANN_INDEX, ChunkVectors

    table = ChunkVectors(layout_for(open_repo(big.root)).lance, 16)
    kinds = lambda: {ix.columns[0]: ix.index_type for ix in table.table.list_indices()}  # noqa: E731
    assert kinds()["vector"] == "IvfSq" == ANN_INDEX.title().replace("_", "")
    table.table.create_index("vector", config=IvfPq(distance_type="cosine", num_partitions=8, num_sub_vectors=4),
                             replace=True)
    assert kinds() == {"kind": "Bitmap", "path": "BTree", "vector": "IvfPq"}
    assert table.ensure_ann_index(min_rows=256)
    assert kinds() == {"kind": "Bitmap", "path": "BTree", "vector": "IvfSq"}
    assert not table.ensure_ann_index(min_rows=256)


@pytest.mark.parametrize("keep", ["most", "few", "none"])
def test_filters_apply_inside_the_ann_search(big, keep, monkeypatch):
    ann, exact = _legs(big)
    paths = sorted(ann.note_paths)
    allowed = {"most": set(paths[3:]), "few": set(paths[:4]), "none": set()}[keep]
    for q in _queries(6):
        found = ann.top_chunks(q, 15, allowed)
        _same(found, exact.top_chunks(q, 15, allowed))
        _same(ann.top_names(q, 5, allowed, "docs/adr/"), exact.top_names(q, 5, allowed, "docs/adr/"))
    # both sides too large for an IN list: the leg fetches deeper and filters after
    monkeypatch.setattr("vaultsync.search.ann.PATH_LIST_MAX", 1)
    for q in _queries(4):
        _same(ann.top_chunks(q, 15, allowed), exact.top_chunks(q, 15, allowed))


def test_search_through_the_ann_leg_hides_expired_notes_and_equals_exact_search(big):
    from vaultsync.search.options import SearchOptions

    opts = SearchOptions(legs=("dense",), graph_hops=0, min_relevance=0.0)
    for query in ("queue retry backoff", "schema lock cache", "Decision 13"):
        ann_hits = _handles(big).search(query, opts).hits
        exact_hits = _handles(big, ann=False).search(query, opts).hits
        assert [h.chunk_id for h in ann_hits] == [h.chunk_id for h in exact_hits]
        assert not any(h.path.endswith(("ADR-0003.md", "ADR-0013.md")) for h in ann_hits)  # expired


def test_a_change_after_the_index_is_built_is_searched_and_a_removed_note_is_gone(big):
    big.write("docs/adr/ADR-0001.md", _note(1).replace("Part 0", "Zebra crossing"))
    (big.root / "docs/adr/ADR-0005.md").unlink()
    big.commit("edit")
    big.synced()
    ann, exact = _legs(big)
    assert "docs/adr/ADR-0005.md" not in ann.note_paths
    for q in _queries():
        found = ann.top_chunks(q, 25, None)
        _same(found, exact.top_chunks(q, 25, None))


def test_an_unreadable_vector_table_falls_back_to_exact_search(big):
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.search.dense import DenseLeg

    shutil.rmtree(layout_for(open_repo(big.root)).lance)
    assert isinstance(_handles(big).legs[0], DenseLeg)


@pytest.fixture(scope="module")
def wide(tmp_path_factory):  # type: ignore[no-untyped-def]
    """~9,000 rows: enough for LanceDB to train dozens of partitions, so probing matters."""
    from conftest import git

    mp = pytest.MonkeyPatch()
    hash_embedders(mp)
    root = tmp_path_factory.mktemp("wide") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    v.write(".vaultsync.yaml", CONFIG)
    for i in range(1500):
        v.write(f"docs/d{i % 7}/N-{i:05d}.md", _note(i).replace(f"ADR-{i:04d}", f"N-{i}"))
    v.commit("init")
    v.synced()
    yield v
    mp.undo()


def test_a_narrow_filter_is_searched_exactly_and_a_wide_one_through_the_partitions(wide, monkeypatch):
    import vaultsync.search.ann

    ann, exact = _legs(wide)
    assert ann.table.table.list_indices() and len(ann.chunks) > 5000
    paths = sorted(ann.note_paths)
    d3 = {p for p in paths if p.startswith("docs/d3/")}
    for allowed in (set(paths[:3]), set(paths[700:702]), d3):  # at most EXACT_SCAN_ROWS rows: compared one by one
        for q in _queries(8):
            _same(ann.top_chunks(q, 15, allowed), exact.top_chunks(q, 15, allowed))
            _same(ann.top_names(q, 5, allowed, None), exact.top_names(q, 5, allowed, None))
    monkeypatch.setattr(vaultsync.search.ann, "EXACT_SCAN_ROWS", 2_000)  # d3's ~1,300 rows are still few
    _same(ann.top_chunks(_queries(1)[0], 15, d3), exact.top_chunks(_queries(1)[0], 15, d3))
    rest = set(paths) - d3  # too many rows to compare: the ANN search excludes d3 inside its probes
    assert ann.chunks.nearest_in(_queries(1)[0], 15, "chunk", rest, 2_000) is None

    def recall(allowed: set[str] | None) -> float:
        """Mean share of the exact top 20 that the ANN search finds, over 20 queries."""
        hits = [len({c.rowid for c in ann.top_chunks(q, 20, allowed)} & {c.rowid for c in exact.top_chunks(q, 20, allowed)})
                / 20 for q in _queries(20)]
        return sum(hits) / len(hits)

    path_of = dict(ann._db.execute("SELECT rowid, path FROM chunks"))
    assert all(path_of[c.rowid] in rest for q in _queries(4) for c in ann.top_chunks(q, 20, rest))
    # 25 % of 94 partitions probed, over 16-dimension vectors that all lie in one orthant: 0.81 here
    # (IVF_PQ trained only 35 partitions at this size, so it probed 69 %). Real vectors: bench_ann.py.
    assert recall(None) >= 0.75 and recall(rest) >= 0.75


@pytest.mark.parametrize("damage", ["indices", "data"])
def test_damaged_table_files_fall_back_to_exact_search_and_the_next_sync_repairs_them(big, damage):
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.search.options import SearchOptions

    table_dir = next(layout_for(open_repo(big.root)).lance.glob("*.lance"))
    for f in (table_dir / ("_indices" if damage == "indices" else "data")).rglob("*"):
        if f.is_file():
            f.unlink()
    opts = SearchOptions(legs=("dense",), graph_hops=0, min_relevance=0.0)
    expected = [h.chunk_id for h in _handles(big, ann=False).search("queue retry backoff", opts).hits]
    searcher = _handles(big)
    assert [h.chunk_id for h in searcher.search("queue retry backoff", opts).hits] == expected
    big.write("docs/adr/ADR-0001.md", _note(1) + "\nOne more line.\n")
    big.commit("edit")
    big.synced()
    ann, exact = _legs(big)
    for q in _queries(4):
        _same(ann.top_chunks(q, 20, None), exact.top_chunks(q, 20, None))
    assert ann._exact is None  # served by the repaired table, not by the fallback


@pytest.mark.parametrize("setting, message", [
    ("ann_min_rows: 50", "index.ann_min_rows: 50 must be at least 256"),
    ("ann_min_rows: lots", "index.ann_min_rows: expected a whole number, got 'lots'"),
    ("chunk_tokens: 5", "index.chunk_tokens: 5 must be at least 32"),
    ("token_vectors: often", "index.token_vectors: expected true or false, got 'often'"),
])
@pytest.mark.parametrize("command", [["sync", "--wait", "60"], ["index", "--rebuild"]])
def test_an_invalid_committed_index_setting_is_one_line_and_exit_1(make_vault, setting, message, command):
    v = make_vault({".vaultsync.yaml": f"vault: docs\nindex:\n  {setting}\n", "docs/adr/a.md": _note(1)})
    v.commit("init")
    res = run_cli(command, v.root)
    assert res.code == 1 and "Traceback" not in res.err and "internal error" not in res.err, res.err
    assert res.err.strip() == f".vaultsync.yaml:3:{3 + len(setting.split(':')[0]) + 2}: CF002 {message}"


def test_exact_cosines_of_many_ranked_chunks_walk_chunks_by_rowid_not_every_vector(tmp_path):
    """The relevance stage asks for the cosines of a few hundred ranked chunks. A plain JOIN let
    SQLite walk every vector of the model and probe chunks (29 s per search at 550,000 chunks):
    the lookup must start from the chunks' rowids."""
    from vaultsync.index.format import DDL
    from vaultsync.search.ann import SqliteVectors

    db = sqlite3.connect(tmp_path / "index.sqlite")
    db.executescript(DDL)
    vec = np.ones(4, np.float32) / 2
    with db:
        db.executemany("INSERT INTO chunks VALUES (?, ?, 'a.md', 0, '', '', '', '', 1, 1, 1, '[]')",
                       [(i, f"c{i}") for i in range(1, 401)])
        db.executemany("INSERT INTO vectors VALUES ('m', ?, 'a.md', '', 'chunk', ?)",
                       [(f"c{i}", vec.tobytes()) for i in range(1, 401)])
    sql: list[str] = []
    db.set_trace_callback(sql.append)
    rowids = list(range(1, 401, 2))
    assert SqliteVectors(db, "m").similarity(vec, rowids) == pytest.approx({r: 1.0 for r in rowids})
    db.set_trace_callback(None)
    plan = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql[-1]}")]
    assert plan[0].startswith("SEARCH c USING INTEGER PRIMARY KEY"), plan


ANN_SCRIPT = """
import sys, numpy as np
from pathlib import Path
from vaultsync.index.vector_store import ChunkVectors
rows = np.random.default_rng(1).standard_normal((600, 8)).astype(np.float32)
rows /= np.linalg.norm(rows, axis=1, keepdims=True)
table = ChunkVectors(Path(sys.argv[1]), 8, "m")
ids = [f"n{i}.md#0" for i in range(600)]
table.apply(ids, ids, [i.partition("#")[0] for i in ids], ["chunk"] * 600, [""] * 600, rows)
assert table.ensure_ann_index(min_rows=1)
assert len(table.nearest(rows[0], 5)) == 5
assert [r[0] for r in table.nearest(rows[0], 5, paths=["n3.md"])] == ["n3.md#0"]
print("ok")
"""


def test_index_builds_and_searches_print_nothing_on_stderr(tmp_path):
    """LanceDB's native logger printed its warnings (empty k-means clusters when an index is trained,
    a deprecation on every search) into hook logs and the terminal of a cold `vaultsync search`."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "LANCEDB_LOG"}
    done = subprocess.run([sys.executable, "-c", ANN_SCRIPT, str(tmp_path / "lance")], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
    assert done.stderr == ""


def test_loading_an_exact_leg_reads_the_chunks_index_only_and_keeps_each_vector_with_its_rowid(tmp_path):
    """Below the ANN threshold a leg reads every vector at open; joining each to its chunk row for the
    path read the whole chunks table (text included) on a cold search. The join must stay inside the
    chunks' id index, and every vector must still land at its chunk's rowid and path."""
    from vaultsync.index.format import DDL
    from vaultsync.search.dense import load_leg

    db = sqlite3.connect(tmp_path / "index.sqlite")
    db.executescript(DDL)
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((300, 4)).astype(np.float32)
    with db:
        db.executemany("INSERT INTO chunks VALUES (?, ?, ?, 0, '', 'text', '', '', 1, 1, 1, '[]')",
                       [(1000 + 3 * i, f"n{i % 50}.md#{i}", f"n{i % 50}.md") for i in range(300)])
        db.executemany("INSERT INTO vectors VALUES ('m', ?, ?, '', ?, ?)",
                       [(f"n{i % 50}.md#{i}", f"n{i % 50}.md", "chunk", vectors[i].tobytes()) for i in range(300)] +
                       [(f"n{i}.md#title", f"n{i}.md", "name", vectors[i].tobytes()) for i in range(50)])
    sql: list[str] = []
    db.set_trace_callback(sql.append)
    leg = load_leg(db, "dense", QueryHash("m"), {"id": "m", "dim": 4})
    db.set_trace_callback(None)
    assert leg is not None and len(leg.chunks) == 300 and len(leg.name_paths) == 50
    for i in range(300):
        at = leg.chunks._pos[1000 + 3 * i]
        assert leg.chunk_paths[at] == f"n{i % 50}.md" and leg.chunks.ids[at] == f"n{i % 50}.md#{i}"
        decoded = leg.chunks.codes[at] * leg.chunks.scales[at]
        assert np.abs(decoded - vectors[i]).max() <= leg.chunks.scales[at] / 2 + 1e-7
    assert leg.chunks.similarity(vectors[7], [1000 + 21]) == {1021: pytest.approx(float(vectors[7] @ vectors[7]))}
    chunk_query = next(s for s in sql if "JOIN chunks" in s)
    plan = " ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {chunk_query}"))
    assert "COVERING INDEX" in plan, plan

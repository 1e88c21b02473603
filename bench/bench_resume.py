"""A first build killed (SIGKILL) at random points and restarted each time ends as a clean build does.

    python bench/bench_resume.py [--notes 40] [--kills 20] [--batch 32] [--max-delay 15]
                                 [--cache-kills 10] [--seed 1] [--workdir DIR] [--keep]

Generates a vault (bench/vaultgen.py), commits it, and runs ``vaultsync sync`` (the CLI, in a child
process whose embedders log each text before embedding it) with the embedding cache written every
``--batch`` chunks. Each child is killed with SIGKILL after a random delay and started again, until
``--kills`` kills; a child that finishes before its kill gets a new commit (a line appended to
every note) to work on. A last sync then runs to its end. Checks (exit status 1 when one fails):

* the sync completes: the index holds HEAD;
* no embedding is computed twice beyond the batch a kill interrupts: of the texts a killed run
  started, at most ``--batch`` are started again later (plus fewer than 32 of an earlier embedder
  that had fewer than 32 to embed: below that the cache is not consulted, ADR-0006);
* the embedding cache survives every kill: it opens, and its row count never goes down (a damaged
  table would be dropped and recreated empty);
* the final index equals ``vaultsync index --rebuild`` in a fresh clone with an empty embedding
  cache: the same note and chunk rows, and the same vectors for every model (within 1e-5);
* a process that does nothing but write batches to an embedding cache, killed ``--cache-kills``
  times (most kills land mid-write there), leaves a cache that opens and holds whole batches only,
  each vector as written.

Prints each kill (delay, where it landed, cache rows) and a summary: embeddings computed, unique,
computed again, wall times.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from vaultgen import generate, git_commit  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x", "PYTHONPATH": str(ROOT)}
LOOKUP_MIN = 32  # vaultsync.index.embedding.CACHE_LOOKUP_MIN
DIM, WRITE_BATCH = 384, 64  # the cache torture: vector size, rows per write


def child(repo: Path, log: Path, batch: int, run: int) -> int:
    """One ``vaultsync sync`` whose embedders log ``E run model sha`` before and ``D run model n`` after each batch."""
    import vaultsync.index.embedding as embedding

    embedding.FLUSH_EVERY = batch
    real = embedding.default_embedder
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    class Logged:
        def __init__(self, inner: object) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

        def embed_passages(self, texts: list[str]) -> object:
            model = self.inner.model_id  # type: ignore[attr-defined]
            os.write(fd, "".join(f"E\t{run}\t{model}\t{_sha(t)}\n" for t in texts).encode())
            out = self.inner.embed_passages(texts)  # type: ignore[attr-defined]
            os.write(fd, f"D\t{run}\t{model}\t{len(texts)}\n".encode())
            return out

    embedding.default_embedder = lambda config, name=None: Logged(real(config, name))  # type: ignore[assignment]
    os.chdir(repo)
    from vaultsync.cli.main import main

    return main(["sync", "--quiet"])


def writer(folder: Path) -> int:
    """Append batches of ``WRITE_BATCH`` known vectors to an embedding cache at ``folder`` until killed."""
    from vaultsync.index.embedding_cache import EmbeddingCache

    cache = EmbeddingCache(folder, DIM)
    start = cache._table.count_rows()
    while True:
        cache.put("m", [f"k{j}" for j in range(start, start + WRITE_BATCH)], known(start, WRITE_BATCH))
        start += WRITE_BATCH


def known(start: int, n: int):  # type: ignore[no-untyped-def]
    import numpy as np

    return (np.arange(DIM, dtype=np.float32)[None, :] + np.arange(start, start + n, dtype=np.float32)[:, None]) / 1e3


def torture_cache(work: Path, kills: int, rng: random.Random) -> list[str]:
    """SIGKILL a process writing batches to the embedding cache ``kills`` times; after each kill the cache
    must open, hold whole batches only, none lost before the kill, every vector as written."""
    from vaultsync.index.embedding_cache import EmbeddingCache

    folder, failures, before = work / "cache-torture", [], 0
    for k in range(kills):
        proc = subprocess.Popen([sys.executable, __file__, "--writer", str(folder)], env=ENV,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(1.5, 4.0))  # past the import of lancedb (about 1.5 s), into the writes
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        cache = EmbeddingCache(folder, DIM)
        rows = cache._table.count_rows()
        got = cache.get("m", [f"k{j}" for j in range(rows)])
        import numpy as np

        whole = rows % WRITE_BATCH == 0 and len(got) == rows
        exact = whole and all(np.array_equal(got[f"k{j}"], v) for j, v in zip(range(rows), known(0, rows)))
        if rows < before or not exact:
            failures.append(f"cache kill {k + 1}: {rows} rows (before {before}), whole batches {whole}, exact {exact}")
        before = rows
    print(f"cache writer killed {kills} times: {before} rows in {before // WRITE_BATCH} whole batches, "
          f"{'all' if not failures else 'NOT all'} vectors as written", flush=True)
    return failures


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True, text=True).stdout


def indexed(repo: Path) -> str | None:
    path = repo / ".git/vaultsync/index.sqlite"
    if not path.exists():
        return None
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'indexed_commit'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return row[0] if row else None


def cache_rows(repo: Path) -> dict[str, int]:
    """Rows per embedding cache table (opened as a sync opens it: a damaged table would come back empty)."""
    from vaultsync.index.embedding_cache import EmbeddingCache

    folder = repo / ".git/vaultsync/embeddings"
    dims = sorted(int(p.name.split("_")[1].split(".")[0]) for p in folder.glob("embeddings_*.lance")) \
        if folder.is_dir() else []
    return {f"embeddings_{d}": EmbeddingCache(folder, d)._table.count_rows() for d in dims}


def index_state(repo: Path) -> dict[str, object]:
    """Notes, chunks and vectors of the index, independent of row order and rowids."""
    db = sqlite3.connect(repo / ".git/vaultsync/index.sqlite")
    try:
        state: dict[str, object] = {
            "tree": db.execute("SELECT value FROM meta WHERE key = 'indexed_tree'").fetchone(),
            "notes": sorted(db.execute("SELECT * FROM notes")),
            "chunks": sorted(db.execute("SELECT id, path, n, heading, text, norm, hash, start_line, end_line, "
                                        "tokens, blocks FROM chunks")),
            "vectors": sorted(db.execute("SELECT model, id, kind, hash, vector FROM vectors")),
        }
    finally:
        db.close()
    return state


def same_index(a: dict[str, object], b: dict[str, object]) -> list[str]:
    import numpy as np

    problems = [f"{key} differ" for key in ("tree", "notes", "chunks") if a[key] != b[key]]
    va, vb = a["vectors"], b["vectors"]
    if [r[:4] for r in va] != [r[:4] for r in vb]:  # type: ignore[attr-defined]
        problems.append("vector rows differ")
    else:
        worst = max((float(np.abs(np.frombuffer(x[4], "<f4") - np.frombuffer(y[4], "<f4")).max())
                     for x, y in zip(va, vb)), default=0.0)  # type: ignore[call-overload]
        if worst > 1e-5:
            problems.append(f"vectors differ by up to {worst:.2e}")
    return problems


def read_log(log: Path) -> list[tuple[str, int, str, str]]:
    out = []
    for line in log.read_text().splitlines() if log.exists() else []:
        parts = line.split("\t")
        if len(parts) == 4:  # a line cut by the kill is ignored
            out.append((parts[0], int(parts[1]), parts[2], parts[3]))
    return out


def where(entries: list[tuple[str, int, str, str]], run: int, repo: Path, head: str) -> str:
    mine = [e for e in entries if e[1] == run]
    if indexed(repo) == head:
        return "after the SQLite commit"
    if not mine:
        return "before embedding"
    state = "mid-batch" if mine[-1][0] == "E" else "after a batch (or the commit under way)"
    return f"{state} ({mine[-1][2].split('@')[0]})"


def edit_notes(repo: Path, rng: random.Random, round_: int) -> None:
    """Append a line to every note: one new chunk each (the last section) for the next runs to embed."""
    for path in sorted((repo / "docs").rglob("*.md")):
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\nRevision {round_}: the rollout of this note was reviewed again, item {rng.random():.6f}.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"edit round {round_}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=40)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32, help="chunks per write to the embedding cache")
    ap.add_argument("--max-delay", type=float, default=15.0, help="longest delay before a kill, seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--cache-kills", type=int, default=10, help="kills of a process writing to the cache alone")
    ap.add_argument("--child", nargs=4, metavar=("REPO", "LOG", "BATCH", "RUN"), help=argparse.SUPPRESS)
    ap.add_argument("--writer", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        repo, log, batch, run = args.child
        return child(Path(repo), Path(log), int(batch), int(run))
    if args.writer:
        return writer(args.writer)

    rng = random.Random(args.seed)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-resume-"))
    repo, log = work / "repo", work / "embedded.log"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    generate(repo, args.notes, seed=args.seed)
    git_commit(repo)
    started = time.perf_counter()
    run, kills, edits, failures, rows_before = 0, [], 0, [], {}
    last_finished: float | None = None  # seconds the last run that finished took
    phases: list[str] = []
    while True:
        run += 1
        final = len(kills) >= args.kills
        proc = subprocess.Popen([sys.executable, __file__, "--child", str(repo), str(log), str(args.batch), str(run)],
                                env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Most kills land anywhere in the first --max-delay seconds; every fourth, once a run has been
        # seen to finish, near the end of such a run: the SQLite commit and the LanceDB update.
        aim_end = last_finished is not None and len(kills) % 4 == 3
        delay = rng.uniform(0.8, 1.05) * last_finished if aim_end else rng.uniform(0.3, args.max_delay)  # type: ignore[operator]
        t0 = time.perf_counter()
        try:
            proc.wait(timeout=None if final else delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            rows = cache_rows(repo)
            shrunk = [t for t, n in rows_before.items() if rows.get(t, 0) < n]
            if shrunk:
                failures.append(f"run {run}: cache table {', '.join(shrunk)} lost rows after the kill")
            rows_before = rows
            kills.append(run)
            head = git(repo, "rev-parse", "HEAD").strip()
            phases.append(where(read_log(log), run, repo, head))
            print(f"kill {len(kills):2d}: run {run:2d} after {delay:4.1f} s, {phases[-1]}; cache rows {rows}", flush=True)
            continue
        if proc.returncode != 0:
            failures.append(f"run {run} exited {proc.returncode}: {proc.stderr.read().decode()[-500:] if proc.stderr else ''}")
            break
        if final:
            break
        last_finished = time.perf_counter() - t0
        edits += 1  # finished before its kill: more work for the next ones
        edit_notes(repo, rng, edits)
        print(f"run {run:2d} finished within {delay:.1f} s; committed edit round {edits}", flush=True)
    resumed_s = time.perf_counter() - started
    head = git(repo, "rev-parse", "HEAD").strip()
    if indexed(repo) != head:
        failures.append("the last sync did not leave HEAD indexed")

    entries = [e for e in read_log(log) if e[0] == "E"]
    legs = len({e[2] for e in entries}) or 1
    started_in: dict[int, set[tuple[str, str]]] = {}
    for _, r, model, sha in entries:
        started_in.setdefault(r, set()).add((model, sha))
    bound = args.batch + (LOOKUP_MIN - 1) * (legs - 1)
    again = {}
    for r in range(1, run + 1):  # a killed run may lose the batch under way; a finished one loses nothing
        later = set().union(*(s for r2, s in started_in.items() if r2 > r))
        again[r] = len(started_in.get(r, set()) & later)
        allowed = bound if r in kills else 0
        if again[r] > allowed:
            failures.append(f"run {r}: {again[r]} of its embeddings computed again (at most {allowed} allowed)")
    unique = len({(m, s) for _, _, m, s in entries})

    clean = work / "clean"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True, env=ENV)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "vaultsync", "index", "--rebuild", "--quiet"], cwd=clean, env=ENV,
                   check=True)
    clean_s = time.perf_counter() - t
    failures += [f"final index vs clean rebuild: {p}" for p in same_index(index_state(repo), index_state(clean))]
    failures += torture_cache(work, args.cache_kills, rng)

    print(f"\n{args.notes} notes, {len(index_state(repo)['chunks'])} chunks, {legs} embedders; {len(kills)} kills in "  # type: ignore[arg-type]
          f"{run} runs, {edits} edit rounds; batch {args.batch}")
    print(f"embeddings computed {len(entries)}, unique {unique}, computed again {len(entries) - unique} "
          f"(per killed run: max {max(again.values(), default=0)}, allowed {bound})")
    print("kills landed: " + ", ".join(f"{n} {p}" for p, n in sorted(
        {p.split(" (")[0]: sum(q.split(" (")[0] == p.split(" (")[0] for q in phases) for p in phases}.items())))
    print(f"killed-and-resumed runs {resumed_s:.1f} s in all; clean rebuild {clean_s:.1f} s")
    for failure in failures:
        print(f"FAIL {failure}")
    print("OK: completed, nothing embedded twice beyond one batch per kill, final index = clean rebuild"
          if not failures else f"{len(failures)} check(s) failed")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

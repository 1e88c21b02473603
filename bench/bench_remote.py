"""Team index on object storage (ADR-0071): time from a fresh clone to searchable, then a one-note change.

    python bench/bench_remote.py [--notes 1000] [--runs 3] [--seed 7] [--query "failover snapshot restore"]
                                 [--workdir DIR] [--keep]
    python bench/bench_remote.py --notes 10000 --runs 3     # the target size

The issue's targets are for a 10,000-note vault: a new clone searchable within 60 s, a one-note change
synced within 1.5 s. At 10,000 notes the publish (a full build with the real models) and the reference
rebuild take about 20 minutes each on a 2-core machine, so smaller runs (``--notes 1000``, ``2000``) are
the everyday ones; ``--notes 10000`` runs the same steps at the target size.

Steps, every vaultsync call a fresh ``python -m vaultsync`` process (interpreter start-up counted):

1. generate a vault (bench/vaultgen.py), commit it, start moto's S3 server on a free 127.0.0.1 port
   (fake credentials, ``AWS_ENDPOINT_URL``), create a bucket and run ``vaultsync publish --remote
   s3://BUCKET/team`` in the vault with the default embedders (real models from the model cache:
   ``$VAULTSYNC_CACHE_DIR`` or ``~/.cache/vaultsync``, passed through);
2. per run (``--runs``, each in a fresh ``git clone``: a new developer): ``vaultsync pull --remote ...``,
   then one ``vaultsync search QUERY --no-daemon --format json`` that must return hits; pull, first
   search and their sum (clone to searchable) are timed separately;
3. on top of it, append a line to one note, ``git commit`` (no hooks installed) and time ``vaultsync
   sync`` (the incremental sync of a one-note change; the sync's own reported time, without interpreter
   start-up and imports, is shown beside it);
4. check the run's index equals ``vaultsync index --rebuild`` in another fresh clone of the same commit
   (empty embedding cache; the edit is committed with fixed dates, so every run and the reference hold
   the same commit): same notes, chunks, FTS rows, links, indexed and LanceDB trees, vector ids, and
   vectors within 1e-5. Prints ``equal: yes/no`` per run and what differs.

Prints one line per run, then medians, the publish and rebuild times and the targets. Exit status 1 when
a step fails or an index is not equal. The S3 server is moto's, in this process, on loopback: download
times are those of a local server, not of a remote bucket.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from vaultgen import generate, git_commit  # noqa: E402

BUCKET = "bench-team-index"
EDIT_DATE = "2026-12-01T12:00:00+00:00"  # the one-note change is the same commit in every clone
TOKEN = "zqxbenchremote"
TOLERANCE = 1e-5


def environment(work: Path, endpoint: str) -> dict[str, str]:
    """This process's environment without git hook variables or the user's AWS settings, plus the fake
    credentials and endpoint of the moto server (``VAULTSYNC_CACHE_DIR`` and the rest pass through)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "AWS_")) and k != "VAULTSYNC_REMOTE"}
    env.update({"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
                "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
                "AWS_CONFIG_FILE": str(work / "no-aws-config"),
                "AWS_SHARED_CREDENTIALS_FILE": str(work / "no-aws-credentials")})
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Failed(Exception):
    """A step failed; the message says which and its stderr."""


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(wall seconds, stdout) of one process; Failed on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise Failed(f"{' '.join(cmd[2:] if cmd[0] == sys.executable else cmd)} (in {cwd.name}) exited "
                     f"{proc.returncode}: {proc.stderr.strip()[-1500:]}")
    return wall, proc.stdout


def vaultsync(*args: str) -> list[str]:
    return [sys.executable, "-m", "vaultsync", *args]


def git(cwd: Path, env: dict[str, str], *args: str) -> str:
    return run(["git", *args], cwd, env)[1]


def clone(origin: Path, dest: Path, env: dict[str, str]) -> float:
    shutil.rmtree(dest, ignore_errors=True)
    return run(["git", "clone", "-q", str(origin), str(dest)], dest.parent, env)[0]


def edit_and_commit(repo: Path, note: str, env: dict[str, str]) -> str:
    """Append a line to ``note`` and commit it with fixed dates (no hooks run); returns the commit id."""
    with open(repo / note, "a", encoding="utf-8") as fh:
        fh.write(f"\nReview note: the {TOKEN} rollout was checked again after the failover drill.\n")
    git(repo, env, "add", "-A")
    git(repo, {**env, "GIT_AUTHOR_DATE": EDIT_DATE, "GIT_COMMITTER_DATE": EDIT_DATE},
        "commit", "-qm", "one-note change", "--no-verify")
    return git(repo, env, "rev-parse", "HEAD").strip()


def meta(repo: Path) -> dict[str, str]:
    db = sqlite3.connect(repo / ".git/vaultsync/index.sqlite")
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def index_state(repo: Path) -> dict[str, object]:
    """What the index holds, independent of rowids and row order (as tests/conftest.py's ``index_state``)."""
    import numpy as np

    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.sqlite_store import SqliteStore

    layout = layout_for(open_repo(repo))
    db = sqlite3.connect(layout.sqlite)
    try:
        m = dict(db.execute("SELECT key, value FROM meta"))
        state: dict[str, object] = {
            "indexed_tree": m.get("indexed_tree"),
            "lance_tree": m.get("lance_tree"),
            "notes": sorted(db.execute("SELECT * FROM notes")),
            "chunks": sorted(db.execute(
                "SELECT id, path, n, heading, text, norm, hash, start_line, end_line, tokens, blocks FROM chunks")),
            "chunks_fts": sorted(db.execute(
                "SELECT c.id, f.title, f.heading, f.text FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid")),
            "notes_fts": sorted(db.execute("SELECT path, title, body FROM notes_fts")),
            "links": sorted(db.execute("SELECT source, target, anchor, kind, resolved, line FROM links"),
                            key=json.dumps),
        }
    finally:
        db.close()
    store = SqliteStore(layout.sqlite, readonly=True)
    try:
        models = [model for (model,) in store.db.execute("SELECT DISTINCT model FROM vectors ORDER BY model")]
        vectors = {model: store.all_vectors(model) for model in models}
    finally:
        store.close()
    state["vector_ids"] = {model: ids for model, (ids, _, _, _) in vectors.items()}
    state["vectors"] = {model: np.stack([np.frombuffer(b, "<f4") for b in blobs])
                        for model, (_, _, _, blobs) in vectors.items()}
    return state


def differences(got: dict[str, object], want: dict[str, object]) -> list[str]:
    """What differs between a run's index (``got``) and the rebuild (``want``), one line each."""
    import numpy as np

    out = []
    for key in want:
        a, b = got[key], want[key]
        if key == "vectors":
            if a.keys() != b.keys():  # type: ignore[union-attr]
                out.append(f"vector models differ: {sorted(a)} vs {sorted(b)}")  # type: ignore[arg-type]
                continue
            for model in b:  # type: ignore[union-attr]
                va, vb = a[model], b[model]  # type: ignore[index]
                if va.shape != vb.shape:
                    out.append(f"vectors of {model}: shape {va.shape} vs {vb.shape}")
                    continue
                err = np.abs(va - vb).max(axis=1) if len(va) else np.zeros(0)
                if (err > TOLERANCE).any():
                    ids = want["vector_ids"][model]  # type: ignore[index]
                    bad = [ids[i] for i in np.flatnonzero(err > TOLERANCE)[:3]]
                    out.append(f"vectors of {model}: {int((err > TOLERANCE).sum())} of {len(va)} rows differ by up to "
                               f"{float(err.max()):.2e} (e.g. {', '.join(bad)})")
        elif key == "vector_ids":
            for model in sorted(set(a) | set(b)):  # type: ignore[arg-type]
                ia, ib = set(a.get(model, [])), set(b.get(model, []))  # type: ignore[union-attr]
                if ia != ib:
                    out.append(f"vector ids of {model}: {len(ia - ib)} only in the pulled index "
                               f"{sorted(ia - ib)[:3]}, {len(ib - ia)} only in the rebuild {sorted(ib - ia)[:3]}")
        elif isinstance(b, list):
            if a != b:
                sa, sb = set(map(repr, a)), set(map(repr, b))  # type: ignore[arg-type]
                only_a, only_b = sorted(sa - sb), sorted(sb - sa)
                out.append(f"{key}: {len(a)} vs {len(b)} rows, {len(only_a)} only in the pulled index, "  # type: ignore[arg-type]
                           f"{len(only_b)} only in the rebuild"
                           + (f"; pulled has {only_a[0][:200]}" if only_a else "")
                           + (f"; rebuild has {only_b[0][:200]}" if only_b else ""))
        elif a != b:
            out.append(f"{key}: {a!r} vs {b!r}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3, help="fresh clones: pull, first search, one-note sync")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--query", default="failover snapshot restore", help="the first search")
    ap.add_argument("--workdir", type=Path, help="default: a temporary folder")
    ap.add_argument("--keep", action="store_true", help="keep the workdir")
    args = ap.parse_args()

    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per S3 request

    work = (args.workdir or Path(tempfile.mkdtemp(prefix="bench-remote-"))).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    env = environment(work, endpoint)
    failures: list[str] = []
    rows: list[dict[str, object]] = []
    publish_s = rebuild_s = 0.0
    chunks = 0
    try:
        import boto3

        boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                              region_name="us-east-1").client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
        remote = f"s3://{BUCKET}/team"
        origin = work / "origin"
        notes = generate(origin, args.notes, seed=args.seed)
        git_commit(origin, "generated vault")
        note = notes[len(notes) // 2]
        print(f"{args.notes} notes in {origin}; S3 (moto) at {endpoint}; remote {remote}", flush=True)

        publish_s, out = run(vaultsync("publish", "--remote", remote), origin, env)
        print(f"publish {publish_s:.1f} s: {out.strip().splitlines()[-1] if out.strip() else ''}", flush=True)

        reference = work / "rebuild"
        clone(origin, reference, env)
        head = edit_and_commit(reference, note, env)
        rebuild_s, _ = run(vaultsync("index", "--rebuild", "--quiet"), reference, env)
        want = index_state(reference)
        chunks = len(want["chunks"])  # type: ignore[arg-type]
        print(f"reference: index --rebuild of {head[:12]} in a fresh clone (empty embedding cache) {rebuild_s:.1f} s",
              flush=True)

        for r in range(1, args.runs + 1):
            repo = work / f"clone-{r}"
            row: dict[str, object] = {"run": r}
            try:
                row["clone"] = clone(origin, repo, env)
                row["pull"], out = run(vaultsync("pull", "--remote", remote), repo, env)
                if r == 1:
                    print("  " + "\n  ".join(out.strip().splitlines()), flush=True)
                if "HEAD itself" not in out:
                    failures.append(f"run {r}: pull did not install HEAD's snapshot: {out.strip()}")
                row["search"], out = run(vaultsync("search", args.query, "--no-daemon", "--format", "json"), repo, env)
                hits = json.loads(out).get("hits", [])
                if not hits:
                    failures.append(f"run {r}: the first search for {args.query!r} returned no hits")
                row["hits"] = len(hits)
                row["searchable"] = float(row["pull"]) + float(row["search"])  # type: ignore[arg-type]
                if edit_and_commit(repo, note, env) != head:
                    failures.append(f"run {r}: the one-note change is not the reference's commit {head[:12]}")
                row["sync"], out = run(vaultsync("sync"), repo, env)
                summary = out.strip().splitlines()[-1] if out.strip() else ""
                if r == 1:
                    print(f"  {summary}", flush=True)
                if summary.endswith(" s") and summary.rsplit("; ", 1)[-1][:-2].replace(".", "", 1).isdigit():
                    row["sync_inner"] = float(summary.rsplit("; ", 1)[-1][:-2])  # the sync's own time, no start-up
                if meta(repo).get("indexed_commit") != head:
                    failures.append(f"run {r}: after the sync the index is not at HEAD {head[:12]}")
                diffs = differences(index_state(repo), want)
                row["equal"] = "yes" if not diffs else "no"
                failures += [f"run {r}: not equal to the rebuild: {d}" for d in diffs]
            except Failed as exc:
                failures.append(f"run {r}: {exc}")
                row["equal"] = "no"
            rows.append(row)
            shown = {k: (f"{v:.2f}" if isinstance(v, float) else v) for k, v in row.items()}
            print(f"run {r}: {shown}", flush=True)
            if not args.keep:
                shutil.rmtree(repo, ignore_errors=True)
    except Failed as exc:
        failures.append(str(exc))
    finally:
        server.stop()

    cols = [("clone", "clone s"), ("pull", "pull s"), ("search", "1st search s"), ("searchable", "pull+search s"),
            ("sync", "1-note sync s"), ("sync_inner", "(reported s)")]
    if rows:
        print(f"\n{args.notes} notes, {chunks} chunks; publish {publish_s:.1f} s; "
              f"local build without the team index (index --rebuild) {rebuild_s:.1f} s")
        print(f"{'run':>6} " + " ".join(f"{title:>14}" for _, title in cols) + f" {'hits':>5} {'equal':>6}")
        for row in rows:
            print(f"{row['run']:>6} " + " ".join(f"{row[k]:>14.2f}" if k in row else f"{'-':>14}" for k, _ in cols)
                  + f" {row.get('hits', '-'):>5} {row['equal']:>6}")
        medians = {k: statistics.median(float(row[k]) for row in rows if k in row)  # type: ignore[arg-type]
                   for k, _ in cols if any(k in row for row in rows)}
        print(f"{'median':>6} " + " ".join(f"{medians[k]:>14.2f}" if k in medians else f"{'-':>14}" for k, _ in cols))
        if "searchable" in medians:
            print(f"clone to searchable (pull + first search): {medians['searchable']:.1f} s "
                  f"(target at 10,000 notes: <= 60 s)")
        if "sync" in medians:
            print(f"one-note change (vaultsync sync): {medians['sync']:.2f} s (target: <= 1.5 s)")
        print(f"equal: {'yes' if all(row['equal'] == 'yes' for row in rows) else 'no'}")
    for failure in failures:
        print(f"FAIL {failure}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

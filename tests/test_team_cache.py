"""Reading the embedding cache through from the team index on a cache miss (ADR-0075), against the real
moto S3 server, real git, SQLite and LanceDB (fixtures of test_remote_index: the hashing embedder records
every text it embeds, so a test can tell what a sync computed itself)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import assert_same_index, index_state, run_cli
from test_remote_index import EMBEDDED, clone, hashed_models, origin, publish, remote, s3_endpoint  # noqa: F401 - fixtures

from vaultsync.git import open_repo
from vaultsync.index import segments
from vaultsync.index.layout import layout_for

BATCH = 40  # notes per commit: more than CACHE_LOOKUP_MIN new chunks, so the sync looks beyond its own cache


def add_notes(v, start: int, count: int = BATCH, word: str = "queue") -> None:  # type: ignore[no-untyped-def]
    for i in range(start, start + count):
        v.write(f"docs/n{i:04d}.md", f"# {word.title()} {i}\nA {word} note, number {i * 7919 % 1000}.\n")
    v.commit(f"notes {start}..{start + count - 1}")


def of_batch(text: str, word: str, start: int) -> bool:
    """A chunk or a name of the notes that :func:`add_notes` wrote from ``start`` with ``word``."""
    return word in text.lower() or text in {f"n{i:04d}" for i in range(start, start + BATCH)}


def team_clone(origin, remote, tmp_path, name: str = "dev"):  # type: ignore[no-untyped-def]
    """A clone with its own index of the current origin (so no snapshot is installed), told about the
    team index through git config."""
    local = clone(origin, tmp_path, name)
    assert run_cli(["sync", "--quiet"], local.root).code == 0
    local.git("config", "vaultsync.remote", remote.url)
    return local


def pull_origin(local) -> None:  # type: ignore[no-untyped-def]
    local.git("pull", "-q", "--ff-only")


def merged(v) -> set[str]:  # type: ignore[no-untyped-def]
    return segments.merged(layout_for(open_repo(v.root)).embeddings)


def test_a_sync_after_git_pull_reads_the_published_vectors_instead_of_embedding(origin, remote, tmp_path):
    local = team_clone(origin, remote, tmp_path)
    add_notes(origin, 0)
    publish(origin, remote)
    pull_origin(local)
    EMBEDDED.clear()
    res = run_cli(["sync"], local.root)
    assert res.code == 0, res.err
    assert EMBEDDED == []  # every new chunk and name came from the team's segments
    assert "from the team index" in res.out, res.out
    synced = index_state(local.root)
    assert run_cli(["index", "--rebuild", "--quiet"], local.root).code == 0
    assert_same_index(synced, index_state(local.root))


def test_only_what_the_snapshot_lacks_is_embedded_and_a_merged_segment_is_not_fetched_again(origin, remote,
                                                                                           tmp_path):
    local = team_clone(origin, remote, tmp_path)
    add_notes(origin, 0)
    publish(origin, remote)  # c1
    add_notes(origin, 100, word="retry")  # c2: not published
    pull_origin(local)
    EMBEDDED.clear()
    assert run_cli(["sync", "--quiet"], local.root).code == 0
    assert EMBEDDED and all(of_batch(t, "retry", 100) for t in EMBEDDED)  # c2's chunks and names only
    first = merged(local)
    assert first

    add_notes(origin, 200, word="deploy")  # c3: not published either; c1 stays the nearest snapshot
    pull_origin(local)
    remote.client.delete_object(Bucket=remote.bucket, Key=next(k for k in remote.keys() if "/embeddings/" in k))
    EMBEDDED.clear()
    res = run_cli(["sync"], local.root)
    assert res.code == 0 and "team embedding cache not read" not in res.out + res.err  # nothing was fetched
    assert merged(local) == first and EMBEDDED and all(of_batch(t, "deploy", 200) for t in EMBEDDED)


def test_only_the_buckets_that_hold_a_missing_hash_are_downloaded(origin, remote, tmp_path, monkeypatch):
    monkeypatch.setattr(segments, "bucket_width", lambda rows: 1)  # 16 buckets even for a small vault
    local = team_clone(origin, remote, tmp_path)
    add_notes(origin, 0, count=BATCH)
    publish(origin, remote)
    manifest = json.loads(remote.get(next(k for k in remote.keys() if k.endswith("manifest.json"))))
    buckets = {o["prefix"]: o["sha256"] for o in manifest["objects"] if o["kind"] == "embeddings"}
    assert len(buckets) > 8 and all(len(p) == 1 for p in buckets)

    pull_origin(local)
    db = sqlite3.connect(layout_for(open_repo(local.root)).sqlite)
    before = {h for (h,) in db.execute("SELECT hash FROM vectors")}
    db.close()
    EMBEDDED.clear()
    assert run_cli(["sync", "--quiet"], local.root).code == 0
    assert EMBEDDED == []
    db = sqlite3.connect(layout_for(open_repo(local.root)).sqlite)
    needed = {h for (h,) in db.execute("SELECT hash FROM vectors")} - before
    db.close()
    assert merged(local) == {buckets[p] for p in {h[0] for h in needed}}


@pytest.mark.parametrize("fault", ["unreachable", "tampered segment", "no snapshot"])
def test_a_team_index_that_cannot_be_used_costs_one_warning_and_the_sync_embeds_locally(origin, remote, tmp_path,
                                                                                       monkeypatch, fault):
    local = team_clone(origin, remote, tmp_path)
    add_notes(origin, 0)
    if fault != "no snapshot":
        publish(origin, remote)
    if fault == "tampered segment":
        for key in [k for k in remote.keys() if "/embeddings/" in k]:
            data = bytearray(remote.get(key))
            data[-1] ^= 0xFF
            remote.put(key, bytes(data))
    if fault == "unreachable":
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    pull_origin(local)
    EMBEDDED.clear()
    res = run_cli(["sync"], local.root)
    assert res.code == 0, res.err
    assert len(EMBEDDED) >= BATCH  # embedded here
    warnings = [line for line in (res.out + res.err).splitlines() if "team embedding cache not read" in line]
    assert len(warnings) == (0 if fault == "no snapshot" else 1), res.out + res.err
    if fault == "tampered segment":
        assert "checksum mismatch" in warnings[0] and merged(local) == set()
    synced = index_state(local.root)
    assert run_cli(["index", "--rebuild", "--quiet"], local.root).code == 0
    assert_same_index(synced, index_state(local.root))


def test_a_manifest_entry_with_a_malformed_prefix_is_refused():
    from vaultsync.index.remote import parse_manifest

    entry = {"name": "embeddings/x", "kind": "embeddings", "sha256": "a" * 64, "size": 1, "model": "m", "dim": 4,
             "rows": 1}
    doc = {"format": 1, "commit": "c", "tree": "t", "fingerprint": "f", "fingerprint_parts": {},
           "vaultsync_version": "v", "created": "now"}
    assert parse_manifest(json.dumps({**doc, "objects": [entry]}).encode()).objects[0].prefix is None
    assert parse_manifest(json.dumps({**doc, "objects": [{**entry, "prefix": "a0"}]}).encode()).objects[0].prefix == "a0"
    for bad in ("zz", "../", 7, "abcde"):
        with pytest.raises(ValueError, match="malformed"):
            parse_manifest(json.dumps({**doc, "objects": [{**entry, "prefix": bad}]}).encode())


@pytest.mark.parametrize("forge", ["scaled", "zero", "duplicate hash"])
def test_a_forged_segment_that_matches_its_manifest_is_still_refused(origin, remote, tmp_path, forge):
    """Checksums only prove the bytes are the manifest's: a writer of the bucket can publish consistent but
    wrong vectors. Non-unit (or zero) vectors would top or break every dense ranking; they are refused."""
    import hashlib

    import numpy as np

    local = team_clone(origin, remote, tmp_path)
    add_notes(origin, 0)
    publish(origin, remote)
    key = next(k for k in remote.keys() if k.endswith("manifest.json"))
    manifest = json.loads(remote.get(key))
    for entry in [o for o in manifest["objects"] if o["kind"] == "embeddings"]:
        data = remote.get(entry["key"])
        end = data.index(b"\n", len(segments.MAGIC))
        rows, dim = entry["rows"], entry["dim"]
        digests = bytearray(data[end + 1:end + 1 + 32 * rows])
        vectors = np.frombuffer(data, "<f4", offset=end + 1 + 32 * rows).reshape(rows, dim).copy()
        if forge == "scaled":
            vectors *= 1e30
        elif forge == "zero":
            vectors[:] = 0
        else:
            digests[32:64] = digests[0:32]
        forged = data[:end + 1] + bytes(digests) + vectors.astype("<f4").tobytes()
        sha = hashlib.sha256(forged).hexdigest()
        entry.update(name=f"embeddings/{sha}", sha256=sha, size=len(forged),
                     key=entry["key"].rsplit("/", 1)[0] + f"/{sha}.vsemb")
        remote.put(entry["key"], forged)
    remote.put(key, json.dumps(manifest).encode())
    pull_origin(local)
    EMBEDDED.clear()
    res = run_cli(["sync"], local.root)
    assert res.code == 0, res.err
    assert "team embedding cache not read" in res.out + res.err and len(EMBEDDED) >= BATCH
    synced = index_state(local.root)
    assert run_cli(["index", "--rebuild", "--quiet"], local.root).code == 0
    assert_same_index(synced, index_state(local.root))

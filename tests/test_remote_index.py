"""The team index on object storage (ADR-0071): ``vaultsync publish`` on one clone, ``vaultsync pull`` on
another, against a real S3-compatible server (moto's standalone server on 127.0.0.1, started by this
module), with real git, SQLite and LanceDB. The embedder is a deterministic hashing stand-in that records
what it embeds, so that the tests need no model and can tell what a sync re-embedded.
"""

from __future__ import annotations

import hashlib
import json
import socket
import sqlite3
import uuid
from pathlib import Path

import pytest
from conftest import HashEmbedder, Vault, assert_same_index, git, hash_embedders, index_state, run_cli

CONFIG = 'vault: docs\nindex:\n  embedders: [multilingual-e5-small]\nephemeral: ["**/scratch/**"]\n'
EMBEDDED: list[str] = []  # every text a HashEmbedder embedded


@pytest.fixture(autouse=True)
def hashed_models(monkeypatch):  # type: ignore[no-untyped-def]
    hash_embedders(monkeypatch, lambda name: HashEmbedder(name, EMBEDDED))
    EMBEDDED.clear()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint():  # type: ignore[no-untyped-def]
    """A moto S3 server on a free loopback port for this module."""
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


class Remote:
    def __init__(self, endpoint: str) -> None:
        import boto3

        self.bucket = f"team-{uuid.uuid4().hex[:12]}"
        self.url = f"s3://{self.bucket}/vault"
        self.client = boto3.client("s3", endpoint_url=endpoint)
        self.client.create_bucket(Bucket=self.bucket)

    def keys(self) -> list[str]:
        return [o["Key"] for o in self.client.list_objects_v2(Bucket=self.bucket).get("Contents", [])]

    def get(self, key: str) -> bytes:
        return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()  # type: ignore[no-any-return]

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=key, Body=data)

    def snapshot_key(self, commit: str, name: str) -> str:
        (key,) = [k for k in self.keys() if k.endswith(f"/{commit}/{name}")]
        return key


@pytest.fixture
def remote(s3_endpoint, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    """A fresh bucket; the AWS environment points at the moto server with test credentials only."""
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_ENDPOINT_URL", s3_endpoint),
                        ("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config")),
                        ("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))):
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "VAULTSYNC_REMOTE"):
        monkeypatch.delenv(name, raising=False)
    return Remote(s3_endpoint)


@pytest.fixture
def origin(vault: Vault) -> Vault:
    """Three linked notes, committed (what CI publishes)."""
    vault.write(".vaultsync.yaml", CONFIG)
    vault.write("docs/a.md", "# Alpha\nAlpha note about queues, see [[b]].\n")
    vault.write("docs/b.md", "# Beta\nBeta note about retries.\n")
    vault.write("docs/c.md", "# Gamma\nGamma note about deploys, see [[a]].\n")
    vault.commit("init")
    return vault


def clone(origin: Vault, tmp_path: Path, name: str = "clone") -> Vault:
    git(tmp_path, "clone", "-q", str(origin.root), name)
    return Vault(tmp_path / name)


def head(v: Vault) -> str:
    return v.git("rev-parse", "HEAD").stdout.strip()


def publish(v: Vault, remote: Remote) -> None:
    res = run_cli(["publish", "--remote", remote.url], v.root)
    assert res.code == 0 and "published snapshot" in res.out, res.err


def meta(v: Vault) -> dict[str, str]:
    db = sqlite3.connect(v.root / ".git/vaultsync/index.sqlite")
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def sha_of_index(v: Vault) -> str:
    return hashlib.sha256((v.root / ".git/vaultsync/index.sqlite").read_bytes()).hexdigest()


def test_pull_into_a_fresh_clone_equals_a_rebuild_there(origin, remote, tmp_path):
    publish(origin, remote)
    keys = remote.keys()
    assert any(k.endswith(f"{head(origin)}/manifest.json") for k in keys) and any("/embeddings/" in k for k in keys)
    manifest = json.loads(remote.get(remote.snapshot_key(head(origin), "manifest.json")))
    assert manifest["commit"] == head(origin) and manifest["vaultsync_version"]
    assert {o["name"] for o in manifest["objects"]} >= {"index.sqlite"}
    assert all(len(o["sha256"]) == 64 and o["size"] > 0 for o in manifest["objects"])

    local = clone(origin, tmp_path)
    EMBEDDED.clear()
    res = run_cli(["pull", "--remote", remote.url], local.root)
    assert res.code == 0, res.err
    assert "pulled snapshot" in res.out and "HEAD itself" in res.out
    assert EMBEDDED == []  # nothing embedded: the snapshot is HEAD's
    assert meta(local)["indexed_commit"] == head(local) and meta(local)["lance_tree"] == meta(local)["indexed_tree"]
    pulled = index_state(local.root)

    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.embedding_cache import EmbeddingCache

    hashes = [h for (h,) in sqlite3.connect(layout_for(open_repo(local.root)).sqlite).execute(
        "SELECT DISTINCT hash FROM vectors")]
    cached = EmbeddingCache(layout_for(open_repo(local.root)).embeddings, 16).get("hash-multilingual-e5-small", hashes)
    assert sorted(cached) == sorted(hashes)  # the published cache entries were merged

    assert run_cli(["index", "--rebuild", "--quiet"], local.root).code == 0
    assert_same_index(pulled, index_state(local.root))


def test_nearest_published_ancestor_then_only_the_delta_is_embedded(origin, remote, tmp_path):
    publish(origin, remote)  # c1
    origin.write("docs/b.md", "# Beta\nBeta note about retries with jitter.\n")
    origin.commit("c2")
    publish(origin, remote)  # c2: the nearest
    c2 = head(origin)
    origin.write("docs/c.md", "# Gamma\nGamma note about deploys on Tuesdays, see [[a]].\n")
    origin.commit("c3")  # not published

    local = clone(origin, tmp_path)
    EMBEDDED.clear()
    res = run_cli(["pull", "--remote", remote.url], local.root)
    assert res.code == 0, res.err
    assert f"pulled snapshot {c2[:12]} (1 commits behind HEAD" in res.out
    assert meta(local)["pulled_from"] == c2 and meta(local)["indexed_commit"] == head(local)
    assert len(EMBEDDED) == 1 and "Tuesdays" in EMBEDDED[0]  # only the changed note's chunk (its name is unchanged)

    local.write("docs/a.md", "# Alpha\nAlpha note about durable queues, see [[b]].\n")
    local.commit("local")
    EMBEDDED.clear()
    assert run_cli(["sync", "--quiet"], local.root).code == 0
    assert len(EMBEDDED) == 1 and "durable" in EMBEDDED[0]
    synced = index_state(local.root)
    assert run_cli(["index", "--rebuild", "--quiet"], local.root).code == 0
    assert_same_index(synced, index_state(local.root))

    runner = clone(origin, tmp_path, "ci")  # CI without an index starts from c2's snapshot too
    EMBEDDED.clear()
    res = run_cli(["publish", "--remote", remote.url], runner.root)
    assert res.code == 0 and f"index started from snapshot {c2[:12]}" in res.out, res.err
    assert len(EMBEDDED) == 1 and "Tuesdays" in EMBEDDED[0]


def test_a_tampered_object_is_refused_and_the_local_index_untouched(origin, remote, tmp_path):
    publish(origin, remote)
    local = clone(origin, tmp_path)
    assert run_cli(["sync", "--quiet"], local.root).code == 0
    built = index_state(local.root)
    kept = run_cli(["pull", "--remote", remote.url], local.root)  # the local index is HEAD's already
    assert kept.code == 0 and kept.out.startswith(f"kept the local index: it holds {head(local)[:12]} (HEAD itself")
    assert "pulled_from" not in meta(local)
    assert run_cli(["pull", "--remote", remote.url, "--quiet", "--force"], local.root).code == 0  # over a healthy index
    assert meta(local)["pulled_from"] == head(local)
    assert_same_index(built, index_state(local.root))
    before = sha_of_index(local)
    key = remote.snapshot_key(head(origin), "index.sqlite")
    data = bytearray(remote.get(key))
    data[len(data) // 2] ^= 0xFF
    remote.put(key, bytes(data))

    res = run_cli(["pull", "--remote", remote.url, "--force"], local.root)
    assert (res.code, res.err) == (1, f"vaultsync pull: snapshot {head(local)[:12]} refused: checksum mismatch for "
                                      "index.sqlite\n")
    assert sha_of_index(local) == before
    assert not [p for p in (local.root / ".git/vaultsync").iterdir() if p.name.startswith("pull-")]


def test_a_wrong_fingerprint_is_refused_and_the_local_index_untouched(origin, remote, tmp_path):
    publish(origin, remote)
    local = clone(origin, tmp_path)
    assert run_cli(["sync", "--quiet"], local.root).code == 0
    before = sha_of_index(local)
    commit = head(origin)
    # someone with write access replaces the index by one of another chunk size, checksums and all
    forged = tmp_path / "forged.sqlite"
    forged.write_bytes(remote.get(remote.snapshot_key(commit, "index.sqlite")))
    db = sqlite3.connect(forged)
    db.execute("UPDATE meta SET value = '64' WHERE key = 'chunk_tokens'")
    db.commit()
    db.close()
    manifest_key = remote.snapshot_key(commit, "manifest.json")
    manifest = json.loads(remote.get(manifest_key))
    entry = next(o for o in manifest["objects"] if o["name"] == "index.sqlite")
    entry["sha256"], entry["size"] = hashlib.sha256(forged.read_bytes()).hexdigest(), forged.stat().st_size
    remote.put(remote.snapshot_key(commit, "index.sqlite"), forged.read_bytes())
    remote.put(manifest_key, json.dumps(manifest).encode())

    res = run_cli(["pull", "--remote", remote.url, "--force"], local.root)
    assert res.code == 1 and res.err.startswith(f"vaultsync pull: snapshot {commit[:12]} refused: fingerprint mismatch")
    assert res.err.count("\n") == 1 and sha_of_index(local) == before

    manifest["fingerprint"] = "0" * 16
    remote.put(manifest_key, json.dumps(manifest).encode())
    res = run_cli(["pull", "--remote", remote.url, "--force"], local.root)
    assert res.err == f"vaultsync pull: snapshot {commit[:12]} refused: fingerprint mismatch in manifest.json\n"
    assert sha_of_index(local) == before


def test_missing_or_unreachable_remotes_are_one_line_errors(origin, remote):
    for command in ("pull", "publish"):
        res = run_cli([command], origin.root)
        assert res.code == 1 and res.err.startswith(f"vaultsync {command}: no remote configured: pass --remote")
    res = run_cli(["pull", "--remote", "http://example.com/x"], origin.root)
    assert (res.code, res.err) == (1, "vaultsync pull: --remote: 'http://example.com/x' is not an "
                                      "s3://bucket/prefix location\n")
    res = run_cli(["pull", "--remote", remote.url], origin.root)  # an empty bucket
    assert res.code == 1 and res.err.startswith("vaultsync pull: no published snapshot of this index")
    res = run_cli(["pull", "--remote", "s3://no-such-bucket-here/x"], origin.root)
    assert res.code == 1 and "bucket no-such-bucket-here does not exist" in res.err
    for bad in ("not a url", "::bad"):  # a malformed endpoint is one line too
        res = run_cli(["pull", "--remote", remote.url, "--endpoint-url", bad], origin.root)
        assert res.code == 1 and res.err.startswith("vaultsync pull: cannot use s3://") and res.err.count("\n") == 1
    publish(origin, remote)
    key = remote.snapshot_key(head(origin), "manifest.json")
    for garbage in (b"[" * 100000 + b"]" * 100000, json.dumps({"format": 1, "objects": [{"size": True}]}).encode()):
        remote.put(key, garbage)
        res = run_cli(["pull", "--remote", remote.url, "--force"], origin.root)
        assert res.code == 1 and "refused" in res.err and res.err.count("\n") == 1, res.err
    closed = f"http://127.0.0.1:{_free_port()}"
    for command in ("pull", "publish"):
        res = run_cli([command, "--remote", remote.url, "--endpoint-url", closed], origin.root)
        assert res.code == 1 and res.err.startswith(f"vaultsync {command}: cannot reach s3://"), res.err
        assert res.err.count("\n") == 1 and "Traceback" not in res.err


def test_sync_without_an_index_starts_from_the_snapshot_or_builds_locally(origin, remote, tmp_path, monkeypatch):
    publish(origin, remote)
    monkeypatch.setenv("VAULTSYNC_REMOTE", remote.url)
    local = clone(origin, tmp_path)
    EMBEDDED.clear()
    res = run_cli(["sync"], local.root)
    assert res.code == 0 and "pulled snapshot" in res.err, res.err
    assert EMBEDDED == [] and meta(local)["indexed_commit"] == head(local)

    monkeypatch.delenv("VAULTSYNC_REMOTE")
    local.git("config", "vaultsync.remote", remote.url)  # the user's own setting, read the same way
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_free_port()}")
    other = clone(origin, tmp_path, "other")
    other.git("config", "vaultsync.remote", remote.url)
    res = run_cli(["sync", "--hook", "post-commit", "--quiet"], other.root)
    assert res.code == 0 and "warning: team index not used (cannot reach" in res.err, res.err
    assert EMBEDDED and meta(other)["indexed_commit"] == head(other)  # built locally


def test_only_committed_non_ephemeral_content_is_published(origin, remote, monkeypatch):
    origin.write("docs/scratch/secret.md", "# Scratch\nzqxscratch is not for the team.\n")
    origin.commit("scratch", "--no-verify")
    origin.write("docs/wip.md", "# WIP\nzqxwip is not committed.\n")
    publish(origin, remote)
    data = remote.get(remote.snapshot_key(head(origin), "index.sqlite"))
    assert b"zqxscratch" not in data and b"zqxwip" not in data and b"scratch/" not in data

    from vaultsync.index.sync import SyncReport

    origin.commit("wip")  # HEAD moves on, and the sync is kept from following it
    monkeypatch.setattr("vaultsync.index.publish.sync", lambda repo, **kw: SyncReport("up-to-date"))
    res = run_cli(["publish", "--remote", remote.url], origin.root)
    assert res.code == 1 and f"does not reflect HEAD {head(origin)[:12]}" in res.err, res.err
    assert not [k for k in remote.keys() if head(origin) in k]


def test_the_publish_workflow_is_in_the_readme_and_its_step_parses():
    import shlex

    import yaml
    from conftest import REPO_ROOT

    workflow = REPO_ROOT / "examples" / "publish-index-workflow.yml"
    body = workflow.read_text(encoding="utf-8").split("\n", 2)[2]  # skip the two comment lines
    assert body.strip() in (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    steps = yaml.safe_load(body)["jobs"]["publish"]["steps"]
    (step,) = [shlex.split(s["run"]) for s in steps if s.get("run", "").startswith("vaultsync ")]
    from vaultsync.cli.main import build_parser

    args = build_parser("publish").parse_args(step[1:])
    assert args.command == "publish" and args.remote.startswith("s3://")


def test_without_boto3_the_command_names_the_extra(origin, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "boto3", None)  # import boto3 now fails as if not installed
    res = run_cli(["pull", "--remote", "s3://team-bucket/vault"], origin.root)
    assert res.code == 2 and "needs the 'remote' extra" in res.err and "[remote]'" in res.err and "pip install '" in res.err


def test_a_body_cut_short_is_a_dropped_connection_not_a_bad_manifest(monkeypatch):
    """A server that announces more bytes than it sends (a dropped connection) is a remote error."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from vaultsync.index.remote import ObjectStore, RemoteError, parse_location

    class Short(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            self.send_response(200)
            self.send_header("Content-Length", "5000")
            self.end_headers()
            self.wfile.write(b'{"format": 1, ')
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Short)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    try:
        store = ObjectStore(parse_location("s3://bucket/p", "--remote"), f"http://127.0.0.1:{server.server_port}")
        with pytest.raises(RemoteError) as caught:
            store.get_bytes("p/manifest.json", 1 << 20)
        assert "\n" not in str(caught.value) and "manifest.json" in str(caught.value)
    finally:
        server.shutdown()
        server.server_close()

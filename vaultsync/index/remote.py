"""The team index's object store: where it is, the key layout, the manifest, and an S3 client (ADR-0071).

Layout under ``s3://BUCKET/PREFIX/``::

    snapshots/<fingerprint>/<commit>/index.sqlite    the SQLite index of that commit
    snapshots/<fingerprint>/<commit>/manifest.json   written last: a snapshot exists once it does
    embeddings/<sha256>.vsemb                        embedding-cache segments, content-addressed

A reader computes every key itself (from the fingerprint, the commit and each object's sha256), never
from the manifest, and checks each object against the manifest's sha256 and size. The client is boto3
(credentials from the standard AWS chain, endpoint from ``--endpoint-url`` or ``AWS_ENDPOINT_URL``); a
reader only issues GET, HEAD and LIST. Every failure is a :class:`RemoteError` with one line to print.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pygit2

    from vaultsync.vault.config import Config

MANIFEST_FORMAT = 1
MANIFEST_MAX_BYTES = 1 << 20
SQLITE_NAME = "index.sqlite"
_URL = re.compile(r"^s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:/(\S*))?$")
_HEX = re.compile(r"^[0-9a-f]+$")


class RemoteError(Exception):
    """The object store could not be used; ``str(exc)`` is one line naming what and why."""


@dataclass(frozen=True)
class RemoteLocation:
    """``s3://bucket/prefix``, and where the setting came from (``--remote``, ``VAULTSYNC_REMOTE``,
    ``git config vaultsync.remote``, ``.vaultsync.yaml index.remote``)."""

    bucket: str
    prefix: str  # without leading or trailing "/"; "" for the bucket root
    source: str = "--remote"

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, *parts: str) -> str:
        """The object key of ``parts`` under the prefix (``key("snapshots", fp, "")`` ends with ``/``)."""
        return "/".join([self.prefix, *parts] if self.prefix else parts)

    def snapshot_key(self, fingerprint: str, commit: str, name: str) -> str:
        return self.key("snapshots", fingerprint, commit, name)

    def segment_key(self, sha256: str) -> str:
        return self.key("embeddings", f"{sha256}.vsemb")


def parse_location(url: str, source: str = "--remote") -> RemoteLocation:
    """``s3://bucket[/prefix]`` → :class:`RemoteLocation`.

    Raises:
        RemoteError: not an ``s3://`` URL with a valid bucket name.
    """
    m = _URL.match(url.strip())
    if not m or ".." in (m.group(2) or "").split("/"):
        raise RemoteError(f"{source}: {url!r} is not an s3://bucket/prefix location")
    return RemoteLocation(m.group(1), (m.group(2) or "").strip("/"), source)


def resolve_location(repo: pygit2.Repository | None, config: Config | None,
                     cli_value: str | None = None) -> RemoteLocation | None:
    """The configured remote, first found of: ``--remote``, ``$VAULTSYNC_REMOTE``, ``git config
    vaultsync.remote``, ``index.remote`` of the committed config. None when none is set.

    The committed config may name the location (it is reviewed like any commit); what is downloaded
    from it is untrusted data and verified before use (ADR-0071).

    Raises:
        RemoteError: a setting that is not an ``s3://`` location.
    """
    from vaultsync.git import config_value

    candidates = [(cli_value, "--remote"), (os.environ.get("VAULTSYNC_REMOTE"), "VAULTSYNC_REMOTE"),
                  (config_value(repo, "vaultsync.remote") if repo is not None else None,
                   "git config vaultsync.remote"),
                  ((config.index.get("remote") if config is not None else None), ".vaultsync.yaml index.remote")]
    for value, source in candidates:
        if value:
            return parse_location(str(value), source)
    return None


@dataclass(frozen=True)
class ObjectEntry:
    """One object of a snapshot: its name (``index.sqlite``, ``embeddings/<sha256>``), sha256 (hex) and size
    (bytes); embedding segments also carry their ``model`` id, ``dim``, ``rows`` and bucket ``prefix`` (the
    hex digits every hash in it starts with; absent in manifests written before it was recorded)."""

    name: str
    kind: str  # "sqlite" or "embeddings"
    sha256: str
    size: int
    key: str = ""
    model: str | None = None
    dim: int | None = None
    rows: int | None = None
    prefix: str | None = None


@dataclass
class Manifest:
    """``manifest.json`` of one snapshot (JSON object, these fields; ``created`` is RFC 3339 UTC)."""

    commit: str
    tree: str
    fingerprint: str
    fingerprint_parts: dict[str, Any]
    vaultsync_version: str
    created: str
    objects: list[ObjectEntry] = field(default_factory=list)
    format: int = MANIFEST_FORMAT

    def to_json(self) -> bytes:
        data = asdict(self)
        data["objects"] = [{k: v for k, v in asdict(o).items() if v is not None} for o in self.objects]
        return json.dumps(data, indent=2, sort_keys=True).encode("utf-8")

    def object(self, name: str) -> ObjectEntry | None:
        return next((o for o in self.objects if o.name == name), None)


def _count(value: object) -> bool:
    """A non-negative int (JSON ``true`` is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def parse_manifest(data: bytes) -> Manifest:
    """A manifest from untrusted bytes, every field type-checked.

    Raises:
        ValueError: not a manifest of this format (the message names the field).
    """
    try:
        doc = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("manifest nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"not a format-{MANIFEST_FORMAT} manifest")
    for name in ("commit", "tree", "fingerprint", "vaultsync_version", "created"):
        if not isinstance(doc.get(name), str):
            raise ValueError(f"manifest field {name} is missing or not a string")
    if not isinstance(doc.get("fingerprint_parts"), dict) or not isinstance(doc.get("objects"), list):
        raise ValueError("manifest fields fingerprint_parts/objects are malformed")
    objects = []
    for raw in doc["objects"]:
        ok = (isinstance(raw, dict) and isinstance(raw.get("name"), str) and raw.get("kind") in ("sqlite", "embeddings")
              and isinstance(raw.get("sha256"), str) and len(raw["sha256"]) == 64 and _HEX.match(raw["sha256"])
              and _count(raw.get("size")))
        if ok and raw["kind"] == "embeddings":
            prefix = raw.get("prefix", "")
            ok = (isinstance(raw.get("model"), str) and _count(raw.get("dim")) and raw["dim"] > 0
                  and _count(raw.get("rows")) and isinstance(prefix, str) and len(prefix) <= 4
                  and (not prefix or bool(_HEX.match(prefix))))
        if not ok:
            raise ValueError(f"manifest object entry is malformed: {str(raw)[:80]}")
        objects.append(ObjectEntry(raw["name"], raw["kind"], raw["sha256"], raw["size"], str(raw.get("key", "")),
                                   raw.get("model"), raw.get("dim"), raw.get("rows"), raw.get("prefix")))
    return Manifest(doc["commit"], doc["tree"], doc["fingerprint"], doc["fingerprint_parts"],
                    doc["vaultsync_version"], doc["created"], objects)


def file_sha256(path: Path) -> tuple[str, int]:
    """(sha256 hex, size in bytes) of the file at ``path``."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


class ObjectStore:
    """A bucket and prefix on S3 or an S3-compatible server, through boto3.

    Args:
        location: where.
        endpoint_url: e.g. ``http://127.0.0.1:9000``; None: boto3's own (``AWS_ENDPOINT_URL`` honoured).
    Raises:
        ModuleNotFoundError: boto3 is not installed (the ``remote`` extra).
    """

    def __init__(self, location: RemoteLocation, endpoint_url: str | None = None) -> None:
        import boto3
        from botocore.config import Config as BotoConfig
        from botocore.exceptions import BotoCoreError

        self.location = location
        self.endpoint = endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        try:
            self._client = boto3.session.Session().client(
                "s3", endpoint_url=endpoint_url or None,
                config=BotoConfig(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=5, read_timeout=60))
        except (ValueError, BotoCoreError) as exc:  # a malformed endpoint URL or region
            raise RemoteError(f"cannot use {location.url}: {exc}") from None

    def _error(self, exc: Exception, what: str) -> RemoteError:
        from botocore.exceptions import ClientError, HTTPClientError, NoCredentialsError
        from botocore.exceptions import ConnectionError as BotoConnectionError

        where = f"{self.location.url}" + (f" at {self.endpoint}" if self.endpoint else "")
        if isinstance(exc, NoCredentialsError):
            return RemoteError(f"no AWS credentials for {where} (the standard AWS chain: AWS_ACCESS_KEY_ID and "
                               "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws, or an instance role)")
        if isinstance(exc, (BotoConnectionError, HTTPClientError)):  # refused, timed out, connection dropped
            return RemoteError(f"cannot reach {where}: {exc}")
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code == "NoSuchBucket":
                return RemoteError(f"bucket {self.location.bucket} does not exist ({where})")
            if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
                return RemoteError(f"access denied to {where} while {what} ({code}; reading needs s3:GetObject "
                                   "and s3:ListBucket, publishing also s3:PutObject)")
            return RemoteError(f"{what} failed on {where}: {code or exc}")
        return RemoteError(f"{what} failed on {where}: {type(exc).__name__}: {exc}")

    def _call(self, what: str, fn: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn(Bucket=self.location.bucket, **kwargs)
        except (BotoCoreError, ClientError) as exc:
            raise self._error(exc, what) from None

    def list_names(self, prefix: str) -> list[str]:
        """The names right under ``prefix`` (a key ending in ``/``): sub-folders without their ``/``. LIST only."""
        names: list[str] = []
        token: str | None = None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = self._call("listing snapshots", self._client.list_objects_v2, Prefix=prefix, Delimiter="/",
                              **extra)
            names += [p["Prefix"][len(prefix):].rstrip("/") for p in page.get("CommonPrefixes", [])]
            names += [o["Key"][len(prefix):] for o in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                return names
            token = page.get("NextContinuationToken")

    def get_bytes(self, key: str, max_bytes: int) -> bytes | None:
        """The object's bytes (None when it does not exist); RemoteError past ``max_bytes``. GET only."""
        from botocore.exceptions import ClientError

        try:
            answer = self._client.get_object(Bucket=self.location.bucket, Key=key)
            data = answer["Body"].read(max_bytes + 1)
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("NoSuchKey", "404"):
                return None
            raise self._error(exc, f"reading {key}") from None
        except Exception as exc:  # noqa: BLE001 - botocore's connection errors
            raise self._error(exc, f"reading {key}") from None
        if len(data) > max_bytes:
            raise RemoteError(f"{key} is larger than {max_bytes} bytes")
        expected = answer.get("ContentLength")
        if isinstance(expected, int) and len(data) < expected:  # a read of a given size does not check it
            raise RemoteError(f"cannot read {key} from {self.location.url}: the connection dropped after "
                              f"{len(data)} of {expected} bytes")
        return data  # type: ignore[no-any-return]

    def download(self, key: str, dest: Path, size: int) -> str:
        """Stream ``key`` into ``dest``, reading at most ``size`` + 1 bytes; returns the sha256 (hex) of what
        was read (a caller compares it and the size with the manifest). GET only."""
        digest = hashlib.sha256()
        try:
            body = self._client.get_object(Bucket=self.location.bucket, Key=key)["Body"]
            with open(dest, "wb") as out:
                left = size + 1
                for block in _blocks(body, left):
                    digest.update(block)
                    out.write(block)
        except Exception as exc:  # noqa: BLE001 - botocore's and urllib3's errors, a full disk
            raise self._error(exc, f"reading {key}") from None
        return digest.hexdigest()

    def exists(self, key: str) -> bool:
        """True when ``key`` exists (HEAD)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._client.head_object(Bucket=self.location.bucket, Key=key)
            return True
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("NoSuchKey", "404", "NotFound"):
                return False
            raise self._error(exc, f"checking {key}") from None
        except BotoCoreError as exc:
            raise self._error(exc, f"checking {key}") from None

    def upload(self, key: str, path: Path, content_type: str = "application/octet-stream") -> None:
        """Upload the file at ``path`` as ``key`` (multipart when large). Publishing only."""
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._client.upload_file(str(path), self.location.bucket, key, ExtraArgs={"ContentType": content_type})
        except (BotoCoreError, ClientError) as exc:
            raise self._error(exc, f"uploading {key}") from None
        except S3UploadFailedError as exc:
            raise RemoteError(f"uploading {key} to {self.location.url} failed: {exc}") from None

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/json") -> None:
        """Write ``data`` as ``key`` in one PUT. Publishing only."""
        self._call(f"uploading {key}", self._client.put_object, Key=key, Body=data, ContentType=content_type)


def _blocks(body: Any, limit: int) -> Iterator[bytes]:
    while limit > 0:
        block = body.read(min(1 << 20, limit))
        if not block:
            return
        limit -= len(block)
        yield block

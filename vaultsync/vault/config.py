"""The repository's own configuration file, ``.vaultsync.yaml``.

It names the vault folders, maps memory types to folders and schemas, holds the
controlled vocabulary, the ephemeral (scratch) globs, check severities and
search/index settings. It is validated against ``schemas/config.schema.json``;
without a file, the whole repository is the vault and no type schemas apply.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from vaultsync.diagnostics import Diagnostic, shown
from vaultsync.resources import data_dir, model_names
from vaultsync.vault.glob import compile_glob
from vaultsync.vault.schema_words import branch_errors, dotted, expected_shape, section_of, yaml_shape
from vaultsync.vault.yamlload import YamlProblem, load_yaml

CONFIG_NAME = ".vaultsync.yaml"
PRIMARY = "multilingual-e5-small"  # the embedder relevance is calibrated on (search/relevance.py)


class ConfigError(Exception):
    """The config file is invalid; ``diagnostics`` say where and why (every problem found, in file
    order; a YAML error stops at itself), ``diagnostic`` is the first."""

    def __init__(self, diagnostics: Diagnostic | list[Diagnostic]) -> None:
        found = [diagnostics] if isinstance(diagnostics, Diagnostic) else \
            sorted(diagnostics, key=lambda d: (d.line, d.col))
        super().__init__("\n".join(d.render() for d in found))
        self.diagnostics = found
        self.diagnostic = found[0]


@dataclass(frozen=True)
class TypeSpec:
    """One memory type: notes under ``folder`` validate against ``schema``."""

    name: str
    folder: str
    schema: str


@dataclass
class Config:
    """Parsed ``.vaultsync.yaml`` (defaults when absent)."""

    vault: list[str] = field(default_factory=lambda: ["."])
    types: list[TypeSpec] = field(default_factory=list)
    vocabulary: dict[str, list[str]] = field(default_factory=dict)
    ephemeral: list[str] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)
    index: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)
    models: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    positions: dict[tuple[Any, ...], tuple[int, int]] = field(default_factory=dict)  # key path → (line, col), 0-based
    schema_texts: dict[str, str] = field(default_factory=dict)  # repo schema files read from a snapshot
    from_snapshot: bool = False  # the schemas come from a commit or the staged index: none from the disk
    schema_problems: dict[str, str] = field(default_factory=dict)  # schema path → why the snapshot's is no file
    ignored: list[Diagnostic] = field(default_factory=list)  # refused sections left out (load_config lenient)
    refused: list[Diagnostic] = field(default_factory=list)  # the committed config, refused: these are defaults

    def in_vault(self, path: str) -> bool:
        """Whether repo-relative ``path`` lies in a vault folder and in no dot-folder below it (``.trash/``):
        Obsidian shows nothing there, and the working tree's walk, the staged index and a commit agree."""
        for root in self.vault:
            rest = path if root == "." else path[len(root) + 1:] if path == root or path.startswith(root + "/") else None
            if rest is not None and "/." not in "/" + rest[:rest.rfind("/") + 1]:  # no folder on it starts with "."
                return True
        return False

    @property
    def link_root(self) -> str:
        """The folder WikiLink paths are relative to: the vault folder, or the repository when several."""
        return self.vault[0] if len(self.vault) == 1 else "."

    def type_for(self, path: str) -> TypeSpec | None:
        """The memory type whose folder holds ``path`` (deepest folder wins), or None."""
        best: TypeSpec | None = None
        best_depth = -1
        for spec in self.types:
            depth = 0 if spec.folder == "." else len(spec.folder) + 1
            if (not depth or path.startswith(spec.folder + "/")) and depth > best_depth:
                best, best_depth = spec, depth
        return best

    def is_ephemeral(self, path: str) -> str | None:
        """The first ephemeral glob matching ``path``, or None."""
        for pattern in self.ephemeral:
            if compile_glob(pattern).match(path):
                return pattern
        return None

    def severity(self, check: str, default: str) -> str:
        """Configured severity (``error``/``warning``/``off``) of a check."""
        return str(self.checks.get(check, default))


def _norm_folder(folder: str) -> str:
    """``folder`` as a repository-relative path: ``./docs//adr/`` is ``docs/adr``, ``./`` is ``.``."""
    return posixpath.normpath(folder.strip().replace("\\", "/").strip("/") or ".")


@lru_cache(maxsize=256)
@lru_cache(maxsize=1)
def _schema_bytes() -> bytes:
    return (data_dir("schemas") / "config.schema.json").read_bytes()


@lru_cache(maxsize=1)
def _config_validator():  # type: ignore[no-untyped-def]
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(_schema_bytes()))


def _schema_errors(data: dict[str, Any], text: str) -> list[Any]:
    """The schema's errors for ``data`` (parsed from ``text``), sorted by path. A text that passed
    before, with the same schema and vaultsync version, is not validated again: an empty marker
    file in the user cache (``<cache>/checked-configs/<sha256>``) says so, because importing
    jsonschema costs ~0.1 s of every cold command (search, status, a hook's sync)."""
    import hashlib

    from vaultsync import __version__
    from vaultsync.settings import cache_root

    key = hashlib.sha256(b"\0".join((__version__.encode(), _schema_bytes(), text.encode("utf-8", "surrogatepass"))))
    try:
        marker: Path | None = cache_root() / "checked-configs" / key.hexdigest()
        if marker is not None and marker.exists():
            return []
    except (OSError, RuntimeError):  # an unusable cache (no home, no permission) only costs the validation
        marker = None
    errors = sorted(_config_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors and marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass
    return errors


USER_ONLY_KEYS = ("cache_dir", "reranker_dir")


def _refuse_load_locations(data: dict[str, Any], positions: dict[tuple[Any, ...], tuple[int, int]]) -> list[Diagnostic]:
    """CF005 where a committed config names a folder that models (code, weights) are loaded from (ADR-0032)."""
    models = data.get("models")
    out = []
    for key in USER_ONLY_KEYS:
        if isinstance(models, dict) and key in models:
            line, col = positions.get(("models", key), (0, 0))
            out.append(Diagnostic(
                CONFIG_NAME, line + 1, col + 1, "CF005",
                f"models.{key}: a repository's config cannot choose where models are loaded from (any commit "
                f"could then pick what runs on your machine); remove it and set it in your own "
                f"~/.config/vaultsync/config.yaml or ${'VAULTSYNC_' + key.upper()}"))
    return out


def _check_values(data: dict[str, Any], positions: dict[tuple[Any, ...], tuple[int, int]]) -> list[Diagnostic]:
    """What the schema cannot say: each ephemeral glob compiles and each embedder is one vaultsync knows
    (the ``search:`` section is judged by :func:`vaultsync.search.options.config_problems`). A CF002
    diagnostic at each value that fails."""
    out: list[Diagnostic] = []

    def fail(where: tuple[Any, ...], message: str) -> None:
        line, col = positions.get(where, positions.get(where[:1], (0, 0)))
        out.append(Diagnostic(CONFIG_NAME, line + 1, col + 1, "CF002", f"{dotted(where)}: {message}"))

    for i, pattern in enumerate(data.get("ephemeral") or []):
        try:
            compile_glob(pattern)
        except re.error as exc:
            fail(("ephemeral", i), f"invalid glob {pattern!r} ({exc})")
    index = data.get("index") or {}
    known: list[str] | None = None  # read from the shipped manifests once, when a name is given
    for key in ("embedder", "embedders"):
        names = [index[key]] if isinstance(index.get(key), str) else index.get(key) or []
        for i, name in enumerate(names):
            known = known if known is not None else model_names()
            where = ("index", key) if isinstance(index[key], str) else ("index", key, i)
            if name not in known:
                fail(where, f"unknown model {name!r} (known: {', '.join(known)})")
        if names and set(names) <= set(known or ()) and PRIMARY not in names:  # relevance is calibrated on e5
            fail(("index", key), f"{PRIMARY} must be one of them: relevance and its floor are calibrated on its "
                                 f"vectors (without it every hit falls below the floor) — write "
                                 f"{'embedders: ' if key == 'embedder' else ''}[{', '.join([PRIMARY, *names])}]")
    return out


SCHEMA_LINKED = "a symbolic link, or under one: vaultsync never follows one (commit the file itself)"


def read_committed_schemas(config: Config, kind: Callable[[str], str | None], read: Callable[[str], bytes]) -> None:
    """Fill ``config.schema_texts`` from a snapshot (the staged index or a commit), never from the disk, and
    ``config.schema_problems`` where the snapshot holds no readable file there.

    Args:
        kind: what the snapshot holds at a repository path: ``"file"``, ``"link"`` (a symbolic link),
            ``"folder"``, or None.
        read: a file's bytes (KeyError: its content is not here, e.g. Git LFS content not fetched).
    """
    config.from_snapshot = True
    for spec in config.types:
        stored = posixpath.normpath(spec.schema)  # `./schemas/x.json` is `schemas/x.json` in git
        parts = stored.split("/")
        found = "link" if any(kind("/".join(parts[:n])) == "link" for n in range(1, len(parts))) else kind(stored)
        if found == "file":
            try:
                config.schema_texts[spec.schema] = read(stored).decode("utf-8", errors="replace")
            except KeyError as exc:
                config.schema_problems[spec.schema] = f"not readable here: {exc}"
        elif found in ("link", "folder"):
            config.schema_problems[spec.schema] = SCHEMA_LINKED if found == "link" else "a folder, not a file"


def config_is_a_folder(kind: str = "a folder") -> ConfigError:
    """CF001 for a ``.vaultsync.yaml`` that is ``kind`` (a folder, a submodule), not a file: the same
    error for the check and for the index."""
    return ConfigError(Diagnostic(CONFIG_NAME, 1, 1, "CF001", f"cannot read config: {CONFIG_NAME} is {kind}, "
                                  "not a file"))


def misnamed_config(names: Iterable[str]) -> ConfigError | None:
    """CF001 when the top folder's ``names`` hold a config under a near name (``.vaultsync.yml``,
    ``vaultsync.yaml``, ``.VaultSync.yaml``) and not :data:`CONFIG_NAME`: its settings would silently
    not apply, and every check would pass without the team's schemas."""
    names = sorted(names)
    if CONFIG_NAME in names:
        return None
    for name in names:
        if name.casefold().lstrip(".") in ("vaultsync.yaml", "vaultsync.yml"):
            return ConfigError(Diagnostic(name, 1, 1, "CF001", f"vaultsync reads its settings from {CONFIG_NAME} "
                                                               f"only, so none of these apply — rename it to {CONFIG_NAME}"))
    return None


# sections no index is built from: search settings, the check's severities and time zone, review ages
INDEX_FREE_SECTIONS = ("search", "checks", "review")


def load_config(root: Path, text: str | None = None, lenient: bool = False) -> Config:
    """Load and validate ``<root>/.vaultsync.yaml``.

    Args:
        root: repository root.
        text: the file's content if already read (e.g. from the git index).
        lenient: sections of :data:`INDEX_FREE_SECTIONS` the schema refuses, where nothing else is wrong,
            are left out (their diagnostics in ``Config.ignored``) instead of raised: they shape no index, so
            a sync builds one and search runs with their defaults (``vaultsync check`` still refuses them;
            the values only the search options judge are left out by :func:`vaultsync.engine.options_for`).
    Raises:
        ConfigError: YAML or schema error, located in the config file.
    """
    path = root / CONFIG_NAME
    if text is None:
        if path.is_symlink():  # never followed: it may lead out of the repository
            raise config_is_a_folder("a symbolic link")
        if path.is_dir():
            raise config_is_a_folder()
        if not path.is_file():
            try:
                problem = misnamed_config(p.name for p in root.iterdir())
            except OSError:
                problem = None
            if problem is not None:
                raise problem
            return Config()
        try:
            text = path.read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(Diagnostic(CONFIG_NAME, 1, 1, "CF001", f"cannot read config: {exc}")) from None
    try:
        doc = load_yaml(text)
    except YamlProblem as exc:
        raise ConfigError([Diagnostic(CONFIG_NAME, p.line + 1, p.col + 1, p.code, p.render(0))
                           for p in (exc, *exc.also)]) from None
    data = doc.data if doc.data is not None else {}
    if not isinstance(data, dict):
        raise ConfigError(Diagnostic(CONFIG_NAME, 1, 1, "CF001", "config must be a YAML mapping"))
    refused = _refuse_load_locations(data, doc.positions)  # reported with the rest, stops nothing
    problems: list[Diagnostic] = []
    seen: set[tuple[Any, ...]] = set()
    # one per value (a wrong type also fails its enum); an anyOf as the errors of the branch the value meant
    for err in (e for top in _schema_errors(data, text) for e in branch_errors(top)):
        where = tuple(err.absolute_path)
        if where in seen:
            continue
        seen.add(where)
        line, col = doc.positions.get(where, (0, 0))
        field_name = dotted(where) or "(top level)"
        message = err.message
        if err.validator in ("type", "anyOf", "oneOf"):  # say it in YAML's words, not Python's reprs
            message = f"expected {expected_shape(err.schema)}, got {yaml_shape(err.instance)}"
        elif err.validator in ("minLength", "minItems") and err.validator_value == 1:
            message = "should not be empty"
        elif err.validator in ("minimum", "maximum"):
            side = "least" if err.validator == "minimum" else "most"
            message = f"{yaml_shape(err.instance)} must be at {side} {err.validator_value}"
        elif err.validator == "enum":  # `one of: none, maxsim`, not Python's list
            options = [yaml_shape(o) if not isinstance(o, str) else o for o in err.validator_value]
            close = difflib.get_close_matches(err.instance, options, 1, 0.6) if isinstance(err.instance, str) else []
            message = f"{yaml_shape(err.instance)} is not one of: {', '.join(options)}" + (
                f" — did you mean '{close[0]}'?" if close else "")
        extra: list[Any] = []
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            known = list(err.schema.get("properties", {}))
            extra = [k for k in err.instance if k not in known]
            for key in extra:  # each unknown key at its own place, with the key it likely means
                if where == ("models",) and key in USER_ONLY_KEYS:
                    continue  # CF005 says why it cannot be here
                k_line, k_col = doc.key_positions.get(where + (key,), (line, col))
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                said = f"unknown key '{key}'" + (f" — did you mean '{close[0]}'?" if close else
                                                 f" (known: {', '.join(known)})")
                problems.append(Diagnostic(CONFIG_NAME, k_line + 1, k_col + 1, "CF002", f"{field_name}: {said}"))
        if not err.validator == "additionalProperties":
            problems.append(Diagnostic(CONFIG_NAME, line + 1, col + 1, "CF002", f"{field_name}: {message}"))
    ignored: list[Diagnostic] = []
    if problems and lenient and all(section_of(d) in INDEX_FREE_SECTIONS for d in problems):
        data, ignored, problems = {k: v for k, v in data.items() if k not in map(section_of, problems)}, problems, []
    if problems:  # the rest reads values the schema has vouched for
        raise ConfigError(refused + problems)
    problems = refused
    raw_roots = [vault] if isinstance(vault := data.get("vault", "."), str) else list(vault)
    # every path a committed config names stays inside the repository: folders and schema files alike
    for where, folder in [(("vault",), r) for r in raw_roots] + [
            (("types", name, key), spec[key]) for name, spec in (data.get("types") or {}).items()
            for key in ("folder", "schema") if key in spec]:
        line, col = doc.positions.get(where, (0, 0))
        if folder.strip().startswith(("/", "~")) or _norm_folder(folder).split("/")[0] == "..":  # docs/.. is inside
            problems.append(Diagnostic(CONFIG_NAME, line + 1, col + 1, "CF002",
                                       f"{dotted(where)}: '{folder}' is outside the repository"))
        elif any(ch < " " or ch == "\x7f" for ch in folder):  # a NUL byte, a line break: no folder git can hold
            problems.append(Diagnostic(CONFIG_NAME, line + 1, col + 1, "CF002",
                                       f"{dotted(where)}: {shown(folder)} holds a control character"))
    problems += _check_values(data, doc.positions)
    roots = [_norm_folder(v) for v in raw_roots]
    types = [
        TypeSpec(name, _norm_folder(spec["folder"]), spec.get("schema", name))
        for name, spec in (data.get("types") or {}).items()
    ]
    for i, spec in enumerate(types):  # one folder, two types: which one a note must be would hang on key order
        other = next((t for t in types[:i] if t.folder == spec.folder), None)
        if other is not None:
            line, col = doc.positions.get(("types", spec.name, "folder"), (0, 0))
            problems.append(Diagnostic(CONFIG_NAME, line + 1, col + 1, "CF002",
                                       f"types.{spec.name}.folder: '{spec.folder}' is already the folder of type "
                                       f"'{other.name}' (one folder holds one type; a subfolder may hold another)"))
    if problems:
        raise ConfigError(problems)
    return Config(
        vault=roots, types=types, vocabulary=dict(data.get("vocabulary") or {}),
        ephemeral=list(data.get("ephemeral") or []), checks=dict(data.get("checks") or {}),
        index=dict(data.get("index") or {}), search=dict(data.get("search") or {}),
        models=dict(data.get("models") or {}), raw=data, positions=dict(doc.positions), ignored=ignored,
    )

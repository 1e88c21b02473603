"""Search kept warm across calls: one :class:`Searcher` and its models per server process.

Before each search the index is brought to HEAD when it lags (a write committed by this
server, a hook's sync still running): the sync runs in-process, reusing the loaded
embedders, and the searcher is reopened when the index file changed.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pygit2

from vaultsync.engine import NoIndexError, WarmSearcher, check_rerank_spec, options_for, search_checked
from vaultsync.git import head_commit_id, head_tree
from vaultsync.index.fastpath import config_text_at
from vaultsync.index.sync import sync
from vaultsync.search.pipeline import Searcher
from vaultsync.vault.config import Config, load_config

SYNC_WAIT_S = 60.0


class WarmSearch:
    """Thread-safe warm search over one repository's index.

    Args:
        repo_path: the repository's git dir or work tree.
    """

    def __init__(self, repo_path: Path | str) -> None:
        self._repo = pygit2.Repository(str(repo_path))
        self._config: tuple[str, Config] | None = None
        self._lock = threading.Lock()
        self._warm = WarmSearcher()

    def _factory(self, config: Any, name: str) -> Any:
        from vaultsync.index.embedding import default_embedder

        loaded = self._warm.embedders
        if name not in loaded:
            loaded[name] = default_embedder(config, name)
        return loaded[name]

    def search(self, query: str, options: dict[str, Any], rerank: str | None = None) -> dict[str, Any]:
        """Run one search; returns ``SearchResult.to_dict()`` with ``links_to`` (the linked notes'
        memory_ids) added to each hit and its trace left out.

        Raises:
            ValueError: a bad option or rerank stage.
            vaultsync.search.query.QueryError: an empty query.
        """
        check_rerank_spec(rerank)
        with self._lock:
            repo = self._repo
            config = search_checked(self._committed_config(repo))
            opts = options_for(config, **options)
            head = head_commit_id(repo)
            searcher = self._searcher(repo, config, rerank)
            if searcher is None or searcher.meta.get("indexed_commit") != (head or ""):
                self._warm.drop()
                sync(repo, wait=SYNC_WAIT_S, embedder_factory=self._factory)
                searcher = self._searcher(repo, config, rerank)
            if searcher is None:
                raise NoIndexError("the vault has no index and it could not be built")
            result = searcher.search(query, opts, head=head).to_dict()
            return self._with_note_fields(searcher, result)

    def _committed_config(self, repo: pygit2.Repository) -> Config:
        """HEAD's ``.vaultsync.yaml``, parsed again only when its text changed."""
        text = config_text_at(repo, head_tree(repo))
        if self._config is None or self._config[0] != text:
            self._config = (text, load_config(Path(repo.workdir or repo.path), text, lenient=True))
        return self._config[1]

    def _searcher(self, repo: pygit2.Repository, config: Any, rerank: str | None) -> Searcher | None:
        try:
            return self._warm.get(repo, config, rerank)
        except NoIndexError:
            return None

    @staticmethod
    def _with_note_fields(searcher: Searcher, result: dict[str, Any]) -> dict[str, Any]:
        paths = sorted({p for h in result["hits"] for p in h["links"]})
        ids: dict[str, str] = {}
        if paths:
            marks = ",".join("?" * len(paths))
            ids = {p: m for p, m in searcher.db.execute(
                f"SELECT path, memory_id FROM notes WHERE path IN ({marks}) AND memory_id IS NOT NULL", paths)}
        for hit in result["hits"]:
            hit["links_to"] = [ids.get(p, p) for p in hit["links"]]
            hit.pop("trace", None)
        for note in (result.get("hidden") or {}).get("notes", []):
            note["show_with"] = tool_arguments(note["show_with"])
            note["reason"] = tool_wording(note["reason"])
        if "show_all" in (result.get("hidden") or {}):
            result["hidden"]["show_all"] = tool_arguments(result["hidden"]["show_all"])
        result["warnings"] = [tool_wording(w) for w in result.get("warnings", [])]
        return result

    def close(self) -> None:
        with self._lock:
            self._warm.drop()


_SEARCH_FLAG = re.compile(r"--(include-expired|include-superseded|min-confidence|min-relevance|scope|type|tag|"
                          r"top-k|budget)\b")
_ARGUMENT = {"type": "types", "tag": "tags"}


def tool_wording(text: str) -> str:
    """``text`` with the search's CLI flags named as the tool's arguments (``--include-expired`` →
    ``include_expired``, ``--type`` → ``types``), for an agent that calls the tool, not the command."""
    return _SEARCH_FLAG.sub(lambda m: _ARGUMENT.get(m.group(1), m.group(1).replace("-", "_")), text)


def tool_arguments(flags: str) -> dict[str, Any]:
    """The search tool's arguments that show a hidden note, for the CLI flags the report names
    (``--include-expired`` → ``{"include_expired": true}``, ``without --type`` and ``without search.types``
    → ``{"types": []}``, which lifts the config's filter too, ``without --scope`` → ``{"scope": ""}``,
    ``--min-confidence 0.3`` → ``{"min_confidence": 0.3}``; several flags, several arguments)."""
    words, out = flags.split(), {}
    while words:
        word = words.pop(0)
        if word == "without" and words:
            name = words.pop(0).removeprefix("--").removeprefix("search.")
            name = _ARGUMENT.get(name, name)
            out[name] = "" if name == "scope" else []
        elif words and not words[0].startswith("--") and words[0] != "without":
            out[word.removeprefix("--").replace("-", "_")] = float(words.pop(0))
        else:
            out[word.removeprefix("--").replace("-", "_")] = True
    return out

"""The derived index: incremental sync from git trees into SQLite FTS5, the link graph and LanceDB.

Real git, real SQLite and LanceDB files in temporary repositories, the real
embedding model. Field cases GH-01, GH-04, GH-05, GH-12, IX-01, IX-02, IX-04,
IX-05, IX-06; rebuild equivalence on random histories; a sync killed mid-way.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from conftest import Vault, adr, assert_same_index, git, index_state, run_cli

pytestmark = pytest.mark.slow

LINKS_CONFIG = "vault: docs\n"


def sync(root: Path, rebuild: bool = False):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync as do_sync

    return do_sync(open_repo(root), rebuild=rebuild, wait=60)


def db(root: Path) -> sqlite3.Connection:
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for

    return sqlite3.connect(layout_for(open_repo(root)).sqlite)


def vectors(root: Path, where: str | None = None) -> int:
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.vector_store import ChunkVectors

    return ChunkVectors(layout_for(open_repo(root)).lance, 384).count(where)


def search(root: Path, query: str, **opts):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.engine import open_searcher, options_for
    from vaultsync.vault.config import Config

    searcher, head = open_searcher(open_repo(root), Config(), rerank="none")
    try:
        return searcher.search(query, options_for(Config(), **opts), head=head)
    finally:
        searcher.close()


@pytest.fixture
def repo(vault: Vault, embedder) -> Vault:  # type: ignore[no-untyped-def]
    vault.write(".vaultsync.yaml", LINKS_CONFIG)
    return vault


def test_gh01_first_commit_without_parent(repo):
    for i in range(3):
        repo.write(f"docs/n{i}.md", f"# Note {i}\nAbout topic number {i}, see [[n{(i + 1) % 3}]].\n")
    repo.commit("init")
    report = sync(repo.root)
    assert report.status == "updated" and report.added == 3
    head = repo.git("rev-parse", "HEAD").stdout.strip()
    con = db(repo.root)
    assert con.execute("SELECT count(*) FROM notes").fetchone()[0] == 3
    assert con.execute("SELECT count(*) FROM notes_fts").fetchone()[0] == 3
    assert con.execute("SELECT value FROM meta WHERE key='indexed_commit'").fetchone()[0] == head
    chunk_count = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert vectors(repo.root, "id NOT LIKE '%#title'") == chunk_count
    assert sync(repo.root).status == "up-to-date"


def test_gh04_renames_deletes_and_case_only_renames(repo):
    repo.write("docs/adrs/ADR-0001.md", "---\ntitle: Use SQLite\n---\nWe use SQLite FTS5 for search.\n")
    repo.write("docs/incidents/INC-0002.md", "# Outage\nThe zqxghost token lives here.\n")
    repo.write("docs/rules/rule-a.md", "# Rule A\nAlways review.\n")
    repo.commit("init")
    sync(repo.root)
    repo.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    repo.commit("mv")
    report = sync(repo.root)
    assert (report.renamed, report.chunks_embedded) == (1, 0)  # same title and text: nothing re-embedded
    repo.git("rm", "-q", "docs/incidents/INC-0002.md")
    repo.commit("rm")
    sync(repo.root)
    repo.git("mv", "docs/rules/rule-a.md", "docs/rules/Rule-A.md")
    repo.commit("case")
    sync(repo.root)
    con = db(repo.root)
    paths = [p for (p,) in con.execute("SELECT path FROM notes ORDER BY path")]
    assert paths == ["docs/adrs/ADR-0001-sqlite.md", "docs/rules/Rule-A.md"]
    for old in ("docs/adrs/ADR-0001.md", "docs/incidents/INC-0002.md", "docs/rules/rule-a.md"):
        assert con.execute("SELECT count(*) FROM chunks WHERE path = ?", (old,)).fetchone()[0] == 0
        assert vectors(repo.root, f"path = '{old}'") == 0
    assert vectors(repo.root, "path = 'docs/rules/Rule-A.md' AND id NOT LIKE '%#title'") == 1
    assert search(repo.root, "zqxghost").hits == [] or all(
        "zqxghost" not in h.text for h in search(repo.root, "zqxghost").hits)


def test_gh05_path_encodings(repo):
    repo.write("docs/rules/no deploy fridays.md", "# No deploy Fridays\nFreeze window starts at noon.\n")
    nfd = "re\u0301sume\u0301"
    repo.write(f"docs/rules/{nfd}.md", "# Résumé\nKeep it short.\n")
    raw = os.fsencode(str(repo.root / "docs/rules")) + b"/caf\xe9.md"
    with open(raw, "wb") as fh:
        fh.write(b"# cafe\n")
    repo.commit("paths")
    report = sync(repo.root)
    assert report.warnings == ["skipping path with invalid UTF-8: docs/rules/caf?.md"]
    paths = {p for (p,) in db(repo.root).execute("SELECT path FROM notes")}
    assert paths == {"docs/rules/no deploy fridays.md", f"docs/rules/{nfd}.md"}
    assert search(repo.root, "Freeze window").hits[0].path == "docs/rules/no deploy fridays.md"
    check = subprocess.run([sys.executable, "-m", "vaultsync", "check", "--staged"], cwd=repo.root,
                           capture_output=True, text=True)
    assert check.returncode == 1 and "docs/rules/caf?.md:1:1: PA002 path is not valid UTF-8" in check.stdout


def test_gh12_submodules_and_symlinks_are_skipped(repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "x.md").write_text("# sub\n")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "x")
    repo.write("README.md", "# Project\n")
    repo.write("docs/adrs/ADR-0001.md", "# Real\nA real note.\n")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "docs/rules/shared")
    os.symlink("../../README.md", repo.root / "docs/adrs/link.md")
    os.symlink("/etc/hostname", repo.root / "docs/adrs/evil.md")
    repo.commit("sub")
    report = sync(repo.root)
    assert report.status == "updated"
    assert {p for (p,) in db(repo.root).execute("SELECT path FROM notes")} == {"docs/adrs/ADR-0001.md"}
    assert repo.check("--staged").code == 0


@pytest.mark.parametrize("target", ["ADR-0001.md", "../../README.md", "../rules", "../../.vaultsync.yaml"])
def test_a_link_to_a_symlinked_note_resolves_and_nothing_reads_it(repo, target):
    """GH-12 / WL kind: Obsidian shows a symlinked ``.md`` as a note, so ``[[link]]`` to a symlink that
    leads to a file of the repository is no dangling link; one that leads to a folder (``../rules``) is
    shown as a folder, which no WikiLink names; vaultsync never reads a symlink. Every check mode and the
    index agree, and the index equals a rebuild."""
    folder = target == "../rules"
    repo.write("README.md", "# Project\n")
    repo.write("docs/adrs/ADR-0001.md", "# Real\nA real note.\n")
    repo.write("docs/rules/RULE-0001.md", "# Rule\n")
    repo.write("docs/adrs/ADR-0002.md", "# Uses\nSee [[link]], [[link#Anything]] and ![[link]].\n")
    os.symlink(target, repo.root / "docs/adrs/link.md")
    repo.git("add", "-A")
    for mode in ([], ["--staged"]):
        res = repo.check(*mode)
        assert res.code == folder and ("WL001" in res.out) == folder, (mode, res.out)
    repo.git("commit", "-qm", "link", "--no-verify")
    assert repo.check("--rev", "HEAD").code == folder
    sync(repo.root)
    resolved = dict(db(repo.root).execute("SELECT target, resolved FROM links WHERE source = 'docs/adrs/ADR-0002.md'"))
    assert resolved["link"] == (None if folder else "docs/adrs/link.md")
    assert "docs/adrs/link.md" not in {p for (p,) in db(repo.root).execute("SELECT path FROM notes")}
    incremental = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))
    os.remove(repo.root / "docs/adrs/link.md")
    repo.git("add", "-A")
    assert "WL001 [[link]]" in repo.check("--staged").out  # gone: dangling again


OUT, LOOP, MISSING = "which leads out of the repository", "goes round in a loop", "which is no file of the repository"
DEAD = [("missing.md", MISSING), ("/etc/hostname", OUT), ("../../../outside.md", OUT), ("link3.md", LOOP),
        ("loop-b.md", LOOP), ("../empty", MISSING), ("sub/../../../x.md", MISSING), ("bad\nname.md", MISSING),
        ("../../.git/config", OUT), ("../../.git", OUT), ("../../build/out.md", MISSING), ("a" * 300 + ".md", MISSING),
        ("ADR-0002.md/", MISSING), ("ADR-0002.md/../ADR-0002.md", MISSING),
        ("../folder-link/../adrs/ADR-0002.md", MISSING)]


def test_a_link_to_a_symlink_that_leads_nowhere_in_the_repository_dangles(repo):
    """GH-12 / WL kind: a symlink whose target is missing, outside the repository (absolute, or ``..``
    past the root, into ``.git``), a loop (itself, or through a second link), an empty folder git does not
    keep, a file git ignores, a name too long for the file system, or a file used as a folder
    (``ADR-0002.md/``, through a link too) is no note: a link to it dangles in every check mode, says
    why, and the index leaves it unresolved. Nothing is read through the link. One link per case."""
    links = " ".join(f"[[link{i}]]" for i in range(len(DEAD)))
    repo.write("docs/adrs/ADR-0002.md", f"# Uses\nSee {links} and ![[link1.md]].\n")
    repo.write(".gitignore", "build/\n")
    repo.write("build/out.md", "# Built\n")  # ignored, untracked: in no snapshot of the repository
    os.symlink("../docs/adrs/ADR-0002.md", repo.root / "docs/folder-link")  # a link to a file, used as a folder
    (repo.root / "docs/empty").mkdir(parents=True)
    os.symlink("link4.md", repo.root / "docs/adrs/loop-b.md")  # link4 → loop-b → link4
    for i, (target, _) in enumerate(DEAD):
        os.symlink(target, repo.root / f"docs/adrs/link{i}.md")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "dead links")
    for mode in ([], ["--staged"], ["--rev", "HEAD"]):
        res = repo.check(*mode)
        assert res.code == 1 and res.out.count("WL001") == len(DEAD) + 1, (mode, res.out)
        for i, (target, why) in enumerate(DEAD):
            line = next(line for line in res.lines if f"[[link{i}]]" in line)
            assert f"docs/adrs/link{i}.md is a symbolic link to '" in line and why in line, (mode, target, line)
        assert all("\n" not in line for line in res.lines)  # a control character in a target is shown escaped
    sync(repo.root)
    resolved = dict(db(repo.root).execute("SELECT target, resolved FROM links WHERE source = 'docs/adrs/ADR-0002.md'"))
    assert all(resolved[f"link{i}"] is None for i in range(len(DEAD)))


def test_ix01_short_and_cjk_terms(repo):
    repo.write("docs/adrs/ci.md", "# CI\nCI runs on GitHub Actions and caches sqlite databases.\n")
    repo.write("docs/rules/tokyo.md", "# Region\n東京 サーバー は 予備 です。\n")
    repo.write("docs/rules/other.md", "# Other\nNothing relevant: decision, precise, special.\n")
    repo.commit("init")
    sync(repo.root)
    for query, expected in (("CI", "docs/adrs/ci.md"), ("東京", "docs/rules/tokyo.md"), ("CI sqlite", "docs/adrs/ci.md")):
        hits = search(repo.root, query, legs=("bm25",), graph_hops=0).hits
        assert hits and hits[0].path == expected, query
    assert all(h.path != "docs/rules/other.md" for h in search(repo.root, "CI", legs=("bm25",)).hits)
    assert search(repo.root, "E", legs=("bm25",)).hits is not None


@pytest.fixture(scope="module")
def short_vault(tmp_path_factory):  # type: ignore[no-untyped-def]
    from conftest import init_vault

    v = init_vault(tmp_path_factory.mktemp("short") / "repo")
    v.write("docs/adrs/ci.md", "---\ntitle: Build pipeline\n---\nCI runs on GitHub Actions; caches live in sqlite.\n")
    v.write("docs/notes/out.md", "---\ntitle: Outside\n---\nzqoutside text\n")
    v.write("docs/notes/cookies.md", "---\ntitle: Sessions\n---\nSession cookies expire after an hour.\n")
    v.commit("init", "--no-verify")
    sync(v.root)
    return v


@pytest.mark.parametrize("query", ["ci", "CI", "Ci", "cI", "ci cd", "CD ci", "qa CI", "ｃｉ"])
def test_ix01_a_short_term_query_finds_its_note_first_in_any_case(short_vault, query):
    """`CI` found the note, `ci` put a note without it first: the vectors read a two-letter query as noise,
    and BM25, the leg that matches it exactly, weighed half. And `ci cd` found nothing by BM25: every short
    term had to be in one chunk. Now any case ranks the same note first, in the whole pipeline."""
    hits = search(short_vault.root, query, min_relevance=0.0).hits
    assert hits and hits[0].path == "docs/adrs/ci.md", [(h.path, h.relevance) for h in hits]


_FOLDED = [  # (word in the note, how a user types it): full case folding differs from FTS5's one-to-one one
    ("Straßenmeisterei", "Straßenmeisterei"), ("Straßenmeisterei", "STRASSENMEISTEREI"), ("Hauptstraße", "HAUPTSTRAẞE"),
    ("İstanbul", "İstanbul"), ("ΟΔΥΣΣΕΥΣ", "οδυσσευς"), ("Οδυσσεύς", "ΟΔΥΣΣΕΎΣ"), ("ﬁnance", "finance"),
    ("Maße", "masse"), ("ŉapi", "ʼnapi"),
    ("İstanbul", "istanbul"), ("istanbul", "İSTANBUL"), ("İZMİR", "izmir"),  # Turkish dotted capital I
]


@pytest.mark.parametrize("word, typed", _FOLDED)
def test_ix03_bm25_folds_the_index_as_it_folds_the_query(repo, word, typed):
    """Queries are NFKC-normalised and fully case-folded; the FTS text is too, so ß, ẞ, İ, final sigma
    and ligatures match in any case (FTS5's own folding maps one character to one). ``İ`` folds to a
    plain ``i``: the dot folding leaves would part ``İstanbul`` from ``istanbul``."""
    repo.write("docs/a.md", f"# Notes\nThe ticket {word}-629 was closed.\n")
    repo.write("docs/b.md", "# Other\nThe ticket Radweg-630 was closed.\n")
    repo.commit("init")
    sync(repo.root)
    for query in (typed, f"{typed}-629", f"ticket {typed}"):
        hits = search(repo.root, query, legs=("bm25",), graph_hops=0).hits
        assert hits and hits[0].path == "docs/a.md", query


_ACCENTED = [  # (word in a note, how a user types it): accents either way, composed or decomposed (NFD)
    ("naïve", "naive"), ("resume", "RÉSUMÉ"), ("München", "munchen"), ("Zurich", "ZÜRICH"), ("Façade", "facade"),
    ("Crème", "cre\u0300me"), ("cafe\u0301", "café"), ("Tiếng", "tieng"), ("Việt", "VIET"), ("Ἀθῆναι", "αθηναι"),
    ("Łódź", "lodz"), ("Søndergaard", "sondergaard"), ("Đặng", "dang"), ("Kırşehir", "kirsehir"), ("Cæsar", "caesar"),
    ("né", "ne"),  # under 3 characters: the short-term scan folds the same way
    # marks a reader may leave out in other scripts: Cyrillic stress, Arabic harakat and tatweel, Hebrew niqqud
    ("моло́ко", "молоко"), ("مَرْحَبًا", "مرحبا"), ("شـــكرا", "شكرا"), ("שָׁלוֹם", "שלום"),
]


def test_bm25_is_blind_to_accents_on_latin_and_greek_letters(repo):
    """A word typed without its accents (or with them, on a note written without) finds its note
    in both directions, as a reader would: one index, a note per word (no two alike once folded),
    each query its own note first."""
    for i, (word, _) in enumerate(_ACCENTED):
        repo.write(f"docs/n{i}.md", f"# Note {i}\nThe ticket {word} was closed.\n")
    repo.commit("init")
    sync(repo.root)
    for i, (_, typed) in enumerate(_ACCENTED):
        hits = search(repo.root, typed, legs=("bm25",), graph_hops=0).hits
        assert hits and hits[0].path == f"docs/n{i}.md", typed


def test_a_note_is_found_by_its_frontmatter_tags(repo):
    """A tag names what a note is about even where its text never says the word: tags are searched
    with the title, as a list, one string of them, or ``#tag``; a word in no tag finds nothing."""
    for i, tags in enumerate(['[payments, rollouts]', '"ops, rollouts"', '"#rollouts"', "\n  - kubernetes/rollouts"]):
        repo.write(f"docs/t{i}.md", f"---\ntags: {tags}\n---\n# Friday rule {i}\nNo changes after 3 pm.\n")
    repo.write("docs/other.md", "---\ntags: [billing]\n---\n# Ledger\nInvoices close monthly.\n")
    repo.commit("init")
    sync(repo.root)
    for query in ("rollouts", "#rollouts"):  # a tag asked for as Obsidian writes it, too
        result = search(repo.root, query, legs=("bm25",), graph_hops=0, top_k=10, min_relevance=0)
        assert sorted({h.path for h in result.hits}) == [f"docs/t{i}.md" for i in range(4)], result


def test_a_note_is_found_by_a_word_only_its_aliases_hold(repo):
    """A word only in a note's ``aliases`` (the names its links resolve by) ranked an unrelated note first:
    aliases are searched with the title, as a list or one string, in any script."""
    for i, aliases in enumerate(["[Qzwaliasonly]", "Qzwaliasonly", '["Der Qzwaliasonly-Plan"]', "[Qzwaliasonly, x]"]):
        repo.write(f"docs/a{i}.md", f"---\ntitle: Plan {i}\naliases: {aliases}\n---\nThe body says nothing.\n")
    repo.write("docs/other.md", "---\ntitle: Other\naliases: [Ledger]\n---\nInvoices close monthly.\n")
    repo.commit("init")
    sync(repo.root)
    for query in ("qzwaliasonly", "QZWALIASONLY plan"):
        result = search(repo.root, query, legs=("bm25",), graph_hops=0, top_k=10, min_relevance=0)
        assert sorted({h.path for h in result.hits}) == [f"docs/a{i}.md" for i in range(4)], result


def test_marks_that_are_letters_in_their_script_still_tell_words_apart(repo):
    """Only accents on Latin and Greek letters fold away: kana voicing, Cyrillic й, Devanagari and
    Thai signs change the word, so a query with them finds only the note that has them."""
    pairs = [("がいど", "かいど"), ("йод", "иод"), ("ёлка", "елка"), ("हिन्दी", "हिन्द"), ("ไม้", "ไม")]
    for i, (word, other) in enumerate(pairs):
        repo.write(f"docs/a{i}.md", f"# A\nThe {word} entry.\n")
        repo.write(f"docs/b{i}.md", f"# B\nThe {other} entry.\n")
    repo.commit("init")
    sync(repo.root)
    for i, (word, _) in enumerate(pairs):
        hits = search(repo.root, word, legs=("bm25",), graph_hops=0).hits
        assert [h.path for h in hits] == [f"docs/a{i}.md"], word


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x24F, blacklist_categories=("Cs",)),
               max_size=40))
def test_fold_is_idempotent_and_blind_to_latin_accents(text):
    """Folding twice is folding once, and a Latin text with its accents taken off (NFD, marks dropped)
    folds to what the text folds to."""
    import unicodedata

    from vaultsync.index.format import fold

    assert fold(fold(text)) == fold(text)
    plain = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    assert fold(plain) == fold(text)


@pytest.mark.parametrize("query", ["commit -a", "multi-agent", "Outage: DB", "don't", "lock OR", "SQLite AND",
                                   "NOT lock", "C++", "(lock", "docs/adrs", "E42.", '"trigram', "title: lock",
                                   "NEAR(a b)", "a" * 5000, "\x00 lock", "🔒 lock", "🔒",
                                   " ".join(chr(0x4E00 + i) for i in range(999)),  # 999 short terms, one SQL scan
                                   " ".join(chr(0xAC00 + 37 * i) + chr(0xAC00 + 11 * i) for i in range(1000))])
def test_ix02_query_syntax_never_raises(repo, query):
    repo.write("docs/a.md", "# Lock\nLock contention in C++ code; commit -a is fine; multi-agent setups.\n")
    repo.commit("init")
    sync(repo.root)
    result = search(repo.root, query)
    assert isinstance(result.hits, list)
    if query == "C++":
        assert result.hits and result.hits[0].path == "docs/a.md"


def test_ix02_empty_query_is_a_usage_error(repo):
    repo.write("docs/a.md", "# A\ntext\n")
    repo.commit("init")
    for q, message in (("", "empty query"), ("   ", "empty query"), ("\x01\x02", "empty query"),
                       (":", "holds no word"), ("''", "holds no word"), ("* ( ) --", "holds no word"),
                       ("「」、。", "holds no word"), ("$ + ^", "holds no word")):
        res = subprocess.run([sys.executable, "-m", "vaultsync", "search", "--no-daemon", "--", q], cwd=repo.root,
                             capture_output=True, text=True)
        assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr, (q, res.stderr)
        assert res.stderr.count("\n") == 1


@pytest.mark.parametrize("symbol", ["€", "∑", "≤", "₿"])
def test_ix02_a_currency_or_math_symbol_alone_finds_the_note_holding_it(repo, symbol):
    repo.write("docs/a.md", f"# Fees\nThe transfer limit is {symbol} per batch, set by finance.\n")
    repo.write("docs/b.md", "# Transfers\nThe transfer limit per batch is set by finance.\n")
    repo.commit("init")
    sync(repo.root)
    hits = search(repo.root, symbol, legs=("bm25",), graph_hops=0).hits
    assert hits and hits[0].path == "docs/a.md" and all(h.path != "docs/b.md" for h in hits)


def test_ix02_a_term_longer_than_64_characters_still_finds_its_note(repo):
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" * 2  # 128 characters
    repo.write("docs/a.md", f"# Build\nThe artifact digest is {digest}.\n")
    repo.write("docs/b.md", "# Other\nThe artifact digest is 0000.\n")
    repo.commit("init")
    sync(repo.root)
    hits = search(repo.root, f"digest {digest}", legs=("bm25",), graph_hops=0).hits
    assert hits and hits[0].path == "docs/a.md"


def test_ix04_quotes_in_paths_never_break_predicates(repo):
    tricky = "docs/incidents/INC-0004-o'brien-db-outage.md"
    injection = "docs/rules/x' OR '1'='1.md"
    repo.write(tricky, "# O'Brien\nThe database outage.\n")
    repo.write(injection, "# Injection\nA note with a hostile name.\n")
    repo.write("docs/rules/keep.md", "# Keep\nUntouched note.\n")
    repo.commit("init")
    sync(repo.root)
    keep_before = vectors(repo.root, "path = 'docs/rules/keep.md'")
    repo.write(tricky, "# O'Brien\nThe database outage.\n\n## Follow-up\nMore text here.\n")
    repo.commit("edit")
    sync(repo.root)
    assert vectors(repo.root, "path = 'docs/incidents/INC-0004-o''brien-db-outage.md' AND id NOT LIKE '%#title'") == \
        db(repo.root).execute("SELECT count(*) FROM chunks WHERE path = ?", (tricky,)).fetchone()[0]
    repo.git("rm", "-q", tricky, injection)
    repo.commit("rm")
    sync(repo.root)
    assert vectors(repo.root, "path = 'docs/incidents/INC-0004-o''brien-db-outage.md'") == 0
    assert vectors(repo.root, "path = 'docs/rules/keep.md'") == keep_before


def test_ix05_one_version_per_sync_and_bounded_history(repo, monkeypatch):
    from vaultsync.git import open_repo
    from vaultsync.index import vector_store
    from vaultsync.index.layout import layout_for
    from vaultsync.index.vector_store import ChunkVectors

    monkeypatch.setattr(vector_store, "COMPACT_EVERY", 6)  # the default, 20, in fewer syncs

    for i in range(50):
        repo.write(f"docs/n{i}.md", f"# Note {i}\nBody {i}.\n")
    repo.commit("fifty")
    sync(repo.root)
    table = ChunkVectors(layout_for(open_repo(repo.root)).lance, 384)
    before = table.version
    for i in range(50):
        repo.write(f"docs/n{i}.md", f"# Note {i}\nChanged body {i}.\n")
    repo.commit("touch fifty")
    sync(repo.root)
    assert ChunkVectors(layout_for(open_repo(repo.root)).lance, 384).version - before <= 2
    for i in range(14):
        repo.write("docs/n0.md", f"# Note 0\nRevision {i}.\n")
        repo.commit(f"r{i}")
        sync(repo.root)
    versions = list((layout_for(open_repo(repo.root)).lance / "chunks_multilingual_e5_small_384.lance"
                     / "_versions").iterdir())
    assert len(versions) <= 8  # compaction + cleanup every 6 versions (16 syncs without it)


def test_ix05_concurrent_syncs_are_serialised(repo):
    for i in range(20):
        repo.write(f"docs/n{i}.md", f"# Note {i}\nBody number {i} about locks.\n")
    repo.commit("init")
    procs = [subprocess.Popen([sys.executable, "-m", "vaultsync", "sync", "--wait", "120"], cwd=repo.root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert not any("Conflict" in o + e for o, e in outs)
    state = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(state, index_state(repo.root))


def test_ix06_small_vault_has_no_ann_index_and_flat_search_works(repo):
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.vector_store import ChunkVectors

    for i, topic in enumerate(["lock contention in the queue", "backup retention", "deploy freeze", "tls certs",
                               "dns failover"]):
        repo.write(f"docs/n{i}.md", f"# {topic.title()}\nNotes on {topic}.\n")
    repo.commit("init")
    sync(repo.root)
    assert ChunkVectors(layout_for(open_repo(repo.root)).lance, 384).table.list_indices() == []
    assert search(repo.root, "lock contention").hits[0].path == "docs/n0.md"


def _random_history(repo: Vault, rng: random.Random, steps: int) -> None:
    words = "cache index shard replica latency budget rollout canary queue retry backoff lock schema".split()
    names = [f"docs/topic-{i}.md" for i in range(8)]
    for step in range(steps):
        op = rng.choice(["add", "add", "edit", "delete", "rename", "amend", "reset", "branch-merge", "unreadable",
                         "chunking", "attachment"])
        existing = [n for n in names if (repo.root / n).exists()]
        if op == "add" or not existing:
            name = rng.choice(names)
            links = " ".join(f"[[{Path(n).stem}]]" for n in rng.sample(names, 2))
            repo.write(name, f"# {Path(name).stem}\n{' '.join(rng.choices(words, k=30))}\n\n## Detail\n{links}\n")
        elif op == "edit":
            name = rng.choice(existing)
            repo.write(name, (repo.root / name).read_text() + f"\n{' '.join(rng.choices(words, k=10))}\n")
        elif op == "delete":
            repo.git("rm", "-q", rng.choice(existing))
        elif op == "unreadable":  # a note that stops being UTF-8 leaves the index, as a rebuild never has it
            (repo.root / rng.choice(existing)).write_bytes(b"---\ntitle: x\n---\ncaf\xe9 " + rng.choice(words).encode())
        elif op == "attachment":  # links to it resolve once it exists, and no longer once it is gone
            picture = repo.root / "docs/assets/arch.png"
            if picture.exists():
                picture.unlink()
            else:
                repo.write("docs/assets/arch.png", b"\x89PNG\r\n\x1a\n")
                repo.write(rng.choice(names), "# linked\nSee ![[arch.png]] and [[arch.png|the picture]].\n")
        elif op == "chunking":  # a config change re-chunks every note
            repo.write(".vaultsync.yaml", f"{LINKS_CONFIG}index:\n  chunk_tokens: {rng.choice([40, 120, 400])}\n")
        elif op == "rename":
            src = rng.choice(existing)
            dst = f"docs/moved-{step}.md"
            repo.git("mv", src, dst)
            names.append(dst)
        if op == "amend" and repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).returncode == 0:
            repo.git("add", "-A")
            repo.git("commit", "-q", "--amend", "--no-edit", "--allow-empty")
        elif op == "reset" and repo.git("rev-parse", "-q", "--verify", "HEAD~1", check=False).returncode == 0:
            repo.git("reset", "-q", "--hard", "HEAD~1")
        elif op == "branch-merge" and repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).returncode == 0:
            repo.git("checkout", "-q", "-b", f"b{step}")
            repo.write(f"docs/branch-{step}.md", f"# branch {step}\n{' '.join(rng.choices(words, k=12))}\n")
            repo.commit(f"branch {step}", "--allow-empty")
            repo.git("checkout", "-q", "main")
            repo.git("merge", "-q", "--no-ff", "-m", "merge", f"b{step}")
        else:
            repo.git("add", "-A")
            repo.git("commit", "-qm", f"step {step}", "--allow-empty")
        if rng.random() < 0.5:
            sync(repo.root)


@pytest.mark.parametrize("seed", range(int(os.environ.get("VAULTSYNC_HISTORY_SEEDS", "3"))))  # more to soak
def test_rebuild_equals_any_sequence_of_incremental_syncs(repo, seed):
    _random_history(repo, random.Random(seed), steps=12)
    sync(repo.root)
    incremental = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))


def test_a_killed_sync_leaves_a_consistent_index_and_the_next_one_repairs_it(repo):
    rng = random.Random(3)
    for i in range(60):
        repo.write(f"docs/n{i}.md", f"# Note {i}\n" + " ".join(rng.choices("alpha beta gamma delta epsilon".split(), k=150)))
    repo.commit("init")
    sync(repo.root)
    for i in range(0, 60, 2):
        repo.write(f"docs/n{i}.md", f"# Note {i}\nRewritten {i} " + " ".join(rng.choices("zeta eta theta".split(), k=150)))
    repo.commit("rewrite half")
    before = index_state(repo.root)
    killed_states = set()
    for delay in (0.3, 1.0, 2.0, 3.5):
        proc = subprocess.Popen([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=repo.root)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state = index_state(repo.root)  # must be readable and self-consistent
        killed_states.add(state["indexed_tree"])
        assert all(set(ids) >= {c[0] for c in state["chunks"]} for ids in state["vector_ids"].values())
        if state["indexed_tree"] == before["indexed_tree"]:
            assert_same_index(before, state)
    sync(repo.root)
    final = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(final, index_state(repo.root))
    assert killed_states  # the loop ran


def test_a_note_that_becomes_unreadable_leaves_the_index(repo):
    repo.write("docs/a.md", "# A\nThe zqxplover token.\n")
    repo.write("docs/b.md", "# B\nSee [[a]].\n")
    repo.commit("init")
    sync(repo.root)
    (repo.root / "docs/a.md").write_bytes(b"# A\nThe zqxplover token, caf\xe9.\n")
    repo.commit("latin-1")
    report = sync(repo.root)
    assert any("unreadable" in w and "docs/a.md" in w for w in report.warnings)
    assert db(repo.root).execute("SELECT count(*) FROM chunks WHERE path = 'docs/a.md'").fetchone()[0] == 0
    assert not any(h.path == "docs/a.md" for h in search(repo.root, "zqxplover").hits)
    incremental = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))


def test_a_chunking_change_in_the_config_rechunks_unchanged_notes(repo):
    repo.write("docs/long.md", "# Long\n" + "\n\n".join(f"Step {i} checks the budget before the rollout." for i in range(40)))
    repo.commit("init")
    sync(repo.root)
    counts = []
    for tokens in (60, 400, 60):
        repo.write(".vaultsync.yaml", f"{LINKS_CONFIG}index:\n  chunk_tokens: {tokens}\n")
        repo.commit(f"chunk {tokens}")
        sync(repo.root)
        counts.append(db(repo.root).execute("SELECT count(*) FROM chunks WHERE path = 'docs/long.md'").fetchone()[0])
    assert counts[0] == counts[2] > counts[1]
    incremental = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))


def test_an_attachment_that_comes_or_goes_re_resolves_the_links_to_it(repo):
    repo.write("docs/a.md", "# A\nSee [[arch.png]] and ![[flow.svg]].\n")
    repo.commit("init")
    sync(repo.root)
    for step in ("add", "remove"):
        if step == "add":
            repo.write("docs/assets/arch.png", b"\x89PNG\r\n\x1a\n")
            repo.write("docs/assets/flow.svg", "<svg/>\n")
        else:
            repo.git("rm", "-q", "docs/assets/arch.png")
        repo.commit(step)
        sync(repo.root)
        resolved = dict(db(repo.root).execute("SELECT target, resolved FROM links WHERE source = 'docs/a.md'"))
        assert resolved["flow.svg"] == "docs/assets/flow.svg"
        assert resolved["arch.png"] == (None if step == "remove" else "docs/assets/arch.png")
        incremental = index_state(repo.root)
        sync(repo.root, rebuild=True)
        assert_same_index(incremental, index_state(repo.root))


def test_a_type_schema_is_read_from_the_commit_never_the_working_tree(repo):
    import json as json_lib

    from vaultsync.resources import data_dir

    schema = json_lib.loads((data_dir("schemas") / "rule.schema.json").read_text())
    repo.write(".vaultsync.yaml", f"{LINKS_CONFIG}types:\n  rule: {{folder: docs/rules, schema: schemas/team.json}}\n")
    repo.write("schemas/team.json", json_lib.dumps(schema))
    repo.write("docs/rules/r1.md", "---\nmemory_id: RULE-0001\ntype: rule\ntitle: One\nstatus: active\n"
                                   'created: "2024-03-01"\n---\nAlways one.\n')
    repo.commit("init")
    sync(repo.root)

    def warnings() -> str:
        return db(repo.root).execute("SELECT warnings FROM notes WHERE path = 'docs/rules/r1.md'").fetchone()[0]

    schema.setdefault("required", []).append("owner_zz")  # committed: every note is checked again
    repo.write("schemas/team.json", json_lib.dumps(schema))
    repo.commit("schema")
    sync(repo.root)
    assert "owner_zz" in warnings()
    incremental = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))
    schema["required"].append("dirty_zz")  # not committed: the index never sees it
    (repo.root / "schemas/team.json").write_text(json_lib.dumps(schema))
    repo.write("docs/rules/r1.md", (repo.root / "docs/rules/r1.md").read_text() + "More.\n")
    repo.git("add", "docs/rules/r1.md")
    repo.git("commit", "-qm", "note")
    sync(repo.root)
    assert "owner_zz" in warnings() and "dirty_zz" not in warnings()


@pytest.mark.parametrize("schema_path", ["schemas/team.json", "./schemas/team.json", "docs/rules/schema.json"])
def test_a_schema_only_the_working_tree_holds_is_missing_for_the_index_and_the_staged_check(repo, schema_path):
    """A type's schema that was never committed was read from the disk, so after an edit to it the
    incremental index (old results for unchanged notes) differed from a rebuild (new results for all):
    the index and ``check --staged`` see it as missing (CF003, "not committed"); a plain ``check`` of
    the working tree still reads it."""
    repo.write(".vaultsync.yaml", f"{LINKS_CONFIG}types:\n  rule: {{folder: docs/rules, schema: {schema_path}}}\n")
    repo.write("docs/rules/r1.md", "---\ntitle: One\n---\nAlways one.\n")
    repo.commit("init")  # commits .vaultsync.yaml and the note only
    (repo.root / schema_path).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / schema_path).write_text('{"type": "object"}')
    sync(repo.root)
    (repo.root / schema_path).write_text('{"type": "object", "required": ["owner_zz"]}')
    repo.write("docs/rules/r2.md", "---\ntitle: Two\n---\nAlways two.\n")
    repo.git("add", "docs/rules/r2.md")
    repo.git("commit", "-qm", "two")
    sync(repo.root)
    incremental = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))
    warnings = [row[0] for row in db(repo.root).execute("SELECT warnings FROM notes ORDER BY path")]
    assert len(warnings) == 2 and all("not committed" in w and "owner_zz" not in w for w in warnings), warnings
    staged = repo.check("--staged")
    assert staged.code == 1 and f"CF003 type 'rule': schema '{schema_path}' is not committed" in staged.out
    work = repo.check()
    assert work.code == 1 and "owner_zz" in work.out and "not committed" not in work.out


def test_an_orphan_branch_leaves_the_index_as_a_rebuild_would(repo):
    repo.write("docs/a.md", "# A\nText.\n")
    repo.commit("init")
    sync(repo.root)
    repo.git("switch", "-q", "--orphan", "empty")
    sync(repo.root)
    incremental = index_state(repo.root)
    counter = "SELECT value FROM meta WHERE key = 'token_counter'"
    before = db(repo.root).execute(counter).fetchone()
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))
    assert before == db(repo.root).execute(counter).fetchone()  # what counted tokens: nothing, as a rebuild says


def test_frontmatter_is_stored_as_json_strings(repo):
    repo.write(".vaultsync.yaml", "vault: docs\n")
    repo.write("docs/a.md", adr("ADR-0001", extra="expires: 2024-02-30\nat: 2024-03-01T10:20:30Z\n"))
    repo.commit("init")
    sync(repo.root)
    fm = json.loads(db(repo.root).execute("SELECT frontmatter FROM notes").fetchone()[0])
    assert fm["created"] == "2024-03-01" and fm["at"] == "2024-03-01T10:20:30Z" and fm["expires"] == "2024-02-30"


@pytest.mark.parametrize("folder, cache", [("line\nbreak", "ok"), ("tab\tand\x7fdel", "ok"), (os.fsdecode(b"caf\xe9"), "ok"),
                                           ("line\nbreak", "file"), ("line\nbreak", "alias-is-a-folder")])
def test_a_repository_under_a_folder_with_control_characters_is_indexed(tmp_path, embedder, folder, cache,
                                                                       monkeypatch):
    """LanceDB's paths refuse control characters: the vector store is reached through an alias, in the
    user cache, or in a private temporary folder when the cache cannot hold it."""
    if cache != "ok":
        links = tmp_path / "cache" / "lance-paths"
        links.parent.mkdir()
        if cache == "file":
            links.write_text("x")
        else:
            import hashlib
            for leaf in ("lance", "embeddings"):
                target = str(tmp_path / folder / "repo" / ".git" / "vaultsync" / leaf)
                (links / hashlib.sha256(os.fsencode(target)).hexdigest()[:32]).mkdir(parents=True)
        monkeypatch.setattr("vaultsync.settings.cache_root", lambda *a: tmp_path / "cache")
    root = tmp_path / folder / "repo"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    v.write(".vaultsync.yaml", LINKS_CONFIG)
    v.write("docs/n.md", "# Note\nThe zqxalias token lives here.\n")
    v.commit("init")
    assert sync(root).status == "updated"
    assert vectors(root, "path = 'docs/n.md'") >= 1
    v.write("docs/m.md", "# Other\nSomething else entirely.\n")
    v.commit("more")
    assert sync(root).status == "updated" and vectors(root, "path = 'docs/m.md'") >= 1
    assert [h.path for h in search(root, "zqxalias").hits][:1] == ["docs/n.md"]


def test_gh_a_sparse_partial_clone_indexes_what_it_has_and_the_rest_once_it_arrives(repo, tmp_path):
    """A ``--filter=blob:none --sparse`` clone holds only its cone's blobs, and libgit2 cannot fetch the rest
    as git does. The sync never fails on them (a pull that renames and removes notes outside the cone
    included), never calls the index current while one is missing, and reads them once they arrive:
    the index then equals a rebuild."""
    repo.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body="The quokka decision.\n"))
    repo.write("docs/rules/r.md", "# Rule\nThe wombat rule.\n")
    repo.write("docs/incidents/i.md", "# Incident\nThe numbat incident, see [[r]].\n")
    repo.commit("init")
    git(repo.root, "config", "uploadpack.allowFilter", "true")
    git(repo.root, "config", "uploadpack.allowAnySHA1InWant", "true")
    clone = tmp_path / "partial"
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--sparse", f"file://{repo.root}", str(clone))
    git(clone, "sparse-checkout", "set", "docs/adrs")
    report = sync(clone)
    assert report.status == "updated" and any("until its content is here" in w for w in report.warnings)
    assert sync(clone).status == "updated"  # still missing: never "up-to-date"
    status = json.loads(run_cli(["status", "--format", "json"], clone).out)
    assert not status["up_to_date"] and sorted(status["unread"]) == ["docs/incidents/i.md", "docs/rules/r.md"]
    git(repo.root, "mv", "docs/rules/r.md", "docs/rules/r2.md")
    git(repo.root, "rm", "-q", "docs/incidents/i.md")
    repo.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body="The quokka decision, revised.\n"))
    repo.commit("move, remove, edit")
    git(clone, "pull", "-q")
    sync(clone)  # the diff cannot read the moved blob: blob ids decide
    git(clone, "sparse-checkout", "disable")  # the missing blobs arrive
    assert not sync(clone).warnings
    assert search(clone, "wombat rule", legs=("bm25",), graph_hops=0).hits[0].path == "docs/rules/r2.md"
    assert search(clone, "revised", legs=("bm25",), graph_hops=0).hits[0].path == "docs/adrs/ADR-0001.md"
    incremental = index_state(clone)
    sync(clone, rebuild=True)
    assert_same_index(incremental, index_state(clone))


def test_tag_terms_read_lists_strings_and_hashes_and_are_bounded():
    from vaultsync.index.format import MAX_TAG_CHARS, MAX_TAGS, tag_terms

    assert tag_terms({"tags": ["ops", "#deploys", " ", 3, None, ["x"], {"a": 1}]}) == ["ops", "deploys"]
    assert tag_terms({"tags": "ops, #deploys  db"}) == ["ops", "deploys", "db"]
    assert tag_terms({"tags": None}) == tag_terms({}) == tag_terms({"tags": 7}) == []
    many = tag_terms({"tags": [f"t{i}" * 100 for i in range(20_000)]})
    assert len(many) == MAX_TAGS and all(len(t) <= MAX_TAG_CHARS for t in many)


def test_a_symlink_into_a_folder_a_sparse_checkout_left_out_still_leads_there(repo):
    """GH-12 / WL kind: the working tree of a sparse checkout lacks the files outside its folders, but
    the index holds them: a link into one is as alive as in ``--staged`` and ``--rev``."""
    repo.write("src/b.md", "# B\n")
    repo.write("docs/src.md", "# Src\n[[tosrc]]\n")
    os.symlink("../src/b.md", repo.root / "docs/tosrc.md")
    repo.commit("sparse")
    repo.git("sparse-checkout", "set", "docs")
    assert not (repo.root / "src/b.md").exists()
    for mode in ([], ["--staged"], ["--rev", "HEAD"]):
        res = repo.check(*mode)
        assert res.code == 0, (mode, res.out)


def test_the_report_counts_as_added_only_the_notes_it_indexed(vault):  # type: ignore[no-untyped-def]
    """`index --rebuild` said +34 where 31 notes were indexed: the 3 it skipped (unreadable) were counted."""
    from conftest import HashEmbedder
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync

    vault.write("docs/a.md", "# a\n\nReadable.\n")
    vault.write("docs/b.md", b"\x89PNG\r\n\x1a\n\x00\x00")  # binary under a .md name: skipped
    vault.write("docs/c.md", "caf".encode() + b"\xe9\n")    # not UTF-8: skipped
    vault.commit("notes", "--no-verify")
    report = sync(open_repo(vault.root), embedder_factory=lambda config, name: HashEmbedder(name), wait=30)
    assert report.added == 1 and "+1 " in report.summary(), report.summary()
    assert sum("skipping" in w for w in report.warnings) == 2, report.warnings
    vault.git("mv", "docs/a.md", "docs/moved.md")  # renamed, and now unreadable: never a negative count
    (vault.root / "docs/moved.md").write_bytes(b"\xff\xfe\x00")
    vault.commit("moved", "-a", "--no-verify")
    again = sync(open_repo(vault.root), embedder_factory=lambda config, name: HashEmbedder(name), wait=30)
    assert again.added >= 0 and "+-" not in again.summary(), again.summary()

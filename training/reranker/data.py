"""Training groups for the reranker: (query, positive, hard negatives), from ``shared/train`` only.

Inputs (the data manifest lists them with sha256 and licence):

* ``tldr-pages.jsonl`` — the same ``platform/command`` page in 13 languages.
* ``design-docs.jsonl`` — Rust RFCs, Swift Evolution proposals, EIPs.

Passages are rendered exactly like the search pipeline's rerank input: the
page or document goes through the index chunker
(:func:`vaultsync.index.chunking.chunk_note`) and each chunk becomes
``"{title} > {heading}\\n{text}"``.

Query kinds (quotas in the recipe config):

``xl-desc``     a page's description (``>`` lines) in language X → the English page (cross-lingual known item);
``xl-example``  one example description in X (``- …:``) → the English page;
``en-desc``     the English description → the English page without it (inverse cloze);
``en-example``  one English example description → the page without that example;
``mono-desc``   X description → the X page without it (non-English notes);
``doc-title``   a design document's title → its first chunk;
``doc-heading`` a specific section heading (generic ones such as "Motivation" are skipped) → the section's first chunk;
``doc-ict``     one sentence of a chunk → the chunk without that sentence (inverse cloze task, Lee et al. 2019).

Hard negatives are mined with the project's own legs: BM25 (SQLite FTS5
trigram, :func:`vaultsync.search.bm25.bm25_candidates`) and dense
(multilingual-e5-small), fused by reciprocal rank; passages of the same
item that may be relevant (the same command on another platform, the same
document for a title query, the neighbouring chunks for a sentence) are never
negatives. The split into train / validation is by item (command or document),
so no page or document is on both sides.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sqlite3
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vaultsync.index.chunking import chunk_note
from vaultsync.search.bm25 import bm25_candidates
from vaultsync.search.query import QueryError, parse_query

Say = Callable[[str], None]

EVAL_LANGS = ("ja", "zh", "zh-TW", "ko", "de", "fr", "es", "ru")
GENERIC_HEADINGS = {
    "abstract", "summary", "motivation", "specification", "rationale", "detailed design", "proposed solution",
    "alternatives", "alternatives considered", "drawbacks", "unresolved questions", "security considerations",
    "copyright", "backwards compatibility", "backward compatibility", "test cases", "reference implementation",
    "introduction", "guide-level explanation", "reference-level explanation", "prior art", "future possibilities",
    "how we teach this", "source compatibility", "effect on abi stability", "effect on api resilience",
    "acknowledgments", "acknowledgements", "implementation", "future directions", "simple summary", "examples",
    "example", "overview", "background", "references", "description", "design", "usage", "impact on existing code",
    "effect on abi stability and api resilience", "changes",
    "revision history", "open questions", "discussion", "appendix", "notes", "terminology", "definitions",
    "parameters", "constants", "abi", "api", "prior-art", "status", "links", "faq",
}


def norm_text(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the form every leakage hash is taken of."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_hash(text: str) -> int:
    """64-bit hash of :func:`norm_text` (first 8 bytes of its sha256, big-endian)."""
    return int.from_bytes(hashlib.sha256(norm_text(text).encode("utf-8")).digest()[:8], "big")


def stable_unit(key: str, salt: str) -> float:
    """A deterministic number in [0, 1) per key (the train / validation split)."""
    return int.from_bytes(hashlib.sha256(f"{salt}:{key}".encode()).digest()[:8], "big") / 2.0**64


# ----------------------------------------------------------------------------------------------
# sources


@dataclass
class TldrPage:
    lang: str
    platform: str
    command: str
    text: str
    description: list[str]
    examples: list[tuple[str, str]]  # (description, code)

    @property
    def key(self) -> str:
        return f"{self.platform}/{self.command}"


_MORE_INFO = re.compile(r"<https?://|https?://")


def parse_tldr(row: dict[str, str]) -> TldrPage:
    """Split a tldr page into its description lines and (example description, code) pairs."""
    desc: list[str] = []
    examples: list[tuple[str, str]] = []
    pending: str | None = None
    for line in row["text"].split("\n"):
        s = line.strip()
        if s.startswith(">"):
            body = s.lstrip(">").strip()
            if body and not _MORE_INFO.search(body):
                desc.append(body)
        elif s.startswith("- "):
            pending = s[2:].strip().rstrip(":：").strip()
        elif s.startswith("`") and pending is not None:
            examples.append((pending, s.strip("`")))
            pending = None
    return TldrPage(row["lang"], row["platform"], row["command"], row["text"], desc, examples)


def page_body(page: TldrPage, drop: Sequence[str] = ()) -> str:
    """The page without its ``# command`` line (the title travels as context), minus ``drop`` lines."""
    lines = page.text.split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    if drop:
        dropset = set(drop)
        out: list[str] = []
        skip_code = False
        for line in lines:
            s = line.strip()
            if s.startswith(">") and s.lstrip(">").strip() in dropset:
                continue
            if s.startswith("- ") and s[2:].strip().rstrip(":：").strip() in dropset:
                skip_code = True
                continue
            if skip_code and s.startswith("`"):
                skip_code = False
                continue
            if s:
                skip_code = False
            out.append(line)
        lines = out
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


@dataclass
class DesignDoc:
    source: str
    path: str
    title: str
    body: str

    @property
    def key(self) -> str:
        return f"{self.source}:{self.path}"


_FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def parse_doc(row: dict[str, str]) -> DesignDoc:
    """Title (EIP frontmatter ``title``, else the first ``# `` heading, else the file name) and body."""
    text = row["text"]
    title = ""
    m = _FRONTMATTER.match(text)
    if m:
        for line in m.group(1).split("\n"):
            if line.startswith("title:"):
                title = line[6:].strip().strip("\"'")
        text = text[m.end():]
    if not title:
        h1 = re.search(r"^# (.+)$", text, re.M)
        if h1 and h1.group(1).strip().casefold() not in GENERIC_HEADINGS:
            title = h1.group(1).strip()
    if not title:
        stem = Path(row["path"]).stem
        title = re.sub(r"^\d+-", "", stem).replace("-", " ").replace("_", " ").strip().capitalize()
    return DesignDoc(row["source"], row["path"], title, text)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ----------------------------------------------------------------------------------------------
# passages and queries


@dataclass
class Passage:
    pid: str
    pool: str  # tldr-en, tldr-de, ..., docs
    item: str  # split key: the command or the document
    text: str  # rerank text: "{title} > {heading}\n{chunk}"
    n: int = 0  # chunk number inside its item


@dataclass
class QueryRec:
    qid: str
    kind: str
    lang: str
    text: str
    item: str
    pool: str
    positives: list[str]
    exclude: list[str] = field(default_factory=list)
    negatives: list[str] = field(default_factory=list)
    split: str = "train"


def rerank_text(title: str, heading: str, text: str) -> str:
    context = " > ".join(p for p in (title, heading) if p)
    return f"{context}\n{text}"


def chunk_passages(pool: str, item: str, title: str, body: str, pid_prefix: str,
                   target_tokens: int) -> list[Passage]:
    chunks = chunk_note(pid_prefix, title, body, target_tokens=target_tokens)
    return [Passage(f"{pid_prefix}#{c.n}", pool, item, rerank_text(title, c.heading, c.text), c.n) for c in chunks
            if c.text.strip()]


_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")


def candidate_sentences(chunk_text: str) -> list[str]:
    """Prose sentences of a chunk usable as inverse-cloze queries (8-40 words, not code or markup)."""
    body = chunk_text.split("\n", 1)[1] if "\n" in chunk_text else chunk_text
    out = []
    in_code = False
    for para in body.split("\n\n"):
        if para.lstrip().startswith("```") or para.lstrip().startswith("~~~"):
            in_code = para.count("```") % 2 == 1 if "```" in para else in_code
            continue
        if in_code or para.lstrip().startswith(("|", "    ", "#", "<")):
            continue
        flat = " ".join(line.strip().lstrip("*-+> ").strip() for line in para.split("\n"))
        for sent in _SENT_SPLIT.split(flat):
            words = sent.split()
            if 8 <= len(words) <= 40 and sum(ch.isalpha() for ch in sent) > 0.6 * len(sent) and "](" not in sent:
                out.append(sent.strip())
    return out


def _is_prose(chunk_text: str) -> bool:
    """A chunk that says what the document is about (not its metadata list or a code block)."""
    return len(candidate_sentences(chunk_text)) >= 2


def remove_sentence(text: str, sentence: str) -> str:
    """``text`` without ``sentence`` (matched across the line breaks the flattening removed)."""
    words = [re.escape(w) for w in sentence.split()]
    pattern = r"[\s*>+-]*".join(words)
    out, n = re.subn(pattern, "", text, count=1)
    return re.sub(r"\n{3,}", "\n\n", out) if n else text


@dataclass
class Corpus:
    passages: dict[str, Passage]
    queries: list[QueryRec]
    stats: dict[str, Any]


def build_corpus(train_dir: Path, cfg: dict[str, Any], say: Say = print) -> Corpus:
    """Parse the sources, render passages, draw the queries of each kind (no mining yet)."""
    rng = random.Random(int(cfg["seed"]))
    quotas: dict[str, Any] = cfg["quotas"]
    target = int(cfg.get("chunk_tokens", 200))
    val_frac = float(cfg.get("validation_fraction", 0.05))
    salt = str(cfg.get("split_salt", "vaultsync-reranker"))

    pages = [parse_tldr(r) for r in read_jsonl(train_dir / "tldr-pages.jsonl")]
    by_lang: dict[str, dict[str, TldrPage]] = defaultdict(dict)
    for p in pages:
        by_lang[p.lang][p.key] = p
    en = by_lang["en"]
    commands_by_name: dict[str, list[str]] = defaultdict(list)
    for key in en:
        commands_by_name[key.split("/", 1)[1]].append(key)

    passages: dict[str, Passage] = {}

    def add_page_passages(page: TldrPage, drop: Sequence[str] = (), variant: str = "") -> list[str]:
        prefix = f"tldr/{page.lang}/{page.key}" + (f"~{variant}" if variant else "")
        if variant == "" and f"{prefix}#0" in passages:
            return [pid for pid in passages if pid.startswith(prefix + "#")]
        out = []
        for ps in chunk_passages(f"tldr-{page.lang}", page.command, page.command, page_body(page, drop), prefix,
                                 target):
            passages[ps.pid] = ps
            out.append(ps.pid)
        return out

    # every English page is a passage (the pool cross-lingual queries search)
    en_pids: dict[str, list[str]] = {key: add_page_passages(p) for key, p in en.items()}

    def same_command(key: str) -> list[str]:
        name = key.split("/", 1)[1]
        return [pid for k in commands_by_name.get(name, []) for pid in en_pids[k]]

    queries: list[QueryRec] = []

    def split_of(item: str) -> str:
        return "val" if stable_unit(item, salt) < val_frac else "train"

    # cross-lingual: X description / example -> English page
    for lang in sorted(by_lang):
        if lang == "en":
            continue
        cap_desc = int(quotas["xl-desc"]["eval_lang" if lang in EVAL_LANGS else "other_lang"])
        cap_ex = int(quotas["xl-example"]["eval_lang" if lang in EVAL_LANGS else "other_lang"])
        keys = sorted(k for k in by_lang[lang] if k in en)
        rng.shuffle(keys)
        nd = ne = 0
        for key in keys:
            page = by_lang[lang][key]
            item = f"tldr:{page.command}"
            if nd < cap_desc and page.description:
                queries.append(QueryRec(f"xl-desc/{lang}/{key}", "xl-desc", lang, " ".join(page.description), item,
                                        "tldr-en", en_pids[key], same_command(key), split=split_of(item)))
                nd += 1
            elif ne < cap_ex and page.examples:
                desc, _ = rng.choice(page.examples)
                queries.append(QueryRec(f"xl-example/{lang}/{key}", "xl-example", lang, desc, item, "tldr-en",
                                        en_pids[key], same_command(key), split=split_of(item)))
                ne += 1
            if nd >= cap_desc and ne >= cap_ex:
                break

    # English inverse cloze on tldr: description / one example -> the page without it
    en_keys = sorted(en)
    rng.shuffle(en_keys)
    n_desc = n_ex = 0
    for key in en_keys:
        page = en[key]
        item = f"tldr:{page.command}"
        if n_desc < int(quotas["en-desc"]) and page.description and page.examples:
            pids = add_page_passages(page, page.description, "nodesc")
            queries.append(QueryRec(f"en-desc/{key}", "en-desc", "en", " ".join(page.description), item, "tldr-en",
                                    pids, same_command(key), split=split_of(item)))
            n_desc += 1
        elif n_ex < int(quotas["en-example"]) and len(page.examples) >= 3:
            desc, _ = rng.choice(page.examples)
            pids = add_page_passages(page, [desc], "noex")
            queries.append(QueryRec(f"en-example/{key}", "en-example", "en", desc, item, "tldr-en", pids,
                                    same_command(key), split=split_of(item)))
            n_ex += 1

    # monolingual non-English: X description -> X page without it; pool = a sample of X pages
    pool_cap = int(quotas["mono-desc"]["pool"])
    for lang in EVAL_LANGS:
        keys = sorted(by_lang[lang])
        rng.shuffle(keys)
        pool_keys = keys[:pool_cap]
        pool_pids = {k: add_page_passages(by_lang[lang][k]) for k in pool_keys}
        n = 0
        for key in pool_keys:
            page = by_lang[lang][key]
            if n >= int(quotas["mono-desc"]["per_lang"]):
                break
            if not page.description or not page.examples:
                continue
            item = f"tldr:{page.command}"
            pids = add_page_passages(page, page.description, "nodesc")
            name = page.command
            excl = [pid for k, ps in pool_pids.items() if k.split("/", 1)[1] == name for pid in ps]
            queries.append(QueryRec(f"mono-desc/{lang}/{key}", "mono-desc", lang, " ".join(page.description), item,
                                    f"tldr-{lang}", pids, excl, split=split_of(item)))
            n += 1

    # design documents
    docs = [parse_doc(r) for r in read_jsonl(train_dir / "design-docs.jsonl")]
    docs.sort(key=lambda d: d.key)
    rng.shuffle(docs)
    docs = docs[: int(quotas["docs"]["documents"])]
    doc_chunks: dict[str, list[Passage]] = {}
    for d in docs:
        prefix = f"doc/{d.source}/{d.path}"
        chunks = chunk_passages("docs", d.key, d.title, d.body, prefix, target)
        chunks = [c for c in chunks if len(c.text) > 80][: int(quotas["docs"]["max_chunks_per_doc"])]
        for c in chunks:
            passages[c.pid] = c
        doc_chunks[d.key] = chunks
    n_title = n_head = n_ict = 0
    ict_per_doc = int(quotas["doc-ict"]["per_doc"])
    for d in docs:
        chunks = doc_chunks[d.key]
        if not chunks:
            continue
        item = f"doc:{d.key}"
        split = split_of(item)
        all_pids = [c.pid for c in chunks]
        lead = next((c for c in chunks if _is_prose(c.text)), chunks[0])
        if n_title < int(quotas["doc-title"]) and len(d.title.split()) >= 2:
            queries.append(QueryRec(f"doc-title/{d.key}", "doc-title", "en", d.title, item, "docs", [lead.pid],
                                    all_pids, split=split))
            n_title += 1
        # specific headings -> the first chunk of their section
        seen_headings: dict[str, list[Passage]] = defaultdict(list)
        for c in chunks:
            head = c.text.split("\n", 1)[0]
            leaf = head.split(" > ")[-1] if " > " in head else ""
            if leaf:
                seen_headings[leaf].append(c)
        heads = [h for h in seen_headings if h.casefold().strip(" :") not in GENERIC_HEADINGS and len(h.split()) >= 2
                 and not re.match(r"^[\d.\s]+$", h)]
        rng.shuffle(heads)
        for h in heads[:2]:
            if n_head >= int(quotas["doc-heading"]):
                break
            secs = seen_headings[h]
            queries.append(QueryRec(f"doc-heading/{d.key}/{h}", "doc-heading", "en", re.sub(r"^[\d.]+\s+", "", h),
                                    item, "docs", [secs[0].pid], [c.pid for c in secs], split=split))
            n_head += 1
        # inverse cloze: a sentence -> its chunk without the sentence
        order = list(range(len(chunks)))
        rng.shuffle(order)
        taken = 0
        for i in order:
            if taken >= ict_per_doc or n_ict >= int(quotas["doc-ict"]["total"]):
                break
            sents = candidate_sentences(chunks[i].text)
            if not sents:
                continue
            sent = rng.choice(sents)
            stripped = remove_sentence(chunks[i].text, sent)
            if stripped == chunks[i].text or len(stripped.split()) < 30:
                continue
            pid = chunks[i].pid + "~ict"
            passages[pid] = Passage(pid, "docs-ict", item, stripped, chunks[i].n)
            neighbours = [c.pid for c in chunks if abs(c.n - chunks[i].n) <= 1]
            queries.append(QueryRec(f"doc-ict/{d.key}/{i}", "doc-ict", "en", sent, item, "docs", [pid],
                                    neighbours, split=split))
            taken += 1
            n_ict += 1

    stats: dict[str, Any] = {
        "passages": len(passages),
        "queries": len(queries),
        "by_kind": dict(sorted(_count(q.kind for q in queries).items())),
        "by_lang": dict(sorted(_count(q.lang for q in queries).items())),
        "validation": sum(q.split == "val" for q in queries),
        "pools": dict(sorted(_count(p.pool for p in passages.values()).items())),
    }
    say(f"corpus: {stats['queries']} queries, {stats['passages']} passages; {stats['by_kind']}")
    return Corpus(passages, queries, stats)


def _count(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for v in values:
        out[v] += 1
    return dict(out)


# ----------------------------------------------------------------------------------------------
# hard-negative mining with the project's own legs


class Bm25Pool:
    """An in-memory index with the search pipeline's BM25 leg (FTS5 trigram, same weights and passes)."""

    def __init__(self, items: Sequence[tuple[int, str]]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE TABLE chunks(rowid INTEGER PRIMARY KEY, norm TEXT)")
        self.db.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(title, heading, text, tokenize='trigram')")
        for rowid, text in items:
            head, _, body = text.partition("\n")
            parts = head.split(" > ", 1)
            title, heading = parts[0], parts[1] if len(parts) > 1 else ""
            norm = unicodedata.normalize("NFKC", text).casefold()
            self.db.execute("INSERT INTO chunks(rowid, norm) VALUES (?, ?)", (rowid, norm))
            self.db.execute("INSERT INTO chunks_fts(rowid, title, heading, text) VALUES (?, ?, ?, ?)",
                            (rowid, unicodedata.normalize("NFKC", title).casefold(),
                             unicodedata.normalize("NFKC", heading).casefold(),
                             unicodedata.normalize("NFKC", body).casefold()))
        self.db.commit()

    def search(self, text: str, limit: int) -> list[int]:
        try:
            q = parse_query(text)
        except QueryError:
            return []
        return [c.rowid for c in bm25_candidates(self.db, q, limit)]


def rrf_fuse(lists: Sequence[Sequence[int]], k: int = 60) -> list[int]:
    score: dict[int, float] = defaultdict(float)
    for ranking in lists:
        for rank, x in enumerate(ranking):
            score[x] += 1.0 / (k + rank + 1)
    return [x for x, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))]


def _pool_passages(corpus: Corpus, pool_ids: list[str], queries: list[QueryRec]) -> tuple[list[str], int]:
    """The pool's passages (inverse-cloze chunks left out) plus the queries' own positives
    missing from it (tldr "nodesc"/"noex" variants), and how many came from the pool."""
    base = [pid for pid in pool_ids if corpus.passages[pid].pool != "docs-ict"]
    base_set = set(base)
    extra = sorted({pid for q in queries for pid in q.positives if pid not in base_set})
    return base + extra, len(base)


def mine_negatives(corpus: Corpus, embed_queries: Callable[[list[str]], np.ndarray],
                   embed_passages: Callable[[list[str]], np.ndarray], cfg: dict[str, Any], say: Say = print,
                   vector_cache: Path | None = None) -> dict[str, Any]:
    """Fill ``negatives`` of every query: BM25 + dense candidates of its pool, fused, minus positives/exclusions.

    A query's pool is its ``pool`` plus, for inverse-cloze queries, the cloze passage itself
    (it is the positive). Returns mining statistics (how often each leg ranked the positive first).
    """
    depth = int(cfg.get("mine_depth", 30))
    keep = int(cfg.get("negatives_kept", 20))
    rng = random.Random(int(cfg["seed"]) + 1)
    pools: dict[str, list[str]] = defaultdict(list)
    for pid, p in corpus.passages.items():
        pool = "docs" if p.pool == "docs-ict" else p.pool
        if p.pool == "docs-ict" or "~" not in pid:
            pools[pool].append(pid)
    stats: dict[str, Any] = {"pools": {k: len(v) for k, v in pools.items()}, "positive_top1": {}}
    by_pool: dict[str, list[QueryRec]] = defaultdict(list)
    for q in corpus.queries:
        by_pool[q.pool].append(q)
    for pool, qs in sorted(by_pool.items()):
        # tldr "nodesc"/"noex" variants replace their page in the pool for their own query only
        pids, n_base = _pool_passages(corpus, pools[pool], qs)
        index = {pid: i for i, pid in enumerate(pids)}
        texts = [corpus.passages[pid].text for pid in pids]
        say(f"mining {pool}: {len(qs)} queries over {n_base} passages (+{len(pids) - n_base} cloze variants)")
        vecs = _cached_vectors(vector_cache, f"p-{pool}", texts, embed_passages)
        qvecs = _cached_vectors(vector_cache, f"q-{pool}", [q.text for q in qs], embed_queries)
        bm = Bm25Pool(list(enumerate(texts)))
        own_variant = set(pids[n_base:])
        top1 = {"bm25": 0, "dense": 0, "fused": 0}
        base_n = n_base
        for qi, q in enumerate(qs):
            allowed_extra = {index[pid] for pid in q.positives if pid in own_variant}
            sims = vecs[:base_n] @ qvecs[qi]
            if allowed_extra:
                ex = sorted(allowed_extra)
                sims = np.concatenate([sims, vecs[ex] @ qvecs[qi]])
                ids = list(range(base_n)) + ex
            else:
                ids = list(range(base_n))
            order = np.argsort(-sims)[:depth]
            dense = [ids[i] for i in order]
            bm25 = [i for i in bm.search(q.text, depth) if i < base_n or i in allowed_extra]
            fused = rrf_fuse([dense, bm25])
            pos = {index[pid] for pid in q.positives if pid in index}
            for name, ranking in (("bm25", bm25), ("dense", dense), ("fused", fused)):
                if ranking and ranking[0] in pos:
                    top1[name] += 1
            banned = pos | {index[pid] for pid in q.exclude if pid in index}
            negs = [pids[i] for i in fused if i not in banned and i < base_n][:keep]
            # two random passages of the pool: the easy tail the pipeline also hands over
            for _ in range(2):
                r = rng.randrange(base_n)
                if r not in banned and pids[r] not in negs:
                    negs.append(pids[r])
            q.negatives = negs
        stats["positive_top1"][pool] = {k: round(v / max(1, len(qs)), 3) for k, v in top1.items()}
    return stats


def first_stage_rankings(corpus: Corpus, only: set[str], embed_queries: Callable[[list[str]], np.ndarray],
                         embed_passages: Callable[[list[str]], np.ndarray], cfg: dict[str, Any],
                         vector_cache: Path | None = None, top: int = 20) -> dict[str, list[str]]:
    """The first stage's top ``top`` for the queries in ``only``: BM25 + dense fused by RRF, as in mining,
    with the un-clozed originals (``exclude`` minus ``positives``) removed, as they do not exist for the query.

    Pools are rebuilt exactly as :func:`mine_negatives` builds them, so the vector cache is reused.
    """
    depth = int(cfg.get("mine_depth", 30))
    pools: dict[str, list[str]] = defaultdict(list)
    for pid, p in corpus.passages.items():
        pool = "docs" if p.pool == "docs-ict" else p.pool
        if p.pool == "docs-ict" or "~" not in pid:
            pools[pool].append(pid)
    by_pool: dict[str, list[QueryRec]] = defaultdict(list)
    for q in corpus.queries:
        by_pool[q.pool].append(q)
    out: dict[str, list[str]] = {}
    for pool, qs in sorted(by_pool.items()):
        if not any(q.qid in only for q in qs):
            continue
        pids, n_base = _pool_passages(corpus, pools[pool], qs)
        index = {pid: i for i, pid in enumerate(pids)}
        texts = [corpus.passages[pid].text for pid in pids]
        vecs = _cached_vectors(vector_cache, f"p-{pool}", texts, embed_passages)
        qvecs = _cached_vectors(vector_cache, f"q-{pool}", [q.text for q in qs], embed_queries)
        bm = Bm25Pool(list(enumerate(texts)))
        base_n = n_base
        for qi, q in enumerate(qs):
            if q.qid not in only:
                continue
            own = {index[pid] for pid in q.positives if pid in index and index[pid] >= base_n}
            ids = list(range(base_n)) + sorted(own)
            sims = vecs[ids] @ qvecs[qi]
            dense = [ids[i] for i in np.argsort(-sims)[:depth]]
            bm25 = [i for i in bm.search(q.text, depth) if i < base_n or i in own]
            gone = {index[pid] for pid in q.exclude if pid in index} - {index[pid] for pid in q.positives}
            out[q.qid] = [pids[i] for i in rrf_fuse([dense, bm25]) if i not in gone][:top]
    return out


def _cached_vectors(cache_dir: Path | None, name: str, texts: list[str],
                    fn: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = cache_dir / f"{name}-{digest}.npy" if cache_dir else None
    if path is not None and path.is_file():
        return np.load(path)
    vecs = np.asarray(fn(texts), np.float32)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
    return vecs


# ----------------------------------------------------------------------------------------------
# persistence


def save_corpus(corpus: Corpus, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    used = {pid for q in corpus.queries for pid in (*q.positives, *q.negatives)}
    with (folder / "passages.jsonl").open("w", encoding="utf-8") as fh:
        for pid in sorted(used):
            fh.write(json.dumps(asdict(corpus.passages[pid]), ensure_ascii=False) + "\n")
    with (folder / "groups.jsonl").open("w", encoding="utf-8") as fh:
        for q in corpus.queries:
            fh.write(json.dumps(asdict(q), ensure_ascii=False) + "\n")
    (folder / "stats.json").write_text(json.dumps(corpus.stats, indent=2), encoding="utf-8")


def load_corpus(folder: Path) -> Corpus:
    passages = {r["pid"]: Passage(**r) for r in read_jsonl(folder / "passages.jsonl")}
    queries = [QueryRec(**r) for r in read_jsonl(folder / "groups.jsonl")]
    stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    return Corpus(passages, queries, stats)


def training_hashes(corpus: Corpus) -> np.ndarray:
    """Sorted unique 64-bit hashes (:func:`text_hash`) of every query and every passage in the groups."""
    values: set[int] = set()
    used = {pid for q in corpus.queries for pid in (*q.positives, *q.negatives)}
    for q in corpus.queries:
        values.add(text_hash(q.text))
    for pid in used:
        text = corpus.passages[pid].text
        values.add(text_hash(text))
    return np.array(sorted(values), dtype=np.uint64)

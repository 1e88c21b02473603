"""A QA vault for the relevance model: English passages as notes, questions in 12+ languages as queries.

    python -m training.relevance.dataset --qa ../shared/train/qa --out /tmp/relevance-data

Writes ``vault/**.md`` and ``train.jsonl`` / ``heldout.jsonl`` in the evaluation harness's
format (``{"id", "query", "relevant", "lang", "category", "scope"?}``), split by article title
(:func:`training.splits.held_out`), from ``../shared/train/qa`` only:

* notes: the English paragraphs of SQuAD 2.0 dev (CS224N half) and XQuAD (with ``--many-note-languages``,
  a third of XQuAD's articles in English and the others each in one of its 11 other languages:
  :func:`note_language`), the Molweni chats and the Skeptics Stack Exchange answers; one note per
  passage, one folder per article.
* ``gold``: a question with the note it was written on (XQuAD in all 12 languages).
* ``impossible``: SQuAD 2.0 / Molweni unanswerable questions: nothing in the vault is relevant
  (a few may be answered by another paragraph: noisy, as the README says).
* ``off-scope``: an answerable question searched in another article's folder: nothing relevant.
* ``off-scope-near``: the same, in the folder of its own collection whose words overlap the question
  most (IDF-weighted): a scope that looks right but does not hold the answer, as a question about
  one conversation asked in another does.
* ``off-vault``: JSQuAD, CMRC 2018, DRCD and ARCD questions, whose passages are not in the vault.
* ``off-topic``: what a user types that no vault of this kind answers: tldr-pages task lines in 13
  languages (``../shared/train/tldr-pages.jsonl``, commands outside the relevance background:
  :func:`training.relevance.background.background_command`) and made-up words in five scripts.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training.relevance.background import background_command
from training.splits import held_out

NOTE_SOURCES = ("squad2_en_dev_cs224n", "xquad", "molweni_test", "stackexchange_skeptics")
OFF_VAULT = ("jsquad", "cmrc2018", "drcd", "arcd")
PER_OFF_VAULT = 150


# XQuAD's articles are parallel in 12 languages: a third keep English notes, the others are written in one
# of the 11 others (by the title's hash), so that questions meet notes in every pair of languages
XQUAD_LANGS = ("ar", "de", "el", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")


def note_language(title: str, many: bool = True) -> str:
    """The language of an XQuAD article's notes: English, or (``many``) English for a third of the titles
    and one of :data:`XQUAD_LANGS` for the others (stable: a hash of the title)."""
    if not many:
        return "en"
    h = int(hashlib.sha1(title.encode()).hexdigest(), 16)
    return "en" if h % 3 == 0 else XQUAD_LANGS[h // 3 % len(XQUAD_LANGS)]


def read(qa: Path, name: str) -> list[dict[str, Any]]:
    with gzip.open(qa / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:60] or hashlib.sha1(text.encode()).hexdigest()[:10]


def build(qa: Path, out: Path, seed: int = 7, many_languages: bool = False) -> dict[str, int]:
    """Write the vault and the two query files under ``out``; returns counts by kind. ``many_languages``:
    XQuAD's notes in 12 languages (:func:`note_language`), not in English only."""
    rng = random.Random(seed)
    note_of: dict[str, str] = {}  # passage text → note path
    folder_of: dict[str, str] = {}  # title → folder
    noted_of: dict[str, str] = {}  # XQuAD id → the passage in its article's note language
    rows_by_source = {name: read(qa, name) for name in NOTE_SOURCES}
    for r in rows_by_source["xquad"]:
        if r["lang"] == note_language(r["title"], many_languages):
            noted_of[r["id"]] = r["passage"]
    vault = out / "vault"
    per_folder: dict[str, int] = defaultdict(int)
    for name, rows in rows_by_source.items():
        for r in rows:
            if r["lang"] != (note_language(r["title"], many_languages) if name == "xquad" else "en") \
                    or r["passage"] in note_of or (name.startswith("stackexchange") and not r["answerable"]):
                continue  # a Skeptics note is an answer under its own question
            group = "skeptics" if name.startswith("stackexchange") else "molweni" if name.startswith("molweni") else "squad"
            folder = folder_of.setdefault(r["title"], f"{group}/{slug(r['title'].rsplit('/', 1)[-1])}")
            path = f"{folder}/p{per_folder[folder]:03d}.md"
            per_folder[folder] += 1
            note_of[r["passage"]] = path
            title = r["title"].replace("_", " ") if group == "squad" else r["query"] if group == "skeptics" else r["title"]
            text = f"---\ntitle: {json.dumps(title, ensure_ascii=False)}\ntags: [qa]\n---\n{r['passage'].strip()}\n"
            (vault / path).parent.mkdir(parents=True, exist_ok=True)
            (vault / path).write_text(text, encoding="utf-8")
    queries: dict[str, list[dict[str, Any]]] = {"train": [], "heldout": []}
    counts: dict[str, int] = defaultdict(int)
    folders = sorted(set(folder_of.values()))

    def add(r: dict[str, Any], kind: str, relevant: list[str], scope: str | None = None) -> None:
        side = "heldout" if held_out(r["title"]) else "train"
        q = {"id": f"{kind}:{r['id']}:{r['lang']}", "query": r["query"], "relevant": relevant, "lang": r["lang"],
             "category": kind}
        if scope:
            q["scope"] = scope + "/"
        queries[side].append(q)

    nearest = _nearest_folder(note_of)
    for name, rows in rows_by_source.items():
        for r in rows:
            passage = noted_of.get(r["id"], r["passage"]) if name == "xquad" else r["passage"]
            if r["kind"] == "gold" and passage in note_of:
                add(r, "gold", [note_of[passage]])
                here = note_of[passage].rsplit("/", 1)[0]
                if rng.random() < 0.25:  # the same question where it has no answer
                    add(r, "off-scope", [], rng.choice([f for f in folders if f != here and f.startswith("squad")]))
                near = nearest(r["query"], here)
                if near and rng.random() < 0.25:
                    add(r, "off-scope-near", [], near)
            elif r["kind"] == "squad2_impossible":
                add(r, "impossible", [])
    for name in OFF_VAULT:
        rows = read(qa, name)
        for r in rng.sample(rows, min(PER_OFF_VAULT, len(rows))):
            add(r, "off-vault", [])
    for r in off_topic(qa.parent / "tldr-pages.jsonl", rng):
        add(r, "off-topic", [])
    for side, rows in queries.items():
        rng.shuffle(rows)
        rows[:] = _sample(rows, SAMPLE[side])
        (out / f"{side}.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in rows),
                                           encoding="utf-8")
        for q in rows:
            counts[f"{side}:{q['category']}"] += 1
    counts["notes"] = len(note_of)
    return dict(counts)


SAMPLE = {"train": {"gold": 2400, "off-scope": 700, "off-scope-near": 500, "impossible": 500, "off-vault": 400,
                    "off-topic": 500},
          "heldout": {"gold": 1600, "off-scope": 450, "off-scope-near": 350, "impossible": 350, "off-vault": 400,
                      "off-topic": 400}}
TASK_LINE = re.compile(r"^- (.{8,120}?)[:：]\s*$", re.M)
# made-up words: (alphabet, shortest, longest word); Latin filler words as a sixth
SCRIPTS = (("abcdefghijklmnopqrstuvwxyz", 3, 9), ("абвгдежзиклмнопрстуфхцчшыэюя", 3, 9),
           ("".join(map(chr, range(0x3041, 0x3094))), 2, 6), ("".join(map(chr, range(0x4E00, 0x4E00 + 3000))), 2, 4),
           ("".join(map(chr, range(0xAC00, 0xAC00 + 2000))), 2, 4))
FILLER = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore "
          "et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi").split()


def off_topic(tldr: Path, rng: random.Random, tasks: int = 1500, made_up: int = 500) -> list[dict[str, Any]]:
    """Off-topic queries as rows (``id``, ``query``, ``lang``, ``title`` for the split): ``tasks`` tldr task
    lines and ``made_up`` strings of made-up or filler words."""
    with tldr.open(encoding="utf-8") as f:  # lines end at "\n" only: texts hold U+2028
        pages = [json.loads(line) for line in f if line.strip()]
    lines = [(p, m.group(1)) for p in pages if not background_command(p["command"])
             for m in TASK_LINE.finditer(p["text"])]
    out = [{"id": hashlib.sha1(f"{p['lang']}:{p['command']}:{t}".encode()).hexdigest()[:16], "query": t,
            "lang": p["lang"], "title": f"tldr:{p['command']}"} for p, t in rng.sample(lines, tasks)]
    for i in range(made_up):
        if i % 6 == 5:
            words = rng.sample(FILLER, rng.randint(2, 6))
        else:
            alphabet, lo, hi = SCRIPTS[i % 6]
            words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi))) for _ in range(rng.randint(1, 4))]
        text = " ".join(words)
        out.append({"id": f"made-up-{i}", "query": text, "lang": "xx", "title": text})
    return out


NEAR_GROUPS = ("squad", "molweni")  # collections of many folders on one kind of text
WORD = re.compile(r"\w{4,}")


def _nearest_folder(note_of: dict[str, str]) -> Callable[[str, str], str | None]:
    """``nearest(question, its folder)``: the other folder of the same collection whose words cover the
    question's most, each word weighted by its IDF over folders; None outside :data:`NEAR_GROUPS` or
    when no folder shares a word."""
    words: dict[str, set[str]] = defaultdict(set)
    for passage, path in note_of.items():
        words[path.rsplit("/", 1)[0]].update(w.casefold() for w in WORD.findall(passage))
    df: dict[str, int] = defaultdict(int)
    for vocab in words.values():
        for w in vocab:
            df[w] += 1

    def nearest(question: str, here: str) -> str | None:
        group = here.split("/", 1)[0]
        if group not in NEAR_GROUPS:
            return None
        asked = {w.casefold() for w in WORD.findall(question)}
        scored = [(sum(math.log(len(words) / df[w]) for w in asked & vocab), folder)
                  for folder, vocab in words.items() if folder != here and folder.startswith(group + "/")]
        best = max(scored, default=(0.0, None))
        return best[1] if best[0] > 0 else None

    return nearest


def _sample(rows: list[dict[str, Any]], quota: dict[str, int]) -> list[dict[str, Any]]:
    """The first ``quota[kind]`` rows of each kind (rows are shuffled), order kept."""
    taken: dict[str, int] = defaultdict(int)
    out = []
    for q in rows:
        if taken[q["category"]] < quota.get(q["category"], 0):
            taken[q["category"]] += 1
            out.append(q)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qa", type=Path, default=Path("../shared/train/qa"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--many-note-languages", action="store_true",
                    help="XQuAD's notes in its 12 languages, not in English only (tried at stop 59; not shipped)")
    args = ap.parse_args()
    print(json.dumps(build(args.qa, args.out, many_languages=args.many_note_languages), indent=1))


if __name__ == "__main__":
    main()

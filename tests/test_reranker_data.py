"""The reranker's training data: inputs from shared/train only, no evaluation text in the pairs, helpers.

Real-data checks skip where ``../shared/train`` or ``../shared/eval`` is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vaultsync.index.chunking import chunk_note
from training.reranker import calibration as cal
from training.reranker import data as D
from training.reranker import vocab as V

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "training" / "reranker"
SHARED = ROOT.parent / "shared"
TRAIN = SHARED / "train"
EVAL = SHARED / "eval"


def _manifest() -> dict:
    return json.loads((RECIPE / "data-manifest.json").read_text(encoding="utf-8"))


# -- the data manifest ----------------------------------------------------------------------------


def test_manifest_inputs_are_under_shared_train_with_licences() -> None:
    inputs = _manifest()["inputs"]
    assert {Path(i["path"]).name for i in inputs} == {"tldr-pages.jsonl", "design-docs.jsonl"}
    for entry in inputs:
        resolved = (ROOT / entry["path"]).resolve()
        assert resolved.parent == TRAIN.resolve(), entry["path"]
        assert "eval" not in Path(entry["path"]).parts
        assert len(entry["sha256"]) == 64 and entry["licence"] and entry["attribution"]


@pytest.mark.skipif(not TRAIN.is_dir(), reason="../shared/train is absent")
def test_manifest_inputs_match_the_files() -> None:
    from vaultsync.models.manifest import sha256_file

    for entry in _manifest()["inputs"]:
        assert sha256_file(ROOT / entry["path"]) == entry["sha256"], entry["path"]


def test_training_code_never_reads_the_evaluation_sets() -> None:
    sources = [RECIPE / "recipe.py", RECIPE / "train_torch.py", RECIPE / "torch_model.py",
               *sorted(RECIPE.glob("*.py"))]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert "shared/eval" not in text and '"eval"' not in text and "queries.jsonl" not in text, path
    cfg = json.loads((RECIPE / "recipe.json").read_text(encoding="utf-8"))
    assert Path(cfg["train_dir"]).parts[-2:] == ("shared", "train")


def test_nothing_under_vaultsync_imports_torch() -> None:
    for path in (ROOT / "vaultsync").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import torch" not in text and "from torch" not in text, path


def _training_hashes() -> set[int]:
    hashes = np.load(RECIPE / "training-hashes.npy")
    assert hashes.dtype == np.uint64 and len(hashes) == _manifest()["outputs"]["hashes"]["count"]
    return {int(h) for h in hashes}


def test_training_hash_file_matches_the_manifest() -> None:
    assert len(_training_hashes()) > 10_000


@pytest.mark.skipif(not EVAL.is_dir(), reason="../shared/eval is absent")
def test_no_evaluation_query_or_chunk_is_in_the_training_pairs() -> None:
    trained = _training_hashes()
    found = []
    for ds in sorted(p for p in EVAL.iterdir() if (p / "queries.jsonl").is_file()):
        for line in (ds / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)["query"]
                if D.text_hash(q) in trained:
                    found.append(q)
        for note in sorted((ds / "vault").rglob("*.md")):
            text = note.read_text(encoding="utf-8")
            if text.startswith("---\n") and "\n---\n" in text[4:]:
                text = text[4:].split("\n---\n", 1)[1]
            for c in chunk_note(note.name, note.stem, text):
                rendered = D.rerank_text(note.stem, c.heading, c.text)
                if D.text_hash(rendered) in trained or D.text_hash(c.text) in trained:
                    found.append(c.id)
    assert not found, found[:5]


@pytest.mark.skipif(not (EVAL.is_dir() and TRAIN.is_dir()), reason="../shared/eval or ../shared/train is absent")
def test_no_evaluation_line_or_query_occurs_in_the_training_inputs() -> None:
    """Stronger than the pair hashes: no eval query and no eval line of 40+ characters is a line of any input."""
    train_lines: set[str] = set()
    for entry in _manifest()["inputs"]:
        with (ROOT / entry["path"]).open(encoding="utf-8") as fh:
            for row in fh:
                for line in json.loads(row)["text"].split("\n"):
                    n = D.norm_text(line)
                    if len(n) >= 20:
                        train_lines.add(n)
    hits = []
    for ds in sorted(p for p in EVAL.iterdir() if (p / "queries.jsonl").is_file()):
        for line in (ds / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip() and D.norm_text(json.loads(line)["query"]) in train_lines:
                hits.append(json.loads(line)["query"])
        for note in (ds / "vault").rglob("*.md"):
            for line in note.read_text(encoding="utf-8").split("\n"):
                n = D.norm_text(line)
                if len(n) >= 40 and n in train_lines:
                    hits.append(n)
    assert not hits, hits[:5]


# -- helpers -------------------------------------------------------------------------------------

_PAGE = {"lang": "de", "platform": "common", "command": "tar", "text": (
    "# tar\n\n> Archivierungswerkzeug.\n> Weitere Informationen: <https://www.gnu.org/software/tar>.\n\n"
    "- Erstelle ein Archiv aus Dateien:\n\n`tar cf {{ziel.tar}} {{datei1 datei2}}`\n\n"
    "- Entpacke ein Archiv:\n\n`tar xf {{quelle.tar}}`\n")}


def test_parse_tldr_page() -> None:
    page = D.parse_tldr(_PAGE)
    assert page.key == "common/tar"
    assert page.description == ["Archivierungswerkzeug."]
    assert page.examples == [("Erstelle ein Archiv aus Dateien", "tar cf {{ziel.tar}} {{datei1 datei2}}"),
                             ("Entpacke ein Archiv", "tar xf {{quelle.tar}}")]
    body = D.page_body(page, ["Entpacke ein Archiv"])
    assert "# tar" not in body and "Entpacke" not in body and "tar xf" not in body and "tar cf" in body


def test_inverse_cloze_removes_the_query_sentence() -> None:
    text = ("Doc > Design\nThe registry keeps every package version forever. Deleting a version would break "
            "builds that pinned it, so yanking only hides it from new resolutions. Mirrors copy the index hourly.")
    sents = D.candidate_sentences(text)
    assert "Deleting a version would break builds that pinned it, so yanking only hides it from new resolutions." in sents
    out = D.remove_sentence(text, sents[0])
    assert "Deleting a version" not in out and "Mirrors copy" in out and out.startswith("Doc > Design\n")


def test_split_is_deterministic_and_by_item() -> None:
    a = [D.stable_unit(f"tldr:cmd{i}", "s") for i in range(2000)]
    assert a == [D.stable_unit(f"tldr:cmd{i}", "s") for i in range(2000)]
    assert 0.03 < np.mean(np.array(a) < 0.05) < 0.07


def test_bm25_pool_uses_the_pipeline_leg() -> None:
    pool = D.Bm25Pool([(0, "tar\nCreate an archive from files"), (1, "ping\nSend packets to network hosts"),
                       (2, "ssh\nConnect to a remote server")])
    assert pool.search("send network packets", 3)[0] == 1
    assert pool.search("", 3) == []


def test_text_hash_normalises() -> None:
    assert D.text_hash("Ｈello   World") == D.text_hash("hello world")
    assert D.text_hash("hello world") != D.text_hash("hello worlds")


def test_pruned_tokenizer_json_renumbers() -> None:
    pieces = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0], ["\u2581a", -1.0], ["\u2581b", -2.0],
              ["\u2581ab", -3.0], ["<mask>", 0.0]]
    src = {"model": {"type": "Unigram", "unk_id": 3, "vocab": pieces},
           "added_tokens": [{"id": 7, "content": "<mask>"}],
           "post_processor": {"special_tokens": {"<s>": {"ids": [0]}, "</s>": {"ids": [2]}}}}
    keep = V.select_pieces([(p, s) for p, s in pieces], used=[6], size=0, scripts=["LATIN"])
    assert keep == [0, 1, 2, 3, 4, 5, 6, 7]  # specials, used, all single characters
    out = V.pruned_tokenizer_json(src, [0, 1, 2, 3, 5, 7])
    assert [p for p, _ in out["model"]["vocab"]] == ["<s>", "<pad>", "</s>", "<unk>", "\u2581b", "<mask>"]
    assert out["added_tokens"][0]["id"] == 5 and out["model"]["unk_id"] == 3
    assert V.piece_in_scripts("\u2581Привет", ["CYRILLIC"]) and not V.piece_in_scripts("\u2581مرحبا", ["LATIN"])


# -- calibration ---------------------------------------------------------------------------------


def test_platt_recovers_parameters_and_is_monotone() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, 20000)
    y = (rng.random(20000) < cal.sigmoid(0.7 * x - 1.5)).astype(float)
    a, b = cal.fit_platt(x, y)
    assert abs(a - 0.7) < 0.05 and abs(b + 1.5) < 0.1
    p = cal.sigmoid(a * np.sort(x) + b)
    assert np.all(np.diff(p) >= 0)
    assert cal.ece(cal.sigmoid(a * x + b), y) < 0.02
    assert cal.ece(cal.sigmoid(x), y) > cal.ece(cal.sigmoid(a * x + b), y)


def test_platt_converges_on_large_logits() -> None:
    """Raw logits of a freshly trained head can span ±100: plain Newton from (1, 0) diverged there."""
    rng = np.random.default_rng(1)
    x = rng.normal(0, 3, 20000)
    y = (rng.random(20000) < cal.sigmoid(0.7 * x - 1.5)).astype(float)
    a, b = cal.fit_platt(40 * x, y)
    assert abs(40 * a - 0.7) < 0.05 and abs(b + 1.5) < 0.1
    assert np.all(np.isfinite(cal.sigmoid(np.array([-1e4, 1e4]))))


def test_threshold_keeps_the_recall_target() -> None:
    rng = np.random.default_rng(1)
    probs = rng.random(1000)
    labels = (rng.random(1000) < probs).astype(float)
    t = cal.choose_threshold(probs, labels, 0.95)
    eff = cal.cutoff_effect(probs, labels, t)
    assert eff["positives_kept"] >= 0.95 and eff["negatives_dropped"] > 0.2
    assert cal.choose_threshold(probs, labels, 1.0) == pytest.approx(probs[labels > 0.5].min())


# -- rank fusion with the first stage ---------------------------------------------------------------


def test_rrf_order_interpolates_between_the_two_rankings() -> None:
    from training.reranker.fusion import rrf_order

    scores = np.array([0.1, 0.2, 0.9, 0.3])  # reranker prefers 2, 3, 1, 0; first stage is 0, 1, 2, 3
    assert list(rrf_order(scores, 1.0)) == [2, 3, 1, 0]
    assert list(rrf_order(scores, 0.0)) == [0, 1, 2, 3]
    assert rrf_order(scores, 0.5)[0] in (0, 2)


def test_evaluate_fusion_on_synthetic_queries() -> None:
    from training.reranker import fusion

    passages = {f"p{i}": D.Passage(f"p{i}", "pool", "item", f"text {i}") for i in range(5)}
    queries = [D.QueryRec("q1", "doc-ict", "en", "query one", "item1", "pool", ["p3"]),
               D.QueryRec("q2", "doc-ict", "en", "query two", "item2", "pool", ["p0"]),
               D.QueryRec("q3", "doc-ict", "en", "query three", "item3", "pool", ["p4"])]
    first = {"q1": ["p0", "p1", "p2", "p3"], "q2": ["p0", "p1", "p2", "p3"], "q3": ["p0", "p1"]}
    corpus = D.Corpus(passages, queries, {})

    def score(_q: str, texts: list[str]) -> np.ndarray:
        return np.array([1.0 if t == "text 3" else 0.0 for t in texts])

    out = fusion.evaluate_fusion(corpus, queries, first, score)
    assert out["evaluated"] == 2 and out["positive_in_top20"] == pytest.approx(2 / 3, abs=1e-3)
    assert out["first_stage"]["mrr@10"] == pytest.approx((1 / 4 + 1) / 2)
    assert out["reranker"]["mrr@10"] == pytest.approx((1 + 1 / 2) / 2)

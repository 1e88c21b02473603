"""vaultsync's own cross-encoder reranker (models/reranker/, ADR-0030): files, golden probe, calibration, batching."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vaultsync.models.cross_encoder import CrossEncoder
from vaultsync.models.manifest import sha256_file

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "reranker" / "vaultsync-reranker-ml4"

pytestmark = pytest.mark.skipif(not (MODEL / "model.onnx").is_file(), reason="the trained reranker is not in this checkout")


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads((MODEL / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ce() -> CrossEncoder:
    return CrossEncoder.load(MODEL, threads=2)


def test_files_match_the_manifest_and_fit_in_the_repository(manifest: dict) -> None:
    total = 0
    for name, meta in manifest["files"].items():
        path = MODEL / name
        assert path.stat().st_size == meta["bytes"], name
        assert sha256_file(path) == meta["sha256"], name
        total += meta["bytes"]
    assert total <= 40 * 1024 * 1024


def test_standard_cross_encoder_interface(ce: CrossEncoder) -> None:
    assert ce.name == "vaultsync-reranker-ml4"
    assert set(ce.input_names) <= {"input_ids", "attention_mask", "token_type_ids"}
    assert {"input_ids", "attention_mask"} <= set(ce.input_names)
    settings = json.loads((MODEL / "vaultsync.json").read_text(encoding="utf-8"))
    assert ce.max_length == settings["max_length"] and ce.max_query_tokens == settings["max_query_tokens"]
    assert 0.0 < settings["threshold"] < 1.0 and settings["calibrated"] is True
    ids, types = ce.encode_pair("query", "passage")
    assert ids[0] == 0 and ids.count(2) == 3 and set(types) == {0}  # <s> q </s></s> p </s>


def test_golden_probe(ce: CrossEncoder, manifest: dict) -> None:
    """The shipped INT8 graph reproduces the float32 export's calibrated scores."""
    probe = manifest["probe"]
    tol = float(probe["tolerance"])
    for item in probe["items"]:
        got = float(ce.score(item["query"], [item["passage"]])[0])
        assert abs(got - item["expected"]) <= tol, (item["query"], got, item["expected"])


# The shipped checkpoint is the step-800 one of an interrupted run (model card): it does not yet
# order these clear-cut pairs. Strict, so the test flips to a failure once a model that does ships.
WEAK = pytest.mark.xfail(strict=True, reason="step-800 checkpoint: ranking quality below the first stage (model card)")


@WEAK
def test_probe_ranks_each_relevant_passage_first(manifest: dict) -> None:
    by_query: dict[str, dict[bool, float]] = {}
    for item in manifest["probe"]["items"]:
        by_query.setdefault(item["query"], {})[bool(item["relevant"])] = item["expected"]
    assert all(scores[True] > scores[False] for scores in by_query.values())


def test_calibration_is_monotone(manifest: dict) -> None:
    calib = manifest["calibration"]
    assert calib["a"] > 0  # the folded Platt map preserves every ordering
    after, before = calib["held_out"]["after"], calib["held_out"]["before"]
    assert after["ece"] <= before["ece"] + 1e-9 and after["log_loss"] <= before["log_loss"] + 1e-9
    bins = [b for b in calib["held_out"]["reliability"] if b["n"] >= 30]
    rates = [b["pos_rate"] for b in bins]
    assert len(bins) >= 3
    assert all(later >= earlier - 0.05 for earlier, later in zip(rates, rates[1:], strict=False)), rates
    assert all(abs(b["mean_p"] - b["pos_rate"]) < 0.05 for b in bins if b["n"] >= 100), bins  # usable as probabilities


@WEAK
def test_scores_rise_with_relevance(ce: CrossEncoder) -> None:
    q = "how long are the nightly database backups kept?"
    passages = [
        "Backups > Retention\nNightly snapshots of the database are kept for thirty days, weekly ones for a year.",
        "Backups > Storage\nDatabase snapshots are stored in a versioned bucket in another region.",
        "Team > Onboarding\nNew members get a laptop on their first day and pair with a mentor for two weeks.",
    ]
    s = ce.score(q, passages)
    assert s[0] > s[1] > s[2]
    assert np.all((s >= 0) & (s <= 1))


def test_cut_off_keeps_the_relevant_passage(ce: CrossEncoder) -> None:
    threshold = json.loads((MODEL / "vaultsync.json").read_text(encoding="utf-8"))["threshold"]
    s = ce.score("Wie erstelle ich ein komprimiertes Archiv eines Ordners?", [
        "tar\nArchiving utility.\n\n- Create a gzip-compressed archive from a directory:\n\n`tar czf out.tar.gz dir`",
        "Release notes > 2.3\nThe settings dialog now remembers the last selected tab and the window size.",
    ])
    assert s[0] >= threshold > s[1]


def test_batch_parity(ce: CrossEncoder) -> None:
    q = "データベースのバックアップはどこに保存されますか"
    rng = np.random.default_rng(0)
    words = "backup snapshot database bucket region retention nightly weekly restore encrypted key rotation".split()
    passages = [f"Note {i} > Part\n" + " ".join(rng.choice(words, size=int(rng.integers(5, 250)))) for i in range(20)]
    together = ce.score(q, passages)
    alone = np.array([ce.score(q, [p])[0] for p in passages])
    np.testing.assert_array_equal(together, alone)  # INT8 pairs run one at a time: exactly batch-invariant
    perm = rng.permutation(20)
    np.testing.assert_array_equal(ce.score(q, [passages[i] for i in perm]), together[perm])
    batched = CrossEncoder.load(MODEL, threads=2, max_batch_size=8).score(q, passages)
    assert np.abs(batched - together).max() < 0.05  # padded batches only move the dynamic INT8 scales


def test_empty_and_long_inputs(ce: CrossEncoder) -> None:
    with pytest.raises(ValueError):
        ce.score("  ", ["x"])
    s = ce.score("query", ["", "long " * 2000])
    assert s[0] == 0.0 and 0.0 <= s[1] <= 1.0
    assert len(ce.encode_pair("q " * 500, "p " * 2000)[0]) == ce.max_length

"""Cross-encoder runner on tiny models built by the tests (field case IX-09)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from models_fixtures import make_cross_encoder_dir

from vaultsync.models.base import Reranker
from vaultsync.models.cross_encoder import CrossEncoder, CrossEncoderError, _to_probability

QUERY = "how do we rotate the database password"
# 8 candidates of very different lengths, including "" and "   " (IX-09)
CANDIDATES = [
    "rotate the production postgres credentials",
    "",
    "the ci pipeline caches docker layers in the registry; a cache miss adds about eight minutes to each build " * 3,
    "   ",
    "x",
    "nightly backups of the analytics database are copied to s3 and kept for 30 days " * 6,
    "on-call handover happens every monday",
    "we pin python dependencies",
]


@pytest.fixture(scope="module", params=["bert", "roberta"])
def model_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    style = request.param
    return make_cross_encoder_dir(tmp_path_factory.mktemp(style), style, settings={"max_length": 48})


def test_feed_follows_declared_inputs(model_dir: Path) -> None:
    ce = CrossEncoder(model_dir)
    declared = set(ce.input_names)
    if model_dir.name.startswith("bert"):
        assert declared == {"input_ids", "attention_mask", "token_type_ids"}
    else:
        assert declared == {"input_ids", "attention_mask"}
    rows = [ce.encode_pair(QUERY, p) for p in CANDIDATES if p.strip()]
    feed = ce.feed(rows)
    assert set(feed) == declared
    lengths = [len(r[0]) for r in rows]
    mask = feed["attention_mask"]
    for i, n in enumerate(lengths):  # right padding: ones then zeros
        assert mask[i, :n].tolist() == [1] * n
        assert not mask[i, n:].any()
        assert feed["input_ids"][i, n:].tolist() == [ce._pad_id] * (mask.shape[1] - n)
    if "token_type_ids" in feed:
        types = feed["token_type_ids"]
        assert not (types * (1 - mask)).any()  # zeros on padding
        q_len = rows[0][1].index(1)  # BERT pair template: query segment 0, passage segment 1
        assert not types[:, :q_len].any()
        assert all(t == rows[i][1] + [0] * (mask.shape[1] - len(rows[i][1])) for i, t in enumerate(types.tolist()))


def test_batched_scores_equal_single_scores(model_dir: Path) -> None:
    ce = CrossEncoder(model_dir)
    assert ce.max_batch_size > 1  # a float model really batches
    batched = ce.score(QUERY, CANDIDATES)
    single = np.array([ce.score(QUERY, [c])[0] for c in CANDIDATES])
    assert batched.dtype == np.float32 and batched.shape == (8,)
    assert np.abs(batched - single).max() < 1e-4
    assert ((batched >= 0) & (batched <= 1)).all()
    # empty and whitespace candidates are skipped with score 0, the others are real scores
    assert batched[1] == 0.0 and batched[3] == 0.0
    assert (batched[[0, 2, 4, 5, 6, 7]] > 0).all()
    # batches run side by side (threads) or one at a time: the same scores, in the same places
    for size in (1, 3):
        side_by_side = CrossEncoder(model_dir, threads=3, max_batch_size=size).score(QUERY, CANDIDATES)
        assert np.array_equal(side_by_side, CrossEncoder(model_dir, threads=1, max_batch_size=size).score(QUERY, CANDIDATES))


def test_padding_is_masked_not_ignored(model_dir: Path) -> None:
    """Negative control: without the mask, padding changes the scores (so the parity test can fail)."""
    ce = CrossEncoder(model_dir)
    rows = [ce.encode_pair(QUERY, CANDIDATES[0]), ce.encode_pair(QUERY, CANDIDATES[5])]
    feed = ce.feed(rows)
    good = ce._session.run(None, feed)[0][0]
    feed["attention_mask"] = np.ones_like(feed["attention_mask"])
    bad = ce._session.run(None, feed)[0][0]
    assert np.abs(good - bad).max() > 1e-4


def test_empty_query_rejected_before_the_model_runs(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ce = CrossEncoder(model_dir)

    def must_not_run(*_a: object, **_k: object) -> None:
        raise AssertionError("the model ran")

    monkeypatch.setattr(ce, "feed", must_not_run)
    for q in ("", "   ", "\n\t"):
        with pytest.raises(ValueError, match="empty"):
            ce.score(q, CANDIDATES)


def test_truncation_keeps_query_and_cuts_passage(model_dir: Path) -> None:
    ce = CrossEncoder(model_dir, max_query_tokens=5)
    long_passage = CANDIDATES[5]
    ids, _types = ce.encode_pair(QUERY, long_passage)
    assert len(ids) == ce.max_length == 48
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    q_ids = tok.encode(QUERY, add_special_tokens=False).ids
    assert ids[1 : 1 + 5] == q_ids[:5]  # query capped at 5 tokens, kept from its start
    p_ids = tok.encode(long_passage, add_special_tokens=False).ids
    inner = [i for i in ids if i > 3]  # both test vocabularies keep their specials at ids 0-3
    assert inner[5:] == p_ids[: len(inner) - 5]  # the passage is cut at its end
    short = ce.encode_pair(QUERY, "x")[0]
    assert q_ids[:5] == short[1:6] and len(short) < 48


def test_reranker_protocol_and_nested_layout(tmp_path: Path) -> None:
    d = make_cross_encoder_dir(tmp_path / "nested", "roberta", nested=True)
    ce = CrossEncoder.load(d)
    assert isinstance(ce, Reranker)
    assert ce.max_length == 64  # config.json: 66 positions - (padding_idx 1 + 1)
    assert ce.score(QUERY, []).shape == (0,)


def test_fused_attention_graph_matches_plain_graph(tmp_path: Path) -> None:
    plain = CrossEncoder(make_cross_encoder_dir(tmp_path / "plain", "bert", fused=False))
    fused = CrossEncoder(make_cross_encoder_dir(tmp_path / "fused", "bert", fused=True))
    a, b = plain.score(QUERY, CANDIDATES), fused.score(QUERY, CANDIDATES)
    assert np.abs(a - b).max() < 1e-4


def test_unusable_directories_are_explained(tmp_path: Path) -> None:
    with pytest.raises(CrossEncoderError, match="not a directory"):
        CrossEncoder(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CrossEncoderError, match=r"model\.onnx"):
        CrossEncoder(tmp_path / "empty")


def test_logits_to_probability() -> None:
    one = _to_probability(np.array([[0.0], [2.0]], np.float32))
    assert np.allclose(one, [0.5, 1 / (1 + np.exp(-2.0))])
    two = _to_probability(np.array([[1.0, 3.0]], np.float32))
    assert np.allclose(two, [np.exp(3) / (np.exp(1) + np.exp(3))])
    with pytest.raises(CrossEncoderError):
        _to_probability(np.zeros((2, 3), np.float32))


def test_dynamic_quantisation_is_found_without_parsing_the_graph(tmp_path: Path) -> None:
    """A graph with a dynamically quantised op runs pairs one by one; the check scans bytes (no onnx)."""
    import onnx
    from onnx import TensorProto, helper

    from vaultsync.models.cross_encoder import _batch_dependent

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])
    outs = [helper.make_tensor_value_info(n, t, s) for n, t, s in
            (("q", TensorProto.UINT8, [None, 4]), ("s", TensorProto.FLOAT, []), ("z", TensorProto.UINT8, []))]
    quantised = helper.make_graph([helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"])], "g", [x], outs)
    onnx.save(helper.make_model(quantised), tmp_path / "dyn.onnx")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])
    plain = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])
    onnx.save(helper.make_model(plain), tmp_path / "float.onnx")
    assert _batch_dependent(tmp_path / "dyn.onnx") is True
    assert _batch_dependent(tmp_path / "float.onnx") is False

"""The dense legs' scan in onnxruntime's integer kernels (ADR-0092): the shipped graph is the one the
code builds, and its products are the integer products of the codes with the quantised query."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.resources import data_dir
from vaultsync.search import int8_dot


def test_the_shipped_graph_is_the_one_graph_bytes_builds() -> None:
    onnx = pytest.importorskip("onnx")
    shipped = onnx.ModelProto.FromString((data_dir("models") / "kernels" / int8_dot.GRAPH).read_bytes())
    assert shipped == onnx.ModelProto.FromString(int8_dot.graph_bytes())  # field by field, not byte order
    onnx.checker.check_model(shipped)


def test_the_scan_runs_in_onnxruntime() -> None:
    assert int8_dot._get_session() is not None


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 700), dim=st.sampled_from([1, 7, 64, 384, 512]),
       peak=st.sampled_from([1e-6, 0.05, 1.0, 300.0]))
def test_dot_is_the_codes_times_the_quantised_query(seed, n, dim, peak) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(-127, 128, (n, dim), dtype=np.int8)
    q = (rng.standard_normal(dim) * peak).astype(np.float32)
    qcodes, scale = int8_dot.quantise_query(q)
    exact_int = codes.astype(np.int64) @ (qcodes.astype(np.int64) - int8_dot.ZERO_POINT)
    got = int8_dot.dot(codes, q)
    assert got.dtype == np.float32 and got.shape == (n,)
    np.testing.assert_allclose(got, (exact_int * scale).astype(np.float32), rtol=1e-6, atol=1e-6 * peak)
    # against the unquantised product: each query code is off by at most half a step
    bound = 0.5 * scale * np.abs(codes.astype(np.float64)).sum(axis=1) + 1e-5 * peak * dim * 127
    assert np.all(np.abs(got - codes.astype(np.float64) @ q) <= bound)


def test_query_codes_round_trip_within_half_a_step() -> None:
    q = np.array([0.3, -0.3, 0.0, 0.001, -0.15], np.float32)
    codes, scale = int8_dot.quantise_query(q)
    assert codes.dtype == np.uint8 and scale == pytest.approx(0.3 / 127)
    assert np.all(np.abs((codes.astype(np.float32) - 128) * scale - q) <= scale / 2 + 1e-9)
    assert codes[0] == 255 and codes[1] == 1 and codes[2] == 128


@pytest.mark.parametrize("q", [np.zeros(8, np.float32), np.full(8, -0.0, np.float32)])
def test_a_zero_query_scores_zero(q) -> None:
    codes = np.arange(-64, 64, dtype=np.int8).reshape(16, 8)
    assert np.array_equal(int8_dot.dot(codes, q), np.zeros(16, np.float32))


def test_empty_and_strided_codes_take_the_numpy_scan() -> None:
    assert int8_dot.dot(np.zeros((0, 4), np.int8), np.ones(4, np.float32)).shape == (0,)
    codes = np.arange(-60, 60, dtype=np.int8).reshape(10, 12)[:, ::2]  # not C-contiguous
    q = np.linspace(-1, 1, 6).astype(np.float32)
    np.testing.assert_allclose(int8_dot.dot(codes, q), codes.astype(np.float32) @ q, rtol=1e-6)


def test_memory_mapped_codes_are_scanned_in_place(tmp_path) -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(-127, 128, (300, 32), dtype=np.int8)
    path = tmp_path / "codes.bin"
    codes.tofile(path)
    mapped = np.memmap(path, dtype=np.int8, mode="r", shape=codes.shape)
    q = rng.standard_normal(32).astype(np.float32)
    assert np.array_equal(int8_dot.dot(mapped, q), int8_dot.dot(codes, q))

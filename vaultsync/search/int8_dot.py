"""Int8 codes · query in onnxruntime's integer kernels: a dense leg's scan over every row.

A leg scores every chunk and name row from its int8 codes (:class:`vaultsync.search.dense.VectorIndex`).
numpy has no integer matrix kernel: an einsum casting each code to float32 took 7 ms for
55,000 × 384 codes on one core. onnxruntime's ``MatMulInteger`` (MLAS, vectorised int8 × uint8
dot products) takes about half that (``bench/bench_int8.py``), on the memory-mapped codes
in place, with no copy.

The query is quantised too (symmetric, per vector: ``q ≈ scale · (code - 128)``, codes uint8 with
zero point 128), so a row's score gains an error of about ``|row| · |q| / 254`` per dimension's
rounding: ~1e-3 of a cosine, as the row's own codes. The rows a leg keeps are re-scored exactly
from float32 vectors, so the answer is exact search's unless a row falls out of the re-scored
pool (recall measured by ``bench/bench_int8.py``, ADR-0092).

The graph is one node, shipped as ``models/kernels/int8-dot.onnx`` (built by :func:`graph_bytes`,
checked against it by the tests): building it at run time would import ``onnx`` (~0.1 s).
"""

from __future__ import annotations

import threading

import numpy as np

from vaultsync.resources import data_dir

GRAPH = "int8-dot.onnx"
ZERO_POINT = 128
_lock = threading.Lock()
_session: object | None = None  # the onnxruntime session, False when it cannot be made


def graph_bytes() -> bytes:
    """The serialised ONNX model: ``Y int32 [n, k] = MatMulInteger(A int8 [n, d], B uint8 [d, k], -, 128)``
    (opset 13, IR 8). Needs the ``onnx`` package (a build-time tool here, never imported by a search)."""
    from onnx import TensorProto, helper

    node = helper.make_node("MatMulInteger", ["codes", "query", "", "query_zero_point"], ["dots"])
    graph = helper.make_graph(
        [node], "int8_dot",
        [helper.make_tensor_value_info("codes", TensorProto.INT8, ["rows", "dim"]),
         helper.make_tensor_value_info("query", TensorProto.UINT8, ["dim", "queries"])],
        [helper.make_tensor_value_info("dots", TensorProto.INT32, ["rows", "queries"])],
        initializer=[helper.make_tensor("query_zero_point", TensorProto.UINT8, [], [ZERO_POINT])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="vaultsync")
    model.ir_version = 8
    return model.SerializeToString()


def _get_session() -> object | None:
    """The shared single-threaded session (the legs already run side by side), None when onnxruntime
    or the shipped graph is missing: the caller then scans with numpy."""
    global _session
    with _lock:
        if _session is None:
            try:
                import onnxruntime as ort

                so = ort.SessionOptions()
                so.intra_op_num_threads = so.inter_op_num_threads = 1
                so.log_severity_level = 3
                path = data_dir("models") / "kernels" / GRAPH
                _session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            except Exception:  # noqa: BLE001 - any failure leaves the numpy scan, which needs nothing
                _session = False
        return _session or None


def quantise_query(query_vector: np.ndarray) -> tuple[np.ndarray, float]:
    """(uint8 [d] codes with zero point :data:`ZERO_POINT`, scale): ``q ≈ scale · (codes - 128)``,
    ``scale = max|q| / 127`` (0 for a zero vector)."""
    q = np.asarray(query_vector, dtype=np.float32)
    peak = float(np.abs(q).max()) if len(q) else 0.0
    scale = peak / 127.0
    codes = np.rint(q / scale) if scale > 0 else np.zeros_like(q)
    return (np.clip(codes, -127, 127) + ZERO_POINT).astype(np.uint8), scale


def dot(codes: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
    """``codes · q`` for every row: float32 [n] from int8 [n, d] codes and a float32 [d] query, in units
    of one code step (multiply by the rows' scales for cosines). Thread-safe."""
    session = _get_session() if len(codes) else None
    if session is None or not codes.flags.c_contiguous:
        return np.einsum("ij,j->i", codes, np.asarray(query_vector, np.float32), dtype=np.float32,
                         casting="unsafe")
    qcodes, scale = quantise_query(query_vector)
    dots = session.run(None, {"codes": codes, "query": qcodes.reshape(-1, 1)})[0]  # type: ignore[attr-defined]
    out = dots[:, 0].astype(np.float32)
    out *= np.float32(scale)
    return out

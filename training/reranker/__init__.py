"""The cross-encoder reranker's recipe: data and hard negatives, vocabulary, training, calibration, ONNX export, fusion check (ADR-0030)."""

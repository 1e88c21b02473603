"""Training-side helpers for vaultsync's own cross-encoder reranker (ADR-0030).

Nothing here is on the search path and nothing here imports PyTorch: the
PyTorch model and loop live in the recipe (``models/reranker/``), which the
``train`` extra installs for. These modules build the training pairs from
``shared/train`` only (:mod:`.data`), prune the vocabulary and write the
tokenizer (:mod:`.vocab`), calibrate scores (:mod:`.calibration`) and export
the trained weights to the standard cross-encoder ONNX layout (:mod:`.export`)
and check it against the first stage on held-out queries (:mod:`.fusion`).
"""

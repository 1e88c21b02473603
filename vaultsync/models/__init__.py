"""Run-time models: embedders, rerankers and their tokenizers on onnxruntime (build time lives in :mod:`vaultsync.models.convert`).

Entry points (import the submodules; this package imports nothing heavy):

* :class:`vaultsync.models.embedder.Embedder` — ``Embedder.load()`` →
  ``embed_queries`` / ``embed_passages`` / ``token_vectors`` / ``count_tokens``,
  ``dim``, ``model_id``; ``Embedder.load("use-multilingual")`` gives the USE leg.
  :func:`vaultsync.models.convert.build.load_embedder` builds on first use.
* :class:`vaultsync.models.cross_encoder.CrossEncoder` — a Hugging Face
  cross-encoder ONNX export from a folder; :class:`vaultsync.models.maxsim.MaxSimReranker`
  — late interaction over the embedder's token vectors. Both implement
  :class:`vaultsync.models.base.Reranker`.
* Manifests (:mod:`manifest`), the user cache (:mod:`cache`), golden probes (:mod:`probe`).
"""

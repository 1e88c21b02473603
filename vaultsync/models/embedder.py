"""Sentence embeddings with the locally built multilingual-e5-small (onnxruntime + tokenizers).

Recipe (Wang et al. 2024, "Multilingual E5 Text Embeddings"): prepend
``"query: "`` or ``"passage: "``, tokenize (XLM-R SentencePiece, at most 512
tokens including ``<s>``/``</s>``; longer inputs are truncated at the end),
run the encoder, mean-pool the last hidden states over the attention mask,
L2-normalise. Cosine similarity is then a dot product.

Usage::

    emb = Embedder.load()                      # from the user cache (see models.convert.build.load_embedder)
    q = emb.embed_queries(["how do we rotate DB credentials?"])   # [1, 384]
    P = emb.embed_passages(chunks)                                # [n, 384]
    scores = P @ q[0]
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from vaultsync.models import cache
from vaultsync.models import manifest as manifests
from vaultsync.models.base import Kind, TextEmbedder, check_texts
from vaultsync.models.batching import map_batches, pad_right, plan_batches
from vaultsync.models.tokenization import Backend, load_tokenizer

DEFAULT_MODEL = "multilingual-e5-small"
_CUT_FACTOR = 64  # pre-cut texts longer than max_tokens * this many characters (see _encode)


class ModelNotBuiltError(RuntimeError):
    """The model is not in the cache and building was not allowed."""


def make_session(path: Path, threads: int = 2, *, spin: bool = False) -> ort.InferenceSession:
    """An onnxruntime CPU session: ``threads`` intra-op threads, one inter-op thread, sequential.

    ``spin=False`` stops idle worker threads from busy-waiting: on a 2-core laptop
    shared with other work (indexing, an editor) spinning threads fight for the
    cores; measured here with one core busy, a query took 4.5 ms without
    spinning and 9.4 ms with it.
    """
    so = ort.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    so.intra_op_num_threads = max(1, int(threads))
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def model_id(name: str, version: int, build_info: dict[str, Any]) -> str:
    """``name@v<manifest version>+<12 hex>``: the hex digest covers model.onnx and tokenizer.json,
    so the id changes whenever a rebuild could change a vector."""
    files = build_info["files"]
    digest = hashlib.sha256((files["model.onnx"]["sha256"] + files["tokenizer.json"]["sha256"]).encode()).hexdigest()
    return f"{name}@v{version}+{digest[:12]}"


class Embedder:
    """multilingual-e5-small on onnxruntime; see the module docstring for the recipe.

    Attributes:
        name: model name (manifest).
        dim: embedding width (384).
        max_tokens: input limit including special tokens (512).
        model_id: see :func:`model_id`; changes whenever the vectors would.
        folder: where the built model lives.
    """

    def __init__(
        self,
        folder: Path,
        manifest: manifests.Manifest,
        build_info: dict[str, Any],
        *,
        threads: int = 2,
        max_batch_tokens: int = 8192,
        max_batch_size: int | None = None,
        spin: bool = False,
        tokenizer: Backend = "auto",
    ) -> None:
        self.folder = Path(folder)
        self.name = manifest.name
        self.dim = manifest.dims
        self.max_tokens = int(manifest.max_tokens or 512)
        self.model_id = model_id(manifest.name, manifest.version, build_info)
        self.threads = threads
        self.max_batch_tokens = max_batch_tokens
        # INT8 dynamic quantisation takes activation scales over the whole batch, so a
        # text's vector would depend on its batch-mates; one text per run keeps vectors a
        # pure function of the text (what an embedding cache keyed by content needs).
        invariant = bool(build_info.get("batch_invariant", False))
        self.max_batch_size = max_batch_size if max_batch_size is not None else (64 if invariant else 1)
        self._prefixes = {"query": manifest.prefixes.get("query", ""), "passage": manifest.prefixes.get("passage", "")}
        # onnxruntime builds the session without the GIL: it overlaps the tokenizer's Python load
        with ThreadPoolExecutor(1, thread_name_prefix="e5-session") as pool:
            session = pool.submit(make_session, self.folder / "model.onnx", 1, spin=spin)  # `threads` runs at once
            self._tok = load_tokenizer(self.folder, tokenizer)
            self._session = session.result()
        self._pad_id = self._tok.pad_id
        self._eos_id = self._tok.eos_id
        space = self._tok.token_to_id("▁")
        self._skip_ids = self._tok.special_ids | ({space} if space is not None else set())
        self._prefix_tokens = {
            k: len(self._tok.encode(p.rstrip(), add_special_tokens=False)) if p.strip() else 0
            for k, p in self._prefixes.items()
        }

    # -- construction -------------------------------------------------------
    @classmethod
    def load(
        cls,
        model: str = DEFAULT_MODEL,
        threads: int = 2,
        cache_dir: str | os.PathLike[str] | None = None,
        *,
        max_batch_tokens: int = 8192,
        max_batch_size: int | None = None,
        spin: bool = False,
        tokenizer: Backend = "auto",
    ) -> TextEmbedder:
        """Load ``model`` from the user cache (to build it first when absent, use
        :func:`vaultsync.models.convert.build.load_embedder`).

        ``model`` is a manifest name: ``multilingual-e5-small`` (this class) or
        ``use-multilingual`` (:class:`vaultsync.models.use_embedder.UseEmbedder`,
        needs the ``use`` extra). ``max_batch_size=None`` means 1 for builds that are
        not batch-invariant (INT8 dynamic quantisation) and 64 otherwise. ``spin``: see
        :func:`make_session`. ``tokenizer``: ``auto`` (the compact Python Unigram when the
        build has ``unigram.npz``: ~220 MB less RSS), ``compact`` or ``rust`` (``tokenizers``);
        both give identical ids.

        Raises:
            ModelNotBuiltError: not built.
            vaultsync.models.manifest.ManifestError: unknown model.
        """
        m = manifests.load(model)
        if m.kind == "use-numpy":
            from vaultsync.models.use_embedder import UseEmbedder

            return UseEmbedder.load(m, threads=threads, cache_dir=cache_dir)
        folder = cache.model_dir(m.name, m.version, cache_dir)
        info = cache.read_build_info(folder)
        if info is None:
            raise ModelNotBuiltError(f"model {m.name!r} is not built; run `vaultsync models build`")
        return cls(
            folder,
            m,
            info,
            threads=threads,
            max_batch_tokens=max_batch_tokens,
            max_batch_size=max_batch_size,
            spin=spin,
            tokenizer=tokenizer,
        )

    # -- public API ---------------------------------------------------------
    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries (``"query: "`` prefix) → float32 ``[n, dim]``, rows L2-normalised.

        Empty strings are valid (they embed the bare prefix). Raises ``TypeError``
        for a bare ``str`` or non-``str`` items.
        """
        return self._embed(check_texts(texts), "query")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed documents / chunks (``"passage: "`` prefix) → float32 ``[n, dim]``, rows L2-normalised."""
        return self._embed(check_texts(texts), "passage")

    def token_vectors(self, texts: Sequence[str], kind: Kind = "passage") -> list[np.ndarray]:
        """Per-token contextual vectors for late interaction (ColBERT-style MaxSim).

        Returns one float32 ``[n_tokens_i, dim]`` array per text: the last hidden
        states, each row L2-normalised, for the text's own tokens only — ``<s>``,
        ``</s>``, the prefix tokens and bare ``▁`` tokens are dropped (an empty text
        gives ``[0, dim]``). Truncation as for :meth:`embed_passages`.
        """
        texts = check_texts(texts)
        rows = self._encode(texts, kind)
        out: list[np.ndarray] = [np.zeros((0, self.dim), np.float32)] * len(texts)
        start = 1 + self._prefix_tokens[kind]
        batches = plan_batches([len(r) for r in rows], self.max_batch_tokens, self.max_batch_size)
        for batch, hidden in zip(batches, map_batches(partial(self._run, rows, "last_hidden_state"), batches,
                                                      self.threads), strict=True):
            for j, i in enumerate(batch):
                r = rows[i]
                keep = [p for p in range(start, len(r)) if r[p] not in self._skip_ids]
                vecs = hidden[j, keep].astype(np.float32)
                norms = np.linalg.norm(vecs, axis=1, keepdims=True)
                out[i] = vecs / np.maximum(norms, 1e-12)
        return out

    def embed_with_blocks(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                          ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Passage embeddings and, from the same encoder pass, one vector per block of each passage.

        Late chunking (Günther et al. 2024, "Late Chunking: Contextual Chunk Embeddings Using
        Long-Context Embedding Models"): the last hidden states are mean-pooled over each block's own
        tokens, so a block's vector also reads the title, the heading and the blocks around it.

        Args:
            texts: passages, as for :meth:`embed_passages`.
            spans: per passage, the ``(start, end)`` character offsets of its blocks (paragraphs, list
                items, a conversation's turns), each starting and ending at white space or the text's
                ends (tokens never span white space, so a block's tokens are those of its characters).

        Returns ``(vectors, blocks)``: float32 ``[n, dim]`` equal to :meth:`embed_passages`, and one
        float32 ``[n_blocks_i, dim]`` per passage, rows L2-normalised. A block with no tokens, or past
        the 512-token limit, gets the vector pooled over the whole passage.
        """
        texts = check_texts(texts)
        rows = self._encode(texts, "passage")
        prefix = self._prefixes["passage"]

        def position(text: str, at: int) -> int:  # the index of the first token at or after character ``at``
            head = (prefix + text[:at]).rstrip()
            return 1 + (len(self._tok.encode(head, add_special_tokens=False)) if head else 0)

        where = [[(position(t, a), position(t, b)) for a, b in of] for t, of in zip(texts, spans, strict=True)]
        vectors = np.zeros((len(texts), self.dim), np.float32)
        blocks = [np.zeros((len(w), self.dim), np.float32) for w in where]
        batches = plan_batches([len(r) for r in rows], self.max_batch_tokens, self.max_batch_size)
        run = partial(self._run, rows, ("sentence_embedding", "last_hidden_state"))
        for batch, (pooled, hidden) in zip(batches, map_batches(run, batches, self.threads), strict=True):
            vectors[batch] = pooled
            for j, i in enumerate(batch):
                states = hidden[j, : len(rows[i])].astype(np.float32)
                for b, (start, end) in enumerate(where[i]):
                    end = min(end, len(rows[i]) - 1)
                    blocks[i][b] = states[start:end].mean(axis=0) if end > start else states.mean(axis=0)
                blocks[i] /= np.maximum(np.linalg.norm(blocks[i], axis=1, keepdims=True), 1e-12)
        return vectors, blocks

    def input_ids(self, texts: Sequence[str], kind: Kind = "passage") -> list[list[int]]:
        """The model's input ids for each text (prefix and specials included, truncated)."""
        return self._encode(check_texts(texts), kind)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each raw text: no prefix, no ``<s>``/``</s>``, no truncation."""
        texts = check_texts(texts)
        return [len(ids) for ids in self._tok.encode_batch(texts, add_special_tokens=False)]

    # -- internals ----------------------------------------------------------
    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        rows = self._encode(texts, kind)
        batches = plan_batches([len(r) for r in rows], self.max_batch_tokens, self.max_batch_size)
        for batch, vecs in zip(batches, map_batches(partial(self._run, rows, "sentence_embedding"), batches,
                                                    self.threads), strict=True):
            out[batch] = vecs
        return out

    def _run(self, rows: list[list[int]], output: str | tuple[str, ...], batch: list[int]) -> Any:
        """One output (an array) or several (a tuple of arrays) of the model over ``batch`` of ``rows``."""
        ids, mask = pad_right([rows[i] for i in batch], self._pad_id)
        names = [output] if isinstance(output, str) else list(output)
        results = tuple(np.asarray(r) for r in self._session.run(names, {"input_ids": ids, "attention_mask": mask}))
        return results[0] if isinstance(output, str) else results

    def _encode(self, texts: list[str], kind: Kind) -> list[list[int]]:
        """Token ids with specials, truncated to ``max_tokens`` (last kept token then ``</s>``)."""
        prefix = self._prefixes[kind]
        limit = self.max_tokens * _CUT_FACTOR
        inputs = [prefix + _cut(t, limit) for t in texts]
        rows = self._tok.encode_batch(inputs)
        for i, (t, r) in enumerate(zip(texts, rows, strict=True)):
            if len(r) <= self.max_tokens and len(t) > limit and _cut(t, limit) != t:
                # the cut text ran out of tokens before the limit: use the whole text
                r = self._tok.encode(prefix + t)
            if len(r) > self.max_tokens:
                r = [*r[: self.max_tokens - 1], self._eos_id]
            rows[i] = r
        return rows


def _cut(text: str, limit: int) -> str:
    """Cut very long text at the last space/newline/tab before ``limit`` characters.

    Tokens never span those characters (they normalise to U+0020, where the
    pre-tokenizer splits), so when the cut text still yields more than the
    token limit its truncated tokens equal the full text's.
    """
    if len(text) <= limit:
        return text
    cut = max(text.rfind(" ", 0, limit), text.rfind("\n", 0, limit), text.rfind("\t", 0, limit))
    return text[:cut] if cut > 0 else text

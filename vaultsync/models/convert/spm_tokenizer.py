"""Assemble the XLM-R tokenizer (``tokenizers`` Unigram) from the ``E5S1`` file alone.

The pipeline is the one Hugging Face ships for XLM-R / multilingual-e5
(``XLMRobertaTokenizerFast``): ``Precompiled`` nmt_nfkc normaliser + collapse
runs of spaces → ``Metaspace`` (``▁``, always prepended, split on ``▁``) →
SentencePiece Unigram Viterbi (Kudo 2018) over the file's pieces and scores,
unknown characters → ``<unk>`` (consecutive ones fused) → ``<s> … </s>``
(pairs: ``<s> A </s></s> B </s>``). The normaliser table is rebuilt by
:mod:`vaultsync.models.convert.spm_normalizer`.
"""

from __future__ import annotations

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from vaultsync.models.convert.e5_bin import SpmData

_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")


def build_tokenizer(spm: SpmData, charsmap: bytes) -> Tokenizer:
    """Return a ``tokenizers.Tokenizer`` equivalent to XLM-R's ``tokenizer.json``.

    Args:
        spm: pieces, scores and special ids from the model file.
        charsmap: a ``precompiled_charsmap`` (see :func:`spm_normalizer.to_charsmap`).

    Raises:
        ValueError: when the special pieces are not where XLM-R puts them.
    """
    pieces = spm.pieces
    for special, idx in (("<s>", spm.bos), ("<pad>", spm.pad), ("</s>", spm.eos), ("<unk>", spm.unk)):
        if pieces[idx] != special:
            raise ValueError(f"piece {idx} is {pieces[idx]!r}, expected {special!r}")
    vocab = [(p, float(s)) for p, s in zip(pieces, spm.scores.tolist(), strict=True)]
    tok = Tokenizer(models.Unigram(vocab, spm.unk, False))
    del vocab
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(charsmap), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = pieces[spm.bos], pieces[spm.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, spm.bos), (eos, spm.eos)],
    )
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in _SPECIALS if t in pieces])
    return tok

"""Assemble the XLM-R tokenizer (``tokenizers`` Unigram) from the ``E5S1`` file alone.

The pipeline is the one Hugging Face ships for XLM-R / multilingual-e5
(``XLMRobertaTokenizerFast``): ``Precompiled`` nmt_nfkc normaliser + collapse
runs of spaces → ``Metaspace`` (``▁``, always prepended, split on ``▁``) →
SentencePiece Unigram Viterbi (Kudo 2018) over the file's pieces and scores,
unknown characters → ``<unk>`` (consecutive ones fused) → ``<s> … </s>``
(pairs: ``<s> A </s></s> B </s>``). The normaliser table is rebuilt by
:mod:`vaultsync.models.convert.spm_normalizer`.

:func:`sentencepiece_model` writes the same pieces and scores as a
SentencePiece ModelProto for the run-time tokenizer
(:class:`vaultsync.models.tokenization.SentencePieceTokenizer`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from vaultsync.models.convert.e5_bin import SpmData
from vaultsync.models.tokenization import SPECIAL_TOKENS, TokenIds


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
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS if t in pieces])
    return tok


_UNK_RENAMED = "<unk:unknown>"


def sentencepiece_model(spm: SpmData) -> bytes:
    """Serialise the pieces and scores of ``spm`` as a SentencePiece Unigram ModelProto.

    Ids and scores are those of :func:`build_tokenizer`'s model; the normaliser
    is ``identity`` (the run-time tokenizer normalises and pre-tokenizes with
    ``tokenizers`` first). ``tokenizers`` matches every vocabulary entry in
    text, so all pieces are ``NORMAL`` except the unknown piece; that one is
    renamed (``<unk:unknown>``) and the text ``<unk>`` gets an extra normal
    piece at id ``len(spm.pieces)``, which the run-time tokenizer maps back to
    ``spm.unk``.
    """
    from sentencepiece import sentencepiece_model_pb2 as pb

    unk = spm.unk
    proto = pb.ModelProto()
    for i, (piece, score) in enumerate(zip(spm.pieces, spm.scores.tolist(), strict=True)):
        p = proto.pieces.add()
        p.piece, p.score = (_UNK_RENAMED, score) if i == unk else (piece, score)
        if i == unk:
            p.type = pb.ModelProto.SentencePiece.UNKNOWN
    alias = proto.pieces.add()
    alias.piece, alias.score = "<unk>", float(spm.scores[unk])
    ts = proto.trainer_spec
    ts.model_type = pb.TrainerSpec.UNIGRAM
    ts.vocab_size = len(proto.pieces)
    ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id = unk, -1, -1, -1
    ts.unk_piece = _UNK_RENAMED
    ns = proto.normalizer_spec
    ns.name = "identity"
    ns.add_dummy_prefix = ns.remove_extra_whitespaces = ns.escape_whitespaces = False
    return proto.SerializeToString()


CHECK_SAMPLE = (
    "query: How do I rotate the DB credentials?",
    "データベースの認証情報をローテーションする方法",
    "数据库凭据轮换，请参阅运行手册。 데이터베이스 자격 증명 교체",
    "Die Zugangsdaten werden rotiert — Straße, Größe; « guillemets » œuvre; Учётные данные; ¿Cómo? ¡Ñandú!",
    "emoji 👍🏽 🧑‍💻 ❤️ 🇯🇵 a     b\t\tc\n\nd ﬁ ｶﾞ ① ㈱ ℃ ＡＢＣ e\u0301 ㄱㅏ \u1100\u1161 Ａ\u0301",
    "<s> literal </s> <mask> x<pad>y ＜s＞ \u200b\u00a0\u3000 \x07 C++ -> x:=y; `code` ~/.config",
    "＜unk＞ x＜unk＞걾 ＜pad＞＜mask＞ ▁▁a ▁ trailing \t",
    "",
    "   ",
)


def mismatches(tokenizer: TokenIds, reference: Tokenizer, texts: Sequence[str] = CHECK_SAMPLE) -> list[str]:
    """Texts whose ids differ from ``reference`` (``tokenizers``): empty when the two agree."""
    return [t for t in texts if tokenizer.encode(t) != reference.encode(t).ids]

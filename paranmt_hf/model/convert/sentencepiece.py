"""A ``tokenizers`` Unigram tokenizer that segments exactly like a sentencepiece model's ``EncodeAsPieces``.

It reproduces sentencepiece's unigram Viterbi segmentation: the model's normalisation rules (``precompiled_charsmap``,
e.g. ``nmt_nfkc``), removal of extra whitespace, the ``▁`` dummy prefix, whitespace as ``▁``, and runs of unknown
characters fused into one piece whose text is the run itself (sentencepiece's answer, not ``<unk>``).

PRAS checkpoints look pieces up *by string* in their own vocabulary, which also holds such unknown-run strings. A
``tokenizers`` model cannot look up an unknown run's text, so the normaliser wraps every run the sentencepiece model
cannot produce in two sentinel characters, and each unknown-run string ``S`` of the vocabulary becomes the piece
``SENTINEL_OPEN + S + SENTINEL_CLOSE``: it matches whole runs only, so an unseen run stays one unknown token.

Known differences (``tests/test_convert_pras.py`` compares the STS sentences): equal-score segmentations that are
permutations of each other (``00 0``, ``0 00``) may differ in order (float32 vs float64 tie-breaks; averages equal);
``Precompiled`` drops U+200C/U+200D after some combining sequences; characters whose NFKC form is upper case (``ℌ``)
are ``[UNK]`` for a lower-cased model, where the original looks them up lower-cased.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...modeling.segmentation_paranmt import PAD_TOKEN, UNK_TOKEN
from .errors import ConversionError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

SENTINEL_OPEN = "\ufdd0"
"""Inserted before each run of characters unknown to the sentencepiece model (a Unicode noncharacter)."""
SENTINEL_CLOSE = "\ufdd1"
"""Inserted after each such run."""

FINAL_SIGMA = r"(?<=[\p{Ll}\p{Lu}\p{Lt}])Σ(?![\p{Ll}\p{Lu}\p{Lt}])"
"""Where Python's ``str.lower`` writes a final sigma (``ς``); ``tokenizers``' Lowercase always writes ``σ``."""

SPECIAL_SCORE = -1e9
"""Unigram score of ``[PAD]``/``[UNK]``: far below any real piece so that they never match text."""

# sentencepiece ModelProto.SentencePiece.Type
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6


@dataclass
class SentencePieceModel:
    """What the converter needs from a sentencepiece ``.model`` file (read without executing anything)."""

    pieces: list[tuple[str, float]]
    """``(piece, score)`` of the normal pieces, in sentencepiece id order (control/unknown/unused ones left out)."""
    precompiled_charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    normalizer_name: str
    model_type: int
    byte_fallback: bool
    user_defined: list[str] = field(default_factory=list)

    @property
    def single_chars(self) -> set[str]:
        """Characters that are a piece by themselves (the others are unknown to the Viterbi lattice)."""
        return {p for p, _ in self.pieces if len(p) == 1}


def read_sentencepiece_model(path: str) -> SentencePieceModel:
    """Parse a sentencepiece ``.model`` file (a protobuf ``ModelProto``).

    Raises:
        DamagedFileError: the file is no sentencepiece model (not a ``ModelProto``, or one without pieces).
    """
    from ...utils.imports import require
    from ...utils.integrity import DamagedFileError

    require("google.protobuf", "sp")
    from google.protobuf.message import DecodeError

    model_pb2 = require("sentencepiece.sentencepiece_model_pb2", "sp")
    proto = model_pb2.ModelProto()
    with open(path, "rb") as f:
        try:
            proto.ParseFromString(f.read())
        except DecodeError as err:
            raise DamagedFileError(f"{path} is not a sentencepiece model ({err}): give the .model file the "
                                   "checkpoint was trained with") from None
    if not proto.pieces:
        raise DamagedFileError(f"{path} is not a sentencepiece model (it holds no piece): give the .model file the "
                               "checkpoint was trained with")
    norm, trainer = proto.normalizer_spec, proto.trainer_spec
    return SentencePieceModel(
        pieces=[(p.piece, float(p.score)) for p in proto.pieces if p.type == _NORMAL],
        precompiled_charsmap=bytes(norm.precompiled_charsmap),
        add_dummy_prefix=bool(norm.add_dummy_prefix),
        remove_extra_whitespaces=bool(norm.remove_extra_whitespaces),
        escape_whitespaces=bool(norm.escape_whitespaces),
        normalizer_name=norm.name,
        model_type=int(trainer.model_type),
        byte_fallback=bool(trainer.byte_fallback) or any(p.type == _BYTE for p in proto.pieces),
        user_defined=[p.piece for p in proto.pieces if p.type == _USER_DEFINED],
    )


def check_supported(sp: SentencePieceModel) -> None:
    """Raise a clear error for sentencepiece features the exact conversion does not reproduce."""
    problems = []
    if sp.model_type != 1:
        problems.append(f"model_type={sp.model_type} (only unigram=1 is supported)")
    if sp.byte_fallback:
        problems.append("byte_fallback pieces")
    if sp.user_defined:
        problems.append(f"{len(sp.user_defined)} user-defined symbols")
    if not sp.escape_whitespaces:
        problems.append("escape_whitespaces=false")
    if problems:
        raise ConversionError("cannot convert this sentencepiece model exactly: " + ", ".join(problems))


def pieces_with_unknown_chars(sp: SentencePieceModel) -> list[str]:
    """Multi-character pieces holding a character that is no piece by itself.

    The converted tokenizer treats such characters as unknown, so it never emits these pieces: texts holding those
    characters may segment differently from sentencepiece (none in models trained by sentencepiece's unigram
    trainer, which keeps every character of its pieces as a piece).
    """
    known = sp.single_chars
    return [p for p, _ in sp.pieces if len(p) > 1 and any(c not in known for c in p)]


def unknown_run_pattern(sp: SentencePieceModel) -> str:
    """Regex character class matching one character the model has no single-character piece for (nor a space)."""
    known = sorted(sp.single_chars | {" ", "▁", SENTINEL_OPEN, SENTINEL_CLOSE})
    return "[^" + "".join(re.escape(c) if c not in "-]\\^[" else "\\" + c for c in known) + "]"


def is_unknown_run(text: str, sp: SentencePieceModel) -> bool:
    """Whether ``text`` is a non-empty string of characters that have no single-character piece."""
    known = sp.single_chars
    return bool(text) and not any(c in known or c.isspace() or c == "▁" for c in text)


def build_sentencepiece_tokenizer(
    sp: SentencePieceModel, lowercase: bool, unknown_runs: Iterable[str] = ()
) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` segmenting like ``sp`` (after lower-casing, if asked).

    Ids: 0 ``[PAD]``, 1 ``[UNK]`` (also every unknown run not in ``unknown_runs``), then the normal pieces of ``sp``
    in sentencepiece order, then one piece per string of ``unknown_runs`` (wrapped in the sentinels).

    Args:
        sp: the parsed sentencepiece model (see :func:`check_supported`).
        lowercase: lower-case text before sentencepiece (PRAS ``--lower-case 1``).
        unknown_runs: unknown-run strings that must come out as their own token instead of ``[UNK]``.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    check_supported(sp)
    # [PAD]/[UNK] must never win a Viterbi step. Their score also sets tokenizers' unknown-node score, which is
    # harmless: unknown nodes only cover characters no normal piece contains (check_supported), never compete.
    vocab = [(PAD_TOKEN, SPECIAL_SCORE), (UNK_TOKEN, SPECIAL_SCORE), *sp.pieces]
    vocab += [(SENTINEL_OPEN + run + SENTINEL_CLOSE, 0.0) for run in unknown_runs]
    tok = Tokenizer(models.Unigram(vocab, unk_id=1, byte_fallback=False))
    steps = [normalizers.Replace(Regex(FINAL_SIGMA), "ς"), normalizers.Lowercase()] if lowercase else []
    if sp.precompiled_charsmap:
        steps.append(normalizers.Precompiled(sp.precompiled_charsmap))
    if sp.remove_extra_whitespaces:
        # sentencepiece strips and collapses ASCII spaces only (tokenizers' Strip would also eat e.g. U+0085)
        steps += [normalizers.Replace(Regex("^ +| +$"), ""), normalizers.Replace(Regex(" {2,}"), " ")]
    unknown = unknown_run_pattern(sp)
    steps += [
        normalizers.Replace(Regex(f"(?<!{unknown})(?={unknown})"), SENTINEL_OPEN),
        normalizers.Replace(Regex(f"(?<={unknown})(?!{unknown})"), SENTINEL_CLOSE),
    ]
    tok.normalizer = normalizers.Sequence(steps)
    prepend = "always" if sp.add_dummy_prefix else "never"
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=prepend, split=True)
    tok.decoder = decoders.Sequence(
        [decoders.Replace(SENTINEL_OPEN, ""), decoders.Replace(SENTINEL_CLOSE, ""),
         decoders.Metaspace(replacement="▁", prepend_scheme=prepend, split=True)]
    )
    return tok


def surface(token: str) -> str:
    """The sentencepiece piece text of a token of :func:`build_sentencepiece_tokenizer` (sentinels removed)."""
    return token.replace(SENTINEL_OPEN, "").replace(SENTINEL_CLOSE, "")


__all__ = [
    "SentencePieceModel",
    "read_sentencepiece_model",
    "build_sentencepiece_tokenizer",
    "check_supported",
    "pieces_with_unknown_chars",
    "is_unknown_run",
    "surface",
    "SENTINEL_OPEN",
    "SENTINEL_CLOSE",
]

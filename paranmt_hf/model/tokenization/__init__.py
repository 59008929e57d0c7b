"""Tokenizers for ParaNMT models, built with the ``tokenizers`` library, and the one registry of their builders.

Each averaging encoder kind names the kind of tokens it reads (``EncoderKind.tokens`` in
``modeling/configuration_paranmt.py``); :data:`TOKENIZER_BUILDERS` maps each token kind to the function that builds
such a tokenizer from a corpus. :func:`build_tokenizer` is the one dispatch: ``build_encoder`` and
``paranmt-hf build-tokenizer`` both call it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .errors import VocabularyError

MIN_VOCAB_SIZE = 3
"""The smallest vocabulary: ``[PAD]``, ``[UNK]`` and one token."""


def _word(corpus: Iterable[str] | None, vocab_size: int | None, min_count: int, lookup: str, source: Any) -> Any:
    from .word import build_word_tokenizer

    return build_word_tokenizer(corpus=corpus, max_size=vocab_size and vocab_size - 2, min_count=min_count,
                                lookup=lookup)


def _trigram(corpus: Iterable[str] | None, vocab_size: int | None, min_count: int, lookup: str, source: Any) -> Any:
    from .trigram import build_trigram_tokenizer

    return build_trigram_tokenizer(corpus=corpus, max_size=vocab_size and vocab_size - 2, min_count=min_count,
                                   lookup=lookup)


def _sp(corpus: Iterable[str] | None, vocab_size: int | None, min_count: int, lookup: str, source: Any) -> Any:
    from .unigram import train_unigram_tokenizer

    if corpus is None:
        raise ValueError("an sp (unigram) tokenizer is trained on a corpus")
    return train_unigram_tokenizer(corpus, vocab_size=vocab_size or 50_000, show_progress=False)


def _subword(corpus: Iterable[str] | None, vocab_size: int | None, min_count: int, lookup: str, source: Any) -> Any:
    from .subword import subword_tokenizer

    return subword_tokenizer(source, corpus, None if source is not None else vocab_size)


TOKENIZER_BUILDERS: dict[str, tuple[Callable[..., Any], str]] = {
    "word": (_word, "words (lower-cased, Moses-like split): a WordLevel tokenizer.json"),
    "trigram": (_trigram, "character trigrams of ' ' + sentence + ' ': a ParaNMTTokenizer (remote code)"),
    "sp": (_sp, "sentencepiece-style unigram pieces (PRAS 'SP', 50K by default): a Unigram tokenizer.json"),
    "subword": (_subword, "the pieces of any tokenizers tokenizer (--from a teacher's), else WordPiece trained on "
                          "the corpus"),
}
"""Token kind -> (builder, one line on what it builds). A builder takes ``(corpus, vocab_size, min_count, lookup,
source)``: ``vocab_size`` counts ``[PAD]``/``[UNK]`` (``None``: every corpus token; sp: 50K; subword: 30K or the
adapted tokenizer's own), ``lookup`` the word/trigram rules (``LOOKUP_RULES``), ``source`` a tokenizer to adapt
(subword only)."""

TOKEN_KINDS = tuple(TOKENIZER_BUILDERS)


def build_tokenizer(
    tokens: str,
    corpus: Iterable[str] | None = None,
    vocab_size: int | None = None,
    min_count: int = 1,
    lookup: str = "split",
    source: Any = None,
) -> Any:
    """A tokenizer of token kind ``tokens`` (one of :data:`TOKEN_KINDS`) built from ``corpus``.

    Args:
        tokens: ``"word"``, ``"trigram"``, ``"sp"`` or ``"subword"``.
        corpus: sentences to build the vocabulary from (iterated once; optional for ``subword`` with ``source``).
        vocab_size: vocabulary size including ``[PAD]``/``[UNK]`` (see :data:`TOKENIZER_BUILDERS`).
        min_count: word/trigram: drop rarer tokens.
        lookup: word/trigram: how raw text is read (``"split"`` or ``"paranmt50m"``).
        source: subword: a tokenizer to adapt (tokenizer.json, model directory, Hub id or ``tokenizers`` object).

    Raises:
        VocabularyError: ``vocab_size`` below 3, a corpus that gives no token (none at all, or none seen
            ``min_count`` times), or (sp) a ``vocab_size`` smaller than the corpus's characters.
    """
    if tokens not in TOKENIZER_BUILDERS:
        raise ValueError(f"unknown token kind {tokens!r}; choose one of {TOKEN_KINDS}")
    if source is not None and tokens != "subword":
        raise ValueError("a tokenizer to adapt (source) is for subword tokens only")
    check_vocab_size(vocab_size)
    builder, _ = TOKENIZER_BUILDERS[tokens]
    tok = builder(corpus, vocab_size, min_count, lookup, source)
    if len(tok) < MIN_VOCAB_SIZE:
        rare = f" seen at least min_count={min_count} times" if min_count > 1 else ""
        hint = "give a lower min_count (or more text)" if rare else "give a corpus with text"
        raise VocabularyError(f"the corpus gives no {tokens} token{rare}: the vocabulary would hold only [PAD] and "
                              f"[UNK]; {hint}")
    return tok


def check_vocab_size(vocab_size: int | None) -> None:
    """Refuse a vocabulary size with no room for a token besides ``[PAD]`` and ``[UNK]`` (None: the default).

    Raises:
        VocabularyError: ``vocab_size`` below :data:`MIN_VOCAB_SIZE`.
    """
    if vocab_size is not None and vocab_size < MIN_VOCAB_SIZE:
        raise VocabularyError(f"vocab_size={vocab_size} leaves no room for a token besides [PAD] and [UNK]: give at "
                              f"least {MIN_VOCAB_SIZE}")


__all__ = ["MIN_VOCAB_SIZE", "TOKENIZER_BUILDERS", "TOKEN_KINDS", "VocabularyError", "build_tokenizer",
           "check_vocab_size"]

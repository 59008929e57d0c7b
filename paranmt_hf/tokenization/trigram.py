"""Character-trigram tokenizers (ParaNMT-50M's ``-wordtype 3grams``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..modeling.tokenization_paranmt import ParaNMTTokenizer, char_trigrams
from .word import select_vocab, split_words, with_specials


def count_trigrams(corpus: Iterable[str]) -> Counter[str]:
    """Character-trigram frequencies of ``" " + lower-cased, word-split sentence + " "``."""
    counts: Counter[str] = Counter()
    for words in split_words(corpus, lowercase=True):
        counts.update(char_trigrams(words))
    return counts


def trigram_component(
    vocab: Iterable[str] | None = None,
    corpus: Iterable[str] | None = None,
    max_size: int | None = None,
    min_count: int = 1,
) -> dict:
    """The ``{"kind": "trigram", "vocab": [...]}`` component spec of a ParaNMTTokenizer."""
    if vocab is None:
        if corpus is None:
            raise ValueError("a trigram tokenizer needs `vocab` or `corpus`")
        vocab = select_vocab(count_trigrams(corpus), max_size, min_count)
    return {"kind": "trigram", "vocab": with_specials(vocab)}


def build_trigram_tokenizer(
    vocab: Iterable[str] | None = None,
    corpus: Iterable[str] | None = None,
    max_size: int | None = None,
    min_count: int = 1,
) -> ParaNMTTokenizer:
    """Build a character-trigram tokenizer from a trigram vocabulary or a corpus.

    Text is lower-cased, split into words like the word tokenizer, joined by spaces, padded with one space on each
    side, and cut into overlapping character trigrams; unknown trigrams become ``[UNK]``.

    Args:
        vocab: trigrams (``[PAD]``/``[UNK]`` put in front when missing).
        corpus: sentences to count trigrams from (used when ``vocab`` is None).
        max_size: keep at most this many corpus trigrams (most frequent first).
        min_count: keep corpus trigrams seen at least this often.
    """
    return ParaNMTTokenizer(components=[trigram_component(vocab, corpus, max_size, min_count)])

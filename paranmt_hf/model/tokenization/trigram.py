"""Character-trigram tokenizers (ParaNMT-50M's ``-wordtype 3grams``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ...modeling.segmentation_paranmt import LOOKUP_RULES, char_trigrams, paranmt50m_trigrams
from ...modeling.tokenization_paranmt import ParaNMTTokenizer
from .word import count_tokens, select_vocab, split_words, with_specials


def count_trigrams(corpus: Iterable[str]) -> Counter[str]:
    """Character-trigram frequencies of ``" " + lower-cased, word-split sentence + " "``."""
    return count_tokens(corpus, lambda texts: map(char_trigrams, split_words(texts, lowercase=True)))


def trigram_component(
    vocab: Iterable[str] | None = None,
    corpus: Iterable[str] | None = None,
    max_size: int | None = None,
    min_count: int = 1,
    lookup: str = "split",
) -> dict:
    """The ``{"kind": "trigram", "vocab": [...]}`` component spec of a ParaNMTTokenizer.

    ``lookup``: see ``LOOKUP_RULES``; corpus trigrams are counted as that lookup cuts them.
    """
    if lookup not in LOOKUP_RULES:
        raise ValueError(f"lookup must be one of {LOOKUP_RULES}, got {lookup!r}")
    if vocab is None:
        if corpus is None:
            raise ValueError("a trigram tokenizer needs `vocab` or `corpus`")
        if lookup == "paranmt50m":
            counts: Counter[str] = Counter(t for text in corpus for t in paranmt50m_trigrams(text))
        else:
            counts = count_trigrams(corpus)
        vocab = select_vocab(counts, max_size, min_count)
    spec = {"kind": "trigram", "vocab": with_specials(vocab)}
    if lookup != "split":
        spec["lookup"] = lookup
    return spec


def build_trigram_tokenizer(
    vocab: Iterable[str] | None = None,
    corpus: Iterable[str] | None = None,
    max_size: int | None = None,
    min_count: int = 1,
    lookup: str = "split",
) -> ParaNMTTokenizer:
    """Build a character-trigram tokenizer from a trigram vocabulary or a corpus.

    Text is lower-cased, split into words like the word tokenizer, joined by spaces, padded with one space on each
    side, and cut into overlapping character trigrams; unknown trigrams become ``[UNK]``. With
    ``lookup="paranmt50m"``, the trigrams are those of the original ParaNMT-50M code instead (``LOOKUP_RULES``:
    the stripped, lower-cased text as is, no word splitting).

    Args:
        vocab: trigrams (``[PAD]``/``[UNK]`` put in front when missing).
        corpus: sentences to count trigrams from (used when ``vocab`` is None).
        max_size: keep at most this many corpus trigrams (most frequent first).
        min_count: keep corpus trigrams seen at least this often.
        lookup: ``"split"`` or ``"paranmt50m"``.
    """
    return ParaNMTTokenizer(components=[trigram_component(vocab, corpus, max_size, min_count, lookup)])

"""Word n-gram overlap between the two sides of a pair (Wieting et al. 2017; ParaNMT-50M §5.4; PRAS §5.1).

Definition (papers): count the word n-grams of the reference and of the paraphrase, then divide the number of shared
n-grams by the number of n-grams of whichever side has fewer. Implementation (``add_overlap_labels.py``): tokens of
``s.strip().lower()``; the side with fewer n-grams (the reference on a tie) is walked n-gram by n-gram, each
occurrence counting once when it appears anywhere in the other side; a side with no n-gram gives 0.0.
"""

from __future__ import annotations

from collections.abc import Sequence

from .tokens import get_tokenizer


def ngram_overlap(tokens_a: Sequence[str], tokens_b: Sequence[str], n: int = 3) -> float:
    """Share of the shorter side's word n-grams (counted with repetition) that occur in the other side."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    grams_a = [tuple(tokens_a[i : i + n]) for i in range(len(tokens_a) - n + 1)]
    grams_b = [tuple(tokens_b[i : i + n]) for i in range(len(tokens_b) - n + 1)]
    if len(grams_b) < len(grams_a):
        start, end = grams_b, set(grams_a)
    else:
        start, end = grams_a, set(grams_b)
    if not start:
        return 0.0
    return sum(1 for gram in start if gram in end) / len(start)


def trigram_overlap(reference: str, paraphrase: str, tokenizer: str = "nltk") -> float:
    """The papers' trigram overlap of a pair: lower-cased tokens, shared trigrams / trigrams of the shorter side.

    Args:
        reference: first side (the English reference in ParaNMT).
        paraphrase: second side (the back-translation).
        tokenizer: ``"nltk"`` (``nltk.word_tokenize``, as the original code) or ``"whitespace"``.
    """
    tokenize = get_tokenizer(tokenizer)
    return ngram_overlap(tokenize(reference.strip().lower()), tokenize(paraphrase.strip().lower()), 3)

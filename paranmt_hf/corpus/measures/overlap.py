"""Word n-gram overlap between the two sides of a pair (Wieting et al. 2017; ParaNMT-50M §5.4; PRAS §5.1).

Definition (papers): count the word n-grams of the reference and of the paraphrase, then divide the number of shared
n-grams by the number of n-grams of whichever side has fewer. Implementation (``add_overlap_labels.py``): tokens of
``s.strip().lower()``; the side with fewer n-grams (the reference on a tie) is walked n-gram by n-gram, each
occurrence counting once when it appears anywhere in the other side; a side with no n-gram gives 0.0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..text.tokens import get_tokenizer, token_ids_many


def ngram_overlap(tokens_a: Sequence[str], tokens_b: Sequence[str], n: int = 3) -> float:
    """Share of the shorter side's word n-grams (counted with repetition) that occur in the other side."""
    if n == 3:
        grams_a = list(zip(tokens_a, tokens_a[1:], tokens_a[2:]))  # noqa: B905 (shorter slices end it)
        grams_b = list(zip(tokens_b, tokens_b[1:], tokens_b[2:]))  # noqa: B905
    elif n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    else:
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
        tokenizer: ``"nltk"`` (``nltk.word_tokenize``, as the original code), ``"fast"`` (its close approximation) or
            ``"whitespace"``.
    """
    tokenize = get_tokenizer(tokenizer)
    return ngram_overlap(tokenize(reference.strip().lower()), tokenize(paraphrase.strip().lower()), 3)


def overlaps_many(references: Sequence[str], paraphrases: Sequence[str], tokenizer: str = "nltk",
                  n: int = 3) -> list[float]:
    """:func:`trigram_overlap` (or the ``n``-gram overlap) of many pairs at once.

    Batched tokenisation, vectorised matching (:func:`ngram_overlaps`).
    """
    if len(references) != len(paraphrases):
        raise ValueError(f"need as many references as paraphrases ({len(references)} vs {len(paraphrases)})")
    if not references:
        return []
    flat, lengths = token_ids_many([t.strip().lower() for t in (*references, *paraphrases)], tokenizer)
    return ngram_overlaps(flat, lengths, n).tolist()


def trigram_overlaps(flat: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Trigram overlap of pairs of token-id sequences, vectorised (:func:`ngram_overlaps` with ``n=3``)."""
    return ngram_overlaps(flat, lengths, 3)


def _gram_keys(flat: np.ndarray, pos: np.ndarray, n: int) -> np.ndarray:
    """One integer per n-gram starting at ``pos`` (equal keys = equal n-grams)."""
    if not len(pos):
        return np.zeros(0, dtype=np.int64)
    vocab = int(flat.max()) + 1
    if vocab ** n < 2**62:
        keys = flat[pos].astype(np.int64)
        for k in range(1, n):
            keys = keys * vocab + flat[pos + k]
        return keys
    # too many distinct tokens for one int64: number the n-grams instead
    _, keys = np.unique(np.stack([flat[pos + k] for k in range(n)], axis=1), axis=0, return_inverse=True)
    return keys.reshape(-1)


def ngram_overlaps(flat: np.ndarray, lengths: np.ndarray, n: int = 3) -> np.ndarray:
    """n-gram overlap of pairs of token-id sequences, vectorised (same values as :func:`ngram_overlap`).

    Args:
        flat: the token ids of ``2 m`` texts back to back: the m references, then the m paraphrases.
        lengths: the number of tokens of each text.
        n: the n-gram order.

    Returns:
        ``m`` overlaps: occurrences of the shorter side's n-grams (the reference on a tie) found in the other
        side, divided by the shorter side's n-gram count (0.0 when it has none).
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    m = len(lengths) // 2
    if 2 * m != len(lengths):
        raise ValueError("need the token lengths of as many references as paraphrases")
    grams = np.maximum(lengths - (n - 1), 0)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    text = np.repeat(np.arange(2 * m), grams)  # the text of each n-gram
    first = np.concatenate(([0], np.cumsum(grams)[:-1]))
    pos = starts[text] + (np.arange(len(text)) - first[text])  # position of each n-gram's first token
    keys = _gram_keys(flat, pos, n)
    pair = text % m if m else text
    is_ref = text < m
    ref_grams, para_grams = grams[:m], grams[m:]
    start_is_ref = ~(para_grams < ref_grams)  # the side walked: the one with fewer n-grams, the reference on a tie
    walked = is_ref == start_is_ref[pair]
    # membership of (pair, n-gram) of the walked side in the other side: number the n-grams, then compare pairs
    _, dense = np.unique(keys, return_inverse=True)
    combined = pair.astype(np.int64) * (int(dense.max(initial=0)) + 1) + dense.reshape(-1)
    hit = np.isin(combined[walked], combined[~walked])
    hits = np.bincount(pair[walked], weights=hit, minlength=m)
    total = np.where(start_is_ref, ref_grams, para_grams).astype(np.float64)
    out = np.zeros(m, dtype=np.float64)
    nonzero = total > 0
    out[nonzero] = hits[nonzero] / total[nonzero]
    return out

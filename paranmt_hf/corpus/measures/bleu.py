"""Smoothed sentence BLEU of a translation against its reference (EMNLP 2017 §5.7's diversity measure).

E17 uses "a smoothed sentence-level BLEU variant from Nakov et al. (2012)": Moses'
``smoothedSentenceBleu(stats, 1, smoothBP=true)``, computed here from ``sacrebleu``'s sentence statistics
(``13a`` tokenisation, lower-cased like the overlap measures):

* every precision smoothed by +1, unigrams included: ``p_n = (m_n + 1) / (t_n + 1)``;
* the brevity penalty smoothed by +1 on the reference length: ``BP = min(1, exp(1 - (r + 1) / c))``;
* ``BLEU = BP * (p_1 p_2 p_3 p_4) ** (1/4)``, in [0, 1], 0 for an empty hypothesis.

The hypothesis is the back-translation (second side), the reference the English reference (first side).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ...utils.imports import require

MAX_ORDER = 4


@lru_cache(maxsize=2)
def _scorer(lowercase: bool) -> Any:
    metrics = require("sacrebleu.metrics", "filters")
    # effective_order only silences sacrebleu's advice for sentence BLEU: the statistics read here do not depend on it
    return metrics.BLEU(lowercase=lowercase, tokenize="13a", force=True, max_ngram_order=MAX_ORDER,
                        effective_order=True)


def smoothed_bleu(correct: Sequence[float], total: Sequence[float], hyp_len: int, ref_len: int) -> float:
    """Nakov et al.'s smoothed BLEU (+1 on every precision and on the reference length), in [0, 1].

    Args:
        correct: clipped n-gram matches, n = 1..4.
        total: n-gram counts of the hypothesis, n = 1..4.
        hyp_len: hypothesis length in tokens.
        ref_len: reference length in tokens.
    """
    metrics = require("sacrebleu.metrics", "filters")
    score = metrics.BLEU.compute_bleu([c + 1 for c in correct], [t + 1 for t in total], hyp_len, ref_len + 1,
                                      smooth_method="none", max_ngram_order=len(correct))
    return score.score / 100.0


def sentence_bleu(hypothesis: str, reference: str, lowercase: bool = True) -> float:
    """Smoothed sentence BLEU of ``hypothesis`` against ``reference`` (see the module docstring)."""
    stats = _scorer(lowercase).sentence_score(hypothesis, [reference])
    return smoothed_bleu(stats.counts, stats.totals, stats.sys_len, stats.ref_len)


def sentence_bleu_many(references: Sequence[str], translations: Sequence[str], lowercase: bool = True) -> np.ndarray:
    """:func:`sentence_bleu` of each translation against its reference."""
    if len(references) != len(translations):
        raise ValueError(f"need as many references as translations ({len(references)} vs {len(translations)})")
    return np.fromiter((sentence_bleu(t, r, lowercase) for r, t in zip(references, translations, strict=True)),
                       dtype=np.float64, count=len(references))

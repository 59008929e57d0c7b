"""The papers' training-data filters, as parameterised predicates over ``full``-style examples.

An example is a dict with ``reference``, ``paraphrase``, ``paraphrase_score``, ``reference_length`` and
``paraphrase_length`` (whitespace tokens, as ``extract_data.py`` counts them) and an optional ``trigram_overlap``
that a filter fills in when it needs it and it is missing (cheap tests run first; the result does not depend on the
order because every filter is a conjunction).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .langid import LanguageIdentifier
from .overlap import trigram_overlap
from .reader import Opener
from .records import FORMATS, iter_records


def ensure_overlap(example: dict[str, Any], tokenizer: str = "nltk") -> float:
    """The example's ``trigram_overlap``, computed (and stored) when missing."""
    value = example.get("trigram_overlap")
    if value is None:
        value = trigram_overlap(example["reference"], example["paraphrase"], tokenizer)
        example["trigram_overlap"] = value
    return value


@dataclass
class PRASFilter:
    """"Paraphrastic Representations at Scale" training filter (``extract_data.py`` of the PRAS code).

    Keeps a pair when ``sim_low <= paraphrase_score <= sim_high``, ``trigram_overlap <= max_overlap``,
    ``min_mean_tokens <= (len(ref.split()) + len(para.split())) / 2 <= max_mean_tokens`` and (``require_english``) the
    top fastText lid.176 label of both sides is English. Defaults: the released English model's data (0.4, 1.0, 0.7,
    5, 40). The PRAS README's script example uses ``sim_low=0.7, max_overlap=0.5``.
    """

    sim_low: float = 0.4
    sim_high: float = 1.0
    max_overlap: float = 0.7
    min_mean_tokens: float = 5.0
    max_mean_tokens: float = 40.0
    require_english: bool = True
    langid_model: str | None = None
    tokenizer: str = "nltk"
    _langid: LanguageIdentifier | None = field(default=None, init=False, repr=False)

    def __call__(self, example: dict[str, Any]) -> bool:
        """Whether ``example`` passes (fills in ``trigram_overlap`` when it was needed)."""
        score = example["paraphrase_score"]
        if not self.sim_low <= score <= self.sim_high:
            return False
        mean_tokens = (example["reference_length"] + example["paraphrase_length"]) / 2
        if mean_tokens < self.min_mean_tokens or mean_tokens > self.max_mean_tokens:
            return False
        if ensure_overlap(example, self.tokenizer) > self.max_overlap:
            return False
        if self.require_english:
            if self._langid is None:
                self._langid = LanguageIdentifier(self.langid_model)
            if not (self._langid.is_english(example["reference"]) and self._langid.is_english(example["paraphrase"])):
                return False
        return True


@dataclass
class ACL2018Filter:
    """ParaNMT-50M (ACL 2018) §5.4 training-set recipe: top paraphrase-score folds, both sides ≤ ``max_tokens``.

    The paper ranks all pairs by paraphrase score, splits them into ``num_folds`` tenths (fold 1 = lowest), and
    samples 5M pairs from the top two folds whose sentences both have at most 30 tokens. ``min_score`` /
    ``max_score`` are the score bounds of the selected folds: give them, or let :func:`fold_bounds` compute them
    from the corpus (a first pass over the scores). ``sample_rate`` keeps each selected pair with that probability
    (seeded), e.g. ``5e6 / selected`` to draw the paper's 5M.
    """

    min_score: float | None = None
    max_score: float | None = None
    folds: tuple[int, ...] = (9, 10)
    num_folds: int = 10
    max_tokens: int = 30
    sample_rate: float = 1.0
    seed: int = 1
    _rng: random.Random | None = field(default=None, init=False, repr=False)

    def __call__(self, example: dict[str, Any]) -> bool:
        """Whether ``example`` passes; needs ``min_score`` (see :func:`fold_bounds`)."""
        if self.min_score is None:
            raise ValueError("ACL2018Filter needs min_score (compute it with fold_bounds())")
        score = example["paraphrase_score"]
        if score < self.min_score or (self.max_score is not None and score > self.max_score):
            return False
        if example["reference_length"] > self.max_tokens or example["paraphrase_length"] > self.max_tokens:
            return False
        if self.sample_rate < 1.0:
            if self._rng is None:
                self._rng = random.Random(self.seed)
            return self._rng.random() < self.sample_rate
        return True


def fold_bounds(scores: np.ndarray, folds: Iterable[int] = (9, 10), num_folds: int = 10) -> tuple[float, float]:
    """``(min_score, max_score)`` spanning the given 1-based folds of the scores ranked ascending.

    Fold ``i`` holds ranks ``[(i-1)/k, i/k)`` of the sorted scores; the bounds are the scores at the first rank of
    the lowest selected fold and the last rank of the highest one.
    """
    folds = sorted(folds)
    if not folds or folds[0] < 1 or folds[-1] > num_folds:
        raise ValueError(f"folds must be within 1..{num_folds}, got {folds}")
    ordered = np.asarray(scores, dtype=np.float64).copy()
    ordered.sort()
    if ordered.size == 0:
        raise ValueError("no scores to compute fold bounds from")
    n = ordered.size
    lo_rank = (folds[0] - 1) * n // num_folds
    hi_rank = max(folds[-1] * n // num_folds - 1, lo_rank)
    return float(ordered[lo_rank]), float(ordered[hi_rank])


def corpus_fold_bounds(
    paths: Iterable[str | os.PathLike[str]],
    folds: Iterable[int] = (9, 10),
    num_folds: int = 10,
    member_pattern: str | None = None,
    opener: Opener = open,
) -> tuple[float, float]:
    """:func:`fold_bounds` over the scores of ``para-nmt-50m.txt``-format files.

    Holds every score as float64: 8 bytes per line, about 0.8 GB at peak for the 51.4M lines of ParaNMT-50M.
    """
    chunks: list[np.ndarray] = []
    buffer: list[float] = []
    for _, _, record in iter_records(paths, FORMATS["paranmt"], member_pattern=member_pattern, opener=opener):
        buffer.append(record["score"])
        if len(buffer) >= 1 << 20:
            chunks.append(np.asarray(buffer, dtype=np.float64))
            buffer = []
    chunks.append(np.asarray(buffer, dtype=np.float64))
    scores = np.concatenate(chunks)
    del chunks
    scores.sort()
    return fold_bounds(scores, folds, num_folds)

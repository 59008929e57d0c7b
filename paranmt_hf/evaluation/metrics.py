"""Scores: cosine of embedding pairs, STS correlations (papers' and mteb's) and bitext-mining error rates.

The implementations live with the ``evaluate`` metric modules that ship them (:mod:`paranmt_hf.metrics`), so
``paranmt-hf eval`` and ``evaluate.load(metric_path("paranmt_sts"))`` compute the same numbers with the same code.
"""

from __future__ import annotations

from ..metrics.paranmt_sts.sts_protocol import (
    correlations,
    grouped_mean,
    mteb_paired_cosine,
    paired_cosine,
    paper_scores,
    sts_correlations,
)
from ..metrics.paranmt_tatoeba.mining import (
    bitext_error_rates,
    mining_scores,
    nearest_neighbour_errors,
    nearest_neighbours,
)

__all__ = [
    "bitext_error_rates",
    "correlations",
    "grouped_mean",
    "mining_scores",
    "mteb_paired_cosine",
    "nearest_neighbour_errors",
    "nearest_neighbours",
    "paired_cosine",
    "paper_scores",
    "sts_correlations",
]

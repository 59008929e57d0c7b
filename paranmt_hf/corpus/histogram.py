"""Score-range histogram of a pair corpus, in the bins of ParaNMT-50M's Table 3, with mean trigram overlap.

:class:`HistogramCounts` accumulates batches (vectorised); :class:`HistogramTask` does it per block of a file for
``paranmt-hf corpus histogram`` (on every core: block counts add up).
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.reader import Block
from ..data.records import parse_block
from .overlap import overlaps_many
from .pipeline import BlockResult, BlockTask

# Table 3 of ParaNMT-50M: (-0.1, 0.2], (0.2, 0.4], (0.4, 0.6], (0.6, 0.8], (0.8, 1.0]
TABLE3_EDGES = (-0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
# Table 3's pair counts (millions) and mean trigram overlap (mean, std) per bin, for comparison.
TABLE3_PAPER = {"millions": [4.0, 3.8, 6.9, 14.4, 18.0],
                "overlap_mean": [0.00, 0.02, 0.07, 0.17, 0.35], "overlap_std": [0.0, 0.1, 0.1, 0.2, 0.2]}


def bin_label(low: float, high: float) -> str:
    """``"(low, high]"``."""
    return f"({low:g}, {high:g}]"


@dataclass
class HistogramCounts:
    """Per-bin pair counts and overlap sums over left-open score bins ``(edges[i], edges[i+1]]``."""

    edges: tuple[float, ...] = TABLE3_EDGES
    count: np.ndarray = field(init=False)
    sums: np.ndarray = field(init=False)
    squares: np.ndarray = field(init=False)
    below: int = 0
    above: int = 0
    total: int = 0

    def __post_init__(self) -> None:
        edges = list(self.edges)
        if sorted(edges) != edges or len(edges) < 2:
            raise ValueError(f"edges must be increasing, got {edges}")
        self.edges = tuple(edges)
        self.count = np.zeros(len(edges) - 1, dtype=np.int64)
        self.sums = np.zeros(len(edges) - 1, dtype=np.float64)
        self.squares = np.zeros(len(edges) - 1, dtype=np.float64)

    def add(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None],
            overlaps: Sequence[float | None], tokenizer: str = "nltk") -> None:
        """Count a batch; missing overlaps of in-range pairs are computed with ``tokenizer``."""
        if any(s is None for s in scores):
            raise ValueError("the histogram needs a score for every pair (add them with `paranmt-hf corpus annotate`)")
        score = np.asarray(scores, dtype=np.float64)
        self.total += len(score)
        edges = np.asarray(self.edges)
        low, high = score <= edges[0], score > edges[-1]
        self.below += int(low.sum())
        self.above += int(high.sum())
        rows = np.flatnonzero(~(low | high))
        bins = np.searchsorted(edges, score[rows], side="left") - 1
        values = [overlaps[i] for i in rows]
        todo = [k for k, v in enumerate(values) if v is None]
        for k, v in zip(todo, overlaps_many([text_a[rows[k]] for k in todo], [text_b[rows[k]] for k in todo],
                                            tokenizer), strict=True):
            values[k] = v
        ovl = np.asarray(values, dtype=np.float64)
        size = len(self.count)
        self.count += np.bincount(bins, minlength=size)
        self.sums += np.bincount(bins, weights=ovl, minlength=size)
        self.squares += np.bincount(bins, weights=ovl * ovl, minlength=size)

    def merge(self, other: HistogramCounts) -> None:
        """Add another accumulator's counts (same edges)."""
        self.count += other.count
        self.sums += other.sums
        self.squares += other.squares
        self.below += other.below
        self.above += other.above
        self.total += other.total

    def result(self) -> dict[str, Any]:
        """The histogram as a JSON-friendly dict (mean ± std overlap per bin; NaN for empty bins)."""
        bins = []
        for i in range(len(self.count)):
            count = int(self.count[i])
            mean = float(self.sums[i] / count) if count else float("nan")
            var = max(float(self.squares[i] / count) - mean * mean, 0.0) if count else float("nan")
            bins.append({"range": bin_label(self.edges[i], self.edges[i + 1]), "count": count,
                         "share": count / self.total if self.total else 0.0, "overlap_mean": mean,
                         "overlap_std": math.sqrt(var)})
        return {"edges": list(self.edges), "total": self.total, "below": self.below, "above": self.above,
                "bins": bins}


def score_histogram(
    records: Iterable[Mapping[str, Any]],
    edges: Sequence[float] = TABLE3_EDGES,
    tokenizer: str = "nltk",
    score_key: str = "score",
    overlap_key: str = "overlap",
) -> dict[str, Any]:
    """Count pairs per left-open score bin ``(edges[i], edges[i+1]]`` with mean ± std trigram overlap (streaming).

    Records without a precomputed overlap get one computed with ``tokenizer``. Scores outside the bins are counted
    in ``below`` / ``above``.
    """
    counts = HistogramCounts(tuple(edges))
    iterator = iter(records)
    while chunk := list(itertools.islice(iterator, 8192)):
        counts.add([r["text_a"] for r in chunk], [r["text_b"] for r in chunk], [r[score_key] for r in chunk],
                   [r.get(overlap_key) for r in chunk], tokenizer)
    return counts.result()


@dataclass
class HistogramTask(BlockTask):
    """One block's :class:`HistogramCounts` (the payload)."""

    fmt: str = "pairs"
    strict: bool = False
    tokenizer: str = "nltk"
    edges: tuple[float, ...] = TABLE3_EDGES

    def __call__(self, block: Block) -> BlockResult:
        """The result of one block."""
        parsed = parse_block(block, self.fmt, self.strict)
        counts = HistogramCounts(self.edges)
        counts.add(parsed.text_a, parsed.text_b, parsed.score, parsed.overlap, self.tokenizer)
        return BlockResult(counts, block.lines, report=parsed.report)


def plot_histogram(histogram: Mapping[str, Any], path: str | os.PathLike[str], title: str = "") -> None:
    """Bar chart of the pair share per score bin, labelled with mean trigram overlap (needs matplotlib)."""
    from ..utils.imports import require

    require("matplotlib", "plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = histogram["bins"]
    fig, ax = plt.subplots(figsize=(7, 4))
    bars = ax.bar([b["range"] for b in bins], [100 * b["share"] for b in bins], color="#4c72b0")
    for bar, b in zip(bars, bins, strict=True):
        if b["count"]:
            ax.annotate(f"ovl {b['overlap_mean']:.2f}±{b['overlap_std']:.2f}\nn={b['count']:,}",
                        (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    ax.set_xlabel("paraphrase score range")
    ax.set_ylabel("% of pairs")
    ax.set_title(title or f"{histogram['total']:,} pairs by paraphrase score (bins of ParaNMT-50M Table 3)")
    ax.margins(y=0.2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

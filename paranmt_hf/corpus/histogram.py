"""Score-range histogram of a pair corpus, in the bins of ParaNMT-50M's Table 3, with mean trigram overlap."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .overlap import trigram_overlap

# Table 3 of ParaNMT-50M: (-0.1, 0.2], (0.2, 0.4], (0.4, 0.6], (0.6, 0.8], (0.8, 1.0]
TABLE3_EDGES = (-0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
# Table 3's pair counts (millions) and mean trigram overlap (mean, std) per bin, for comparison.
TABLE3_PAPER = {"millions": [4.0, 3.8, 6.9, 14.4, 18.0],
                "overlap_mean": [0.00, 0.02, 0.07, 0.17, 0.35], "overlap_std": [0.0, 0.1, 0.1, 0.2, 0.2]}


def bin_label(low: float, high: float) -> str:
    """``"(low, high]"``."""
    return f"({low:g}, {high:g}]"


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
    edges = list(edges)
    if sorted(edges) != edges or len(edges) < 2:
        raise ValueError(f"edges must be increasing, got {edges}")
    n = [0] * (len(edges) - 1)
    sums = [0.0] * len(n)
    squares = [0.0] * len(n)
    below = above = total = 0
    for record in records:
        score = record[score_key]
        if score is None:
            raise ValueError("the histogram needs a score for every pair (add them with `paranmt-hf corpus annotate`)")
        total += 1
        if score <= edges[0]:
            below += 1
            continue
        if score > edges[-1]:
            above += 1
            continue
        i = next(k for k in range(len(n)) if score <= edges[k + 1])
        overlap = record.get(overlap_key)
        if overlap is None:
            overlap = trigram_overlap(record["text_a"], record["text_b"], tokenizer)
        n[i] += 1
        sums[i] += overlap
        squares[i] += overlap * overlap
    bins = []
    for i, count in enumerate(n):
        mean = sums[i] / count if count else float("nan")
        var = max(squares[i] / count - mean * mean, 0.0) if count else float("nan")
        bins.append({"range": bin_label(edges[i], edges[i + 1]), "count": count,
                     "share": count / total if total else 0.0, "overlap_mean": mean, "overlap_std": math.sqrt(var)})
    return {"edges": edges, "total": total, "below": below, "above": above, "bins": bins}


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

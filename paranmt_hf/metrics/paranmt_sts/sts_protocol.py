"""STS scoring: the papers' protocol (Pearson x 100 per dataset, year averages) and mteb's correlations.

The one implementation of these scores: ``paranmt-hf eval`` (:mod:`paranmt_hf.evaluation`) and the ``paranmt_sts``
``evaluate`` metric both call it. It needs only NumPy and SciPy, so it travels with the metric to the Hub.

- :func:`paired_cosine`: the papers' cosine (float64, a zero vector gets 0, as ``evaluate_sts.py``).
- :func:`mteb_paired_cosine`: the cosine exactly as mteb computes it.
- :func:`sts_correlations`: every correlation of both protocols for one dataset's embedding pairs.
- :func:`paper_scores`: the papers' aggregation of similarity scores: Pearson (and Spearman) x 100 per dataset, the
  mean over the datasets of each group (a SemEval year), and the mean over groups (the STS12-16 headline number).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.nan_to_num(np.asarray(x, dtype=np.float64))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def paired_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b``, in float64.

    A zero vector gets cosine 0 (the papers' ``nan_to_num(cosine(...))``).
    """
    if a.shape != b.shape:
        raise ValueError(f"embedding shapes differ: {a.shape} vs {b.shape}")
    return np.sum(_unit(a) * _unit(b), axis=1)


def mteb_paired_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine exactly as mteb computes it (``1 - sklearn.paired_cosine_distances``), in the embeddings' dtype.

    ``1 - 0.5 * ||a/|a| - b/|b|||^2``: identical embeddings give exactly 1.0, so ties (and hence Spearman) match
    mteb's to the last bit. A zero vector is left unnormalised (cosine 0.5, as in mteb).
    """
    if a.shape != b.shape:
        raise ValueError(f"embedding shapes differ: {a.shape} vs {b.shape}")

    def unit(x: np.ndarray) -> np.ndarray:
        norms = np.sqrt(np.einsum("ij,ij->i", x, x))
        norms[norms < 10 * np.finfo(norms.dtype).eps] = 1.0
        return x / norms[:, None]

    diff = unit(a) - unit(b)
    return 1 - 0.5 * np.einsum("ij,ij->i", diff, diff)


def correlations(pred: Sequence[float] | np.ndarray, gold: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Pearson and Spearman correlation (0-1 scale) of two score lists; 0 when the predictions are constant.

    Raises:
        ValueError: different lengths, fewer than two pairs, or constant gold scores (the correlation is undefined:
            a gold file of equal scores is a broken gold file, never a score of 0).
    """
    from scipy.stats import pearsonr, spearmanr

    pred, gold = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if len(pred) != len(gold):
        raise ValueError(f"{len(pred)} predictions for {len(gold)} gold scores")
    if len(gold) < 2:
        raise ValueError("need at least two pairs to compute a correlation")
    if np.ptp(gold) == 0:
        raise ValueError(f"all {len(gold)} gold scores are equal ({gold[0]:g}): a correlation with them is undefined "
                         "(is it the right gold file?)")
    if np.ptp(pred) == 0:
        return 0.0, 0.0
    return float(pearsonr(pred, gold).statistic), float(spearmanr(pred, gold).statistic)


def sts_correlations(a: np.ndarray, b: np.ndarray, gold: Sequence[float]) -> dict[str, float]:
    """Correlations (0-1 scale) of the pairs' similarities with the gold scores, both protocols.

    - papers' protocol: ``paper_pearson`` / ``paper_spearman`` of the float64 cosine (0 for a zero vector, as
      ``evaluate_sts.py``); the papers report ``paper_pearson`` x 100.
    - mteb's protocol, computed as mteb does (same formulas, embeddings' own dtype): ``cosine_pearson``,
      ``cosine_spearman``, ``manhattan_*``, ``euclidean_*``, ``pearson``/``spearman`` (= cosine) and
      ``main_score`` = cosine Spearman.

    The two cosines differ by float rounding only (and for zero vectors), so the Pearsons agree to ~1e-7.
    """
    gold_arr = np.asarray(gold, dtype=np.float64)
    if len(gold_arr) != len(a):
        raise ValueError(f"{len(gold_arr)} gold scores for {len(a)} pairs")
    if not np.isfinite(gold_arr).all():
        raise ValueError(f"{int((~np.isfinite(gold_arr)).sum())} gold score(s) are not finite (nan/inf): the "
                         "correlations would be nan")
    a, b = np.asarray(a), np.asarray(b)
    if not np.issubdtype(a.dtype, np.floating):
        a, b = a.astype(np.float64), b.astype(np.float64)
    out: dict[str, float] = {}
    out["paper_pearson"], out["paper_spearman"] = correlations(paired_cosine(a, b), gold_arr)
    predictions = {
        "cosine": mteb_paired_cosine(a, b),
        "manhattan": -np.abs(a - b).sum(axis=-1),
        "euclidean": -np.sqrt(np.einsum("ij,ij->i", a - b, a - b)),
    }
    for name, pred in predictions.items():
        out[f"{name}_pearson"], out[f"{name}_spearman"] = correlations(pred, gold_arr)
    out["pearson"], out["spearman"] = out["cosine_pearson"], out["cosine_spearman"]
    out["main_score"] = out["cosine_spearman"]
    out["n_pairs"] = len(gold_arr)
    return out


def group_of(subset: str) -> str | None:
    """The group of a ``"group/dataset"`` subset name (``"STS12/MSRpar"`` -> ``"STS12"``), None without one."""
    return subset.split("/", 1)[0] if "/" in subset else None


def grouped_mean(per_subset: Mapping[str, float]) -> tuple[float, dict[str, float]]:
    """The papers' average of per-dataset scores: the mean over each group's datasets, then over groups.

    Subsets without a ``group/`` prefix are their own group. Returns ``(average, {group: group mean})``.

    Raises:
        ValueError: no scores.
    """
    if not per_subset:
        raise ValueError("no scores to average")
    groups: dict[str, list[float]] = {}
    for subset, value in per_subset.items():
        groups.setdefault(group_of(subset) or subset, []).append(float(value))
    means = {group: float(np.mean(values)) for group, values in groups.items()}
    return float(np.mean(list(means.values()))), means


def paper_scores(
    predictions: Sequence[float], references: Sequence[float], subsets: Sequence[str] | None = None
) -> dict[str, object]:
    """The papers' STS protocol on similarity scores (x 100).

    Args:
        predictions: the model's similarity of each pair (the papers: :func:`paired_cosine` of the embeddings).
        references: the gold scores.
        subsets: the dataset of each pair, ``"group/dataset"`` to average per group first (``"STS12/MSRpar"``:
            per SemEval year, as the papers); None: one dataset.

    Returns:
        ``pearson`` and ``spearman`` (the headline: the mean over groups of the mean over their datasets, or the
        mean over datasets, or the single dataset's), ``pearson_per_subset`` / ``spearman_per_subset``,
        ``pearson_per_group`` / ``spearman_per_group`` (when subsets carry groups) and ``n_pairs``.
    """
    pred, gold = np.asarray(predictions, dtype=np.float64), np.asarray(references, dtype=np.float64)
    if len(pred) != len(gold):
        raise ValueError(f"{len(pred)} predictions for {len(gold)} references")
    if subsets is None:
        pearson, spearman = correlations(pred, gold)
        return {"pearson": 100 * pearson, "spearman": 100 * spearman, "n_pairs": len(gold)}
    names = list(subsets)
    if len(names) != len(gold):
        raise ValueError(f"{len(names)} subset names for {len(gold)} pairs")
    per_pearson, per_spearman = {}, {}
    for subset in dict.fromkeys(names):
        mask = np.array([name == subset for name in names])
        p, s = correlations(pred[mask], gold[mask])
        per_pearson[subset], per_spearman[subset] = 100 * p, 100 * s
    out: dict[str, object] = {}
    out["pearson"], by_group_p = grouped_mean(per_pearson)
    out["spearman"], by_group_s = grouped_mean(per_spearman)
    out["pearson_per_subset"], out["spearman_per_subset"] = per_pearson, per_spearman
    if any(group_of(name) for name in per_pearson):
        out["pearson_per_group"], out["spearman_per_group"] = by_group_p, by_group_s
    out["n_pairs"] = len(gold)
    return out

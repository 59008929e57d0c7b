"""Bitext mining scores: LASER's Tatoeba error rate (both directions) and mteb's bitext-mining metrics.

The one implementation of these scores: ``paranmt-hf eval`` (:mod:`paranmt_hf.evaluation`) and the
``paranmt_tatoeba`` ``evaluate`` metric both call it. It needs only NumPy, so it travels with the metric to the Hub.
"""

from __future__ import annotations

import numpy as np


def _normalised(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float64 (a zero row stays zero)."""
    x = np.nan_to_num(np.asarray(x, dtype=np.float64))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def nearest_neighbours(queries: np.ndarray, targets: np.ndarray, chunk_size: int = 4096) -> np.ndarray:
    """Index in ``targets`` of each query's cosine nearest neighbour (ties resolve to the lowest index)."""
    if queries.shape != targets.shape:
        raise ValueError(f"bitext sides differ in shape: {queries.shape} vs {targets.shape}")
    q, t = _normalised(queries), _normalised(targets)
    best = [np.argmax(q[start : start + chunk_size] @ t.T, axis=1) for start in range(0, len(q), chunk_size)]
    return np.concatenate(best) if best else np.zeros(0, dtype=np.int64)


def nearest_neighbour_errors(queries: np.ndarray, targets: np.ndarray, chunk_size: int = 4096) -> int:
    """How many ``queries[i]`` have a cosine nearest neighbour in ``targets`` other than ``targets[i]``.

    This is LASER's Tatoeba similarity-search error (ties resolve to the lowest index, as ``argmax`` does).
    """
    best = nearest_neighbours(queries, targets, chunk_size)
    return int(np.sum(best != np.arange(len(best))))


def mining_scores(predictions: np.ndarray) -> dict[str, float]:
    """The bitext-mining metrics of mteb for predictions of gold pairs ``i -> i`` (0-1 scale).

    sklearn's ``average="weighted"`` precision, recall and F1 (every label has support 1, so they are means over
    labels) and accuracy, as mteb's ``AbsTaskBitextMining`` computes them.
    """
    n = len(predictions)
    correct = (predictions == np.arange(n)).astype(np.float64)
    counts = np.bincount(predictions, minlength=n)[:n].astype(np.float64)
    precision = np.divide(correct, counts, out=np.zeros(n), where=counts > 0)
    f1 = np.divide(2 * precision * correct, precision + correct, out=np.zeros(n), where=precision + correct > 0)
    return {"precision": float(precision.mean()), "recall": float(correct.mean()), "f1": float(f1.mean()),
            "accuracy": float(correct.mean())}


def bitext_error_rates(source: np.ndarray, english: np.ndarray) -> dict[str, float]:
    """Tatoeba error rates in % for both directions (``xx->en``: each source sentence retrieves its English side).

    Returns ``error_xx2en``, ``error_en2xx``, their mean ``error`` and ``accuracy`` = 1 - mean error / 100 (0-1
    scale), plus ``n_pairs``; and mteb's metrics of the ``xx->en`` direction (mteb's Tatoeba queries with the
    non-English side): ``xx2en_precision``, ``xx2en_recall``, ``xx2en_f1``, ``xx2en_accuracy`` and
    ``main_score`` = ``xx2en_f1`` (mteb's main score for Tatoeba).

    Raises:
        ValueError: the sides differ in shape, or are empty.
    """
    source, english = np.asarray(source), np.asarray(english)
    n = len(source)
    if n == 0:
        raise ValueError("no sentence pairs")
    x2e = nearest_neighbours(source, english)
    e_x2e = 100.0 * float(np.sum(x2e != np.arange(n))) / n
    e_e2x = 100.0 * nearest_neighbour_errors(english, source) / n
    mean = (e_x2e + e_e2x) / 2
    mteb = {f"xx2en_{k}": v for k, v in mining_scores(x2e).items()}
    return {
        "error_xx2en": e_x2e,
        "error_en2xx": e_e2x,
        "error": mean,
        "accuracy": 1.0 - mean / 100.0,
        **mteb,
        "main_score": mteb["xx2en_f1"],
        "n_pairs": n,
    }

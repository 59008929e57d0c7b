"""Scores: cosine of embedding pairs, STS correlations (papers' and mteb's) and bitext-mining error rates."""

from __future__ import annotations

from collections.abc import Sequence

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


def _correlations(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float]:
    from scipy.stats import pearsonr, spearmanr

    if np.ptp(pred) == 0 or np.ptp(gold) == 0:  # constant input: correlation undefined, report 0
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
    if len(gold_arr) < 2:
        raise ValueError("need at least two pairs to compute a correlation")
    if not np.isfinite(gold_arr).all():
        raise ValueError(f"{int((~np.isfinite(gold_arr)).sum())} gold score(s) are not finite (nan/inf): the "
                         "correlations would be nan")
    a, b = np.asarray(a), np.asarray(b)
    if not np.issubdtype(a.dtype, np.floating):
        a, b = a.astype(np.float64), b.astype(np.float64)
    out: dict[str, float] = {}
    out["paper_pearson"], out["paper_spearman"] = _correlations(paired_cosine(a, b), gold_arr)
    predictions = {
        "cosine": mteb_paired_cosine(a, b),
        "manhattan": -np.abs(a - b).sum(axis=-1),
        "euclidean": -np.sqrt(np.einsum("ij,ij->i", a - b, a - b)),
    }
    for name, pred in predictions.items():
        out[f"{name}_pearson"], out[f"{name}_spearman"] = _correlations(pred, gold_arr)
    out["pearson"], out["spearman"] = out["cosine_pearson"], out["cosine_spearman"]
    out["main_score"] = out["cosine_spearman"]
    out["n_pairs"] = len(gold_arr)
    return out


def nearest_neighbours(queries: np.ndarray, targets: np.ndarray, chunk_size: int = 4096) -> np.ndarray:
    """Index in ``targets`` of each query's cosine nearest neighbour (ties resolve to the lowest index)."""
    if queries.shape != targets.shape:
        raise ValueError(f"bitext sides differ in shape: {queries.shape} vs {targets.shape}")
    q, t = _unit(queries), _unit(targets)
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
    """
    n = len(source)
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

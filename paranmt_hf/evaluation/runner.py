"""Run evaluation tasks on an encoder and collect the scores in mteb's result layout.

Scores per dataset (mteb's ``hf_subset``) follow mteb's STS keys on the 0-1 scale (``cosine_pearson``,
``cosine_spearman``, ..., ``main_score`` = cosine Spearman, computed exactly as mteb does) plus the papers'
``paper_pearson`` / ``paper_spearman`` (float64 cosine, as ``evaluate_sts.py``). For STS12-16 a ``default``
subset adds what mteb itself reports for these tasks (Spearman over all pairs of the year pooled) and the papers'
number: ``paper_pearson_mean`` = mean over the year's datasets of Pearson r (x100 in tables; Wieting et al.).
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.sts import STSPairs
from .encoders import SupportsEncode, encode
from .metrics import bitext_error_rates, grouped_mean, sts_correlations
from .tasks import EvalTask, Pairs, eval_root, resolve_tasks

logger = logging.getLogger(__name__)


@dataclass
class TaskResult:
    """Scores of one task: ``scores[split]`` is a list of per-subset dicts (mteb's ``scores`` field)."""

    task_name: str
    kind: str
    scores: dict[str, list[dict[str, Any]]]
    evaluation_time: float
    dataset_revision: str = "local"
    paper_year: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def subset(self, name: str, split: str = "test") -> dict[str, Any]:
        """The score dict of one subset (``KeyError`` when absent)."""
        for entry in self.scores.get(split, []):
            if entry["hf_subset"] == name:
                return entry
        raise KeyError(f"{self.task_name}: no subset {name!r} in split {split!r}")

    @property
    def paper_score(self) -> float | None:
        """The papers' number for this task (x100): mean Pearson over datasets (STS), or mean accuracy (bitext)."""
        split = "test" if "test" in self.scores else next(iter(self.scores))
        if self.paper_year:
            return 100.0 * self.subset("default", split)["paper_pearson_mean"]
        entries = self.scores[split]
        key = "paper_pearson" if self.kind == "sts" else "accuracy"
        return 100.0 * float(np.mean([e[key] for e in entries]))


def _embed_unique(
    encoder: SupportsEncode, sentences: list[str], batch_size: int, progress: bool
) -> dict[str, np.ndarray]:
    unique = list(dict.fromkeys(sentences))
    vectors = encode(encoder, unique, batch_size=batch_size, show_progress_bar=progress)
    return dict(zip(unique, vectors, strict=True))


def _stack(table: dict[str, np.ndarray], sentences: list[str]) -> np.ndarray:
    return np.stack([table[s] for s in sentences]) if sentences else np.zeros((0, 0), dtype=np.float32)


def _score_sts(datasets: list[STSPairs], table: dict[str, np.ndarray], paper_year: bool) -> list[dict[str, Any]]:
    entries = []
    for ds in datasets:
        try:
            scores = sts_correlations(_stack(table, ds.sentences1), _stack(table, ds.sentences2), ds.scores)
        except ValueError as err:
            raise ValueError(f"dataset {ds.name}: {err}") from None
        entries.append({**scores, "hf_subset": ds.name, "languages": ds.languages, "n_skipped": ds.n_skipped})
    if paper_year and datasets:
        s1 = [s for ds in datasets for s in ds.sentences1]
        s2 = [s for ds in datasets for s in ds.sentences2]
        gold = [g for ds in datasets for g in ds.scores]
        pooled = sts_correlations(_stack(table, s1), _stack(table, s2), gold)
        pooled["paper_pearson_mean"] = grouped_mean({e["hf_subset"]: e["paper_pearson"] for e in entries})[0]
        pooled["paper_spearman_mean"] = grouped_mean({e["hf_subset"]: e["paper_spearman"] for e in entries})[0]
        entries.append({**pooled, "hf_subset": "default", "languages": ["eng-Latn"]})
    return entries


def run_task(
    encoder: SupportsEncode,
    task: EvalTask,
    root: str | os.PathLike[str],
    batch_size: int = 256,
    show_progress_bar: bool = False,
    max_pairs: int | None = None,
    data: dict[str, list[Pairs]] | None = None,
) -> TaskResult:
    """Evaluate one task.

    ``root`` is the data directory (or its ``eval`` folder); ``max_pairs`` keeps the first pairs of each dataset
    (quick checks only: never for reported numbers); ``data`` is the task's already loaded data (``task.load``).
    """
    start = time.perf_counter()
    if data is None:
        data = task.load(eval_root(root))
    if max_pairs is not None:
        data = {s: [_head(d, max_pairs) for d in ds] for s, ds in data.items()}
    sentences: list[str] = []
    for datasets in data.values():
        for ds in datasets:
            sentences += ds.sentences1 + ds.sentences2 if task.kind == "sts" else ds.source + ds.english
    table = _embed_unique(encoder, sentences, batch_size, show_progress_bar)
    scores: dict[str, list[dict[str, Any]]] = {}
    for split, datasets in data.items():
        if task.kind == "sts":
            scores[split] = _score_sts(datasets, table, task.paper_year)
        else:
            scores[split] = [
                {**bitext_error_rates(_stack(table, d.source), _stack(table, d.english)), "hf_subset": d.name,
                 "languages": d.languages}
                for d in datasets
            ]
    elapsed = time.perf_counter() - start
    logger.info("%s done in %.1fs", task.name, elapsed)
    return TaskResult(task.name, task.kind, scores, elapsed, task.source, task.paper_year)


def _head(ds: Pairs, n: int) -> Pairs:
    if isinstance(ds, STSPairs):
        return ds.subsample(n)
    return type(ds)(ds.lang, ds.source[:n], ds.english[:n])


def evaluate(
    encoder: SupportsEncode,
    tasks: list[str] | list[EvalTask] | str = "all",
    data_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 256,
    show_progress_bar: bool = False,
    download: bool = False,
    max_pairs: int | None = None,
) -> dict[str, TaskResult]:
    """Evaluate ``encoder`` on ``tasks`` (names, groups such as ``"sts12-16"``, STS-format folders, or tasks).

    Args:
        encoder: any object with ``encode(list[str]) -> [N, D]`` (see :mod:`paranmt_hf.evaluation.encoders`).
        tasks: what to run; default every task.
        data_dir: folder holding ``eval/sts`` and ``eval/tatoeba``; default ``$PARANMT_HF_DATA`` / ``../shared/data``.
        batch_size: sentences per ``encode`` call batch.
        show_progress_bar: forwarded to the encoder.
        download: fetch missing data from the canonical public sources (needs internet).
        max_pairs: keep the first ``max_pairs`` pairs of each dataset (smoke tests only).

    Returns:
        ``{task_name: TaskResult}`` in task order.
    """
    from ..utils.paths import data_dir as resolve_data_dir
    from .download import ensure_data

    task_list: list[EvalTask] = []
    for item in [tasks] if isinstance(tasks, str) else tasks:
        for task in [item] if isinstance(item, EvalTask) else resolve_tasks(item):
            if task.name not in {t.name for t in task_list}:
                task_list.append(task)
    needs_data = any(t.data_folders for t in task_list)  # STS-format folders given by path need no data dir
    root = resolve_data_dir(data_dir, must_exist=needs_data and not download)
    results = {}
    for task in task_list:
        ensure_data(eval_root(root), task.data_folders, download=download)
        results[task.name] = run_task(encoder, task, root, batch_size, show_progress_bar, max_pairs)
    return results


def paper_average(results: dict[str, TaskResult]) -> float | None:
    """The papers' headline number: the mean over STS12-16 of each year's mean Pearson x 100 (None if incomplete)."""
    years = [r for r in results.values() if r.paper_year]
    if len(years) < 5:
        return None
    split = {r.task_name: "test" if "test" in r.scores else next(iter(r.scores)) for r in years}
    per_dataset = {f"{r.task_name}/{e['hf_subset']}": 100.0 * e["paper_pearson"]
                   for r in years for e in r.scores[split[r.task_name]] if e["hf_subset"] != "default"}
    return grouped_mean(per_dataset)[0]  # the same average as the paranmt_sts metric

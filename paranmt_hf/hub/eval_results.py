"""Read ``paranmt-hf eval`` results (mteb's layout) for model cards: ``model-index`` entries and tables.

``paranmt-hf eval MODEL --output DIR`` writes ``DIR/<org>__<name>/<revision>/<Task>.json`` + ``model_meta.json``
(mteb's cache puts the same under ``<cache>/results/``); any level can be given. Numbers are read from the JSON,
never recomputed, reported x100; our scores sit under the ``"paranmt_hf"`` key (else ``scores`` is read):

- STS12-16: ``cosine_spearman`` of the pooled ``default`` subset (mteb's) and ``paper_pearson_mean`` (the papers');
- other STS tasks: every test subset mteb's task has, ``cosine_spearman`` and ``paper_pearson``;
- bitext mining (Tatoeba): mteb's ``f1``, our ``accuracy`` per language pair and the two error rates.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..data.eval_sets import EVAL_SETS, PAPER_YEARS
from ..evaluation.mteb_layout import EXTRA_KEY, full_scores, mteb_subset
from ..utils.tree import files_within, within

if TYPE_CHECKING:
    from huggingface_hub import EvalResult

logger = logging.getLogger(__name__)

MTEB_DATASETS = {name: spec.mteb_dataset for name, spec in EVAL_SETS.items() if spec.mteb_dataset}
"""Task -> the Hub id of mteb's copy of its data (the card's ``dataset_type``)."""

SPEARMAN_NAME = "cosine Spearman x100 (mteb protocol)"
PEARSON_NAME = "Pearson x100 (papers' protocol)"
YEAR_PEARSON_NAME = "Pearson x100 (papers' protocol: mean over the year's datasets)"
F1_NAME = "F1 x100 (mteb protocol: xx->en)"
ACCURACY_NAME = "accuracy x100 (1 - mean error rate of both directions)"


class EvalResultsError(ValueError):
    """The evaluation folder holds no usable results, or several models' results."""


@dataclass
class EvalSummary:
    """Evaluation results of one model: the task JSONs by task name and where they were read."""

    folder: Path
    tasks: dict[str, dict[str, Any]]
    model_meta: dict[str, Any] | None = None
    files: list[Path] = field(default_factory=list)
    """The folder's JSON files that lie inside the evaluation folder (links out of it skipped, warned once)."""

    @property
    def model_name(self) -> str:
        """The model name of the results (``model_meta.json``'s ``name``, else from the folder names)."""
        if self.model_meta and self.model_meta.get("name"):
            return str(self.model_meta["name"])
        return self.folder.parent.name.replace("__", "/", 1)

    @property
    def revision(self) -> str:
        """The results' model revision (folder name)."""
        return self.folder.name


def _is_task_json(path: Path) -> bool:
    if path.name == "model_meta.json" or path.suffix != ".json":
        return False
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "task_name" in data and isinstance(data.get("scores"), dict)


def find_results_folder(eval_dir: str | os.PathLike[str]) -> Path:
    """The one folder at or below ``eval_dir`` that holds task result JSON files.

    Raises:
        FileNotFoundError: ``eval_dir`` does not exist.
        NotADirectoryError: ``eval_dir`` is a file.
        EvalResultsError: no task JSON below it, or task JSONs in several folders (several models or revisions).
    """
    root = Path(eval_dir)
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(f"evaluation folder {root} is a file, not a folder: give the folder "
                                 "`paranmt-hf eval MODEL --output FOLDER` wrote")
    if not root.is_dir():
        raise FileNotFoundError(f"evaluation folder {root} does not exist")
    folders = sorted({p.parent for p in root.rglob("*.json")  # links out of it: skipped, and warned when read
                      if within(root, p) and p.is_file() and _is_task_json(p)})
    if not folders:
        raise EvalResultsError(f"no mteb-layout task result JSON below {root} (run `paranmt-hf eval MODEL --output "
                               f"{root}` first)")
    if len(folders) > 1:
        listing = ", ".join(str(f.relative_to(root)) for f in folders)
        raise EvalResultsError(f"{root} holds results of several models or revisions ({listing}): pass one of them")
    return folders[0]


def load_eval_results(eval_dir: str | os.PathLike[str]) -> EvalSummary:
    """Read every task JSON (and ``model_meta.json``) of the results folder below ``eval_dir``."""
    folder = find_results_folder(eval_dir)
    tasks: dict[str, dict[str, Any]] = {}
    files = files_within(eval_dir, sorted(folder.glob("*.json")), "result file")  # the one warning of a link out
    for path in files:
        if _is_task_json(path):
            data = json.loads(path.read_text(encoding="utf-8"))
            tasks[str(data["task_name"])] = data
    meta_path = folder / "model_meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() and within(eval_dir, meta_path) \
        else None
    return EvalSummary(folder, tasks, meta, files)


def check_results_model(summary: EvalSummary, model_dir: str | os.PathLike[str]) -> None:
    """Refuse results that record another model than ``model_dir`` (``eval`` records path and content hash).

    Results written before the record existed are accepted with a warning (they cannot be checked).

    Raises:
        EvalResultsError: a task's recorded model hash differs from ``model_dir``'s (tasks and paths named).
    """
    from ..utils.content_hash import model_fingerprint

    recorded = {name: (task.get(EXTRA_KEY) or {}).get("model") for name, task in summary.tasks.items()}
    unchecked = sorted(name for name, record in recorded.items() if not record)
    if unchecked:
        logger.warning("%s: the results of %s do not record which model they came from (written by an earlier "
                       "release): they cannot be checked against %s; run `paranmt-hf eval` again to record it",
                       summary.folder, ", ".join(unchecked), model_dir)
    current = model_fingerprint(model_dir)
    other = {name: record for name, record in recorded.items() if record and record.get("sha256") != current}
    if other:
        listing = "; ".join(f"{name}: {record.get('path')} (sha256 {str(record.get('sha256'))[:12]}…)"
                            for name, record in sorted(other.items()))
        raise EvalResultsError(
            f"{summary.folder} holds results of another model than {model_dir} (sha256 {current[:12]}…): "
            f"{listing}. Evaluate this model (`paranmt-hf eval {model_dir} --output DIR`) and publish with those "
            "results"
        )


def x100(value: Any) -> float | None:
    """A 0-1 score as x100, rounded to 4 decimals (the JSON keeps 6); ``None`` stays ``None``."""
    return None if value is None else round(100.0 * float(value), 4)


def _subset(task: dict[str, Any], name: str, split: str = "test") -> dict[str, Any] | None:
    return next((e for e in full_scores(task).get(split, []) if e.get("hf_subset") == name), None)


def _config(name: str, entry: dict[str, Any]) -> str | None:
    """The entry's subset name in mteb's task (``None``: mteb's task has no such subset)."""
    if "mteb_subset" in entry:
        return entry["mteb_subset"]
    target = mteb_subset(name, entry["hf_subset"])
    return target[0] if target else None


def _is_bitext(entry: dict[str, Any]) -> bool:
    return "error_xx2en" in entry or ("accuracy" in entry and "cosine_spearman" not in entry)


def _revision(task: dict[str, Any]) -> str | None:
    revision = task.get("dataset_revision")
    return None if revision in (None, "", "local") else str(revision)


def build_eval_results(summary: EvalSummary) -> list[EvalResult]:
    """``huggingface_hub.EvalResult`` entries (the card's ``model-index``) from the results' JSON."""
    from huggingface_hub import EvalResult

    out: list[EvalResult] = []

    def add(task: dict[str, Any], subset: str, metrics: list[tuple[str, str, float | None]], bitext: bool) -> None:
        name = task["task_name"]
        for metric_type, metric_name, value in metrics:
            if value is None:
                continue
            out.append(EvalResult(
                task_type="translation" if bitext else "sentence-similarity",
                task_name="BitextMining" if bitext else "STS",
                dataset_type=MTEB_DATASETS.get(name, name),
                dataset_name=f"{name} ({subset})",
                dataset_config=subset,
                dataset_split="test",
                dataset_revision=_revision(task),
                metric_type=metric_type,
                metric_name=metric_name,
                metric_value=value,
            ))

    for name, task in summary.tasks.items():
        if name in PAPER_YEARS:
            pooled = _subset(task, "default")
            if pooled is not None:
                add(task, "default", [("cosine_spearman", SPEARMAN_NAME, x100(pooled.get("cosine_spearman"))),
                                      ("pearsonr", YEAR_PEARSON_NAME, x100(pooled.get("paper_pearson_mean")))], False)
            continue
        for entry in full_scores(task).get("test", []):
            config = _config(name, entry)
            if config is None:  # e.g. STS17 track 4b: not a subset of mteb's dataset
                continue
            if _is_bitext(entry):
                add(task, config, [("f1", F1_NAME, x100(entry.get("xx2en_f1"))),
                                   ("accuracy", ACCURACY_NAME, x100(entry.get("accuracy")))], True)
            else:
                add(task, config, [("cosine_spearman", SPEARMAN_NAME, x100(entry.get("cosine_spearman"))),
                                   ("pearsonr", PEARSON_NAME, x100(entry.get("paper_pearson")))], False)
    return out


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(sum(kept) / len(kept), 4) if kept and len(kept) == len(values) else None


def eval_tables(summary: EvalSummary) -> dict[str, Any]:
    """Rows of the card's evaluation tables (all scores x100).

    Keys: ``years`` ``[(task, pearson, spearman)]`` with ``average`` ``(pearson, spearman)`` when all five years
    are present; ``datasets`` ``[(task, dataset, pearson, spearman, n_pairs)]``; ``other_sts``
    ``[(task, split, subset, pearson, spearman)]``; ``bitext`` ``[(task, subset, error_xx2en, error_en2xx)]``.
    """
    years, datasets, other, bitext = [], [], [], []
    for name, task in summary.tasks.items():
        for split, entries in full_scores(task).items():
            for e in entries:
                subset = e.get("hf_subset", "default")
                if _is_bitext(e):
                    bitext.append((name, subset, e.get("error_xx2en"), e.get("error_en2xx")))
                elif name in PAPER_YEARS and subset == "default":
                    years.append((name, x100(e.get("paper_pearson_mean")), x100(e.get("cosine_spearman"))))
                elif name in PAPER_YEARS:
                    datasets.append((name, subset, x100(e.get("paper_pearson")), x100(e.get("cosine_spearman")),
                                     e.get("n_pairs")))
                else:
                    other.append((name, split, subset, x100(e.get("paper_pearson")), x100(e.get("cosine_spearman"))))
    years.sort(key=lambda r: PAPER_YEARS.index(r[0]))
    average = None
    if [r[0] for r in years] == list(PAPER_YEARS):
        average = (_mean([r[1] for r in years]), _mean([r[2] for r in years]))
    return {"years": years, "average": average, "datasets": datasets, "other_sts": other, "bitext": bitext}

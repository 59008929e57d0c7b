"""Write results in mteb's layout and print them as a table.

Layout (as ``mteb.ResultCache`` writes it): ``<output>/<org>__<name>/<revision>/<TaskName>.json`` with one file per
task plus ``model_meta.json``. Each task file holds ``dataset_revision, task_name, mteb_version, scores,
evaluation_time, kg_co2_emissions, date`` and loads with ``mteb.TaskResult.from_disk``. ``scores`` holds only the
entries mteb's own task produces, so that mteb's ``get_score()`` reads back the number stock mteb computes; our
complete scores (papers' protocol, per-dataset numbers, extra splits) are under ``"paranmt_hf"``
(:mod:`paranmt_hf.evaluation.mteb_layout`), read back by :func:`read_task_json`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ..data.eval_sets import PAPER_YEARS
from .mteb_layout import EXTRA_KEY, LAYOUT_VERSION, full_scores, mteb_scores, mteb_subset
from .runner import TaskResult, paper_average


def _mteb_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mteb")
    except PackageNotFoundError:
        return None


def model_folder_name(name: str) -> str:
    """Mteb's folder name for a model name: ``org/name`` -> ``org__name``.

    Raises:
        UnsafeNameError: the name would not stay one folder (``..``).
    """
    from ..utils.atomic import path_name

    return path_name(name.replace("/", "__").replace(" ", "_"), "model name")


def results_folder(output_dir: str | os.PathLike[str], model_name: str, revision: str) -> Path:
    """``<output_dir>/<org>__<name>/<revision>``, both names confined to one folder each.

    Checked before any work (``paranmt-hf eval`` calls it before evaluating): ``output_dir`` and the folders above it
    that exist are folders, so that the results can be written there.

    Raises:
        UnsafeNameError: the name or the revision would lead out of ``output_dir`` (``..``, ``/``, absolute).
        NotADirectoryError: ``output_dir``, or a path above it, is a file.
    """
    from ..utils.atomic import path_name

    root = Path(output_dir)
    existing = next((p for p in (root, *root.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "" if existing == root else f" cannot be made: {existing}"
        raise NotADirectoryError(f"results folder {root}{where} is a file, not a folder: choose a folder for the "
                                 "results")
    return root / model_folder_name(model_name) / path_name(revision, "revision")


def _rounded(entry: dict[str, Any], version: str | None) -> dict[str, Any]:
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in entry.items()} | {"mteb_version": version}


def task_json(result: TaskResult) -> dict[str, Any]:
    """One task's result as mteb's JSON object (scores rounded to 6 decimals, as mteb does).

    ``scores`` is mteb's view (:func:`~paranmt_hf.evaluation.mteb_layout.mteb_scores`); ``"paranmt_hf"`` holds
    ``kind``, ``paper_year`` and our complete ``scores`` (each entry with ``mteb_subset``: its name in ``scores``,
    ``None`` when mteb's task has no such entry).
    """
    version = _mteb_version()
    ours = {}
    for split, entries in result.scores.items():
        ours[split] = []
        for entry in entries:
            target = mteb_subset(result.task_name, entry["hf_subset"], split)
            ours[split].append(_rounded(entry, version) | {"mteb_subset": target[0] if target else None})
    mteb = {split: [_rounded(e, version) for e in entries]
            for split, entries in mteb_scores(result.task_name, result.scores).items()}
    return {
        "dataset_revision": result.dataset_revision,
        "task_name": result.task_name,
        "mteb_version": version,
        "scores": mteb,
        "evaluation_time": round(result.evaluation_time, 4),
        "kg_co2_emissions": None,
        "date": time.time(),
        EXTRA_KEY: {"layout": LAYOUT_VERSION, "kind": result.kind, "paper_year": result.paper_year, "scores": ours},
    }


def read_task_json(source: str | os.PathLike[str] | dict[str, Any]) -> TaskResult:
    """A task JSON (path or loaded dict) back as a :class:`TaskResult` with our complete scores.

    Also reads files written before mteb's view was separated (everything in ``scores``).
    """
    data = source if isinstance(source, dict) else json.loads(Path(source).read_text(encoding="utf-8"))
    scores = full_scores(data)
    extra = data.get(EXTRA_KEY) or {}
    entries = [e for split in scores.values() for e in split]
    kind = extra.get("kind") or ("bitext" if any("error_xx2en" in e for e in entries) else "sts")
    name = str(data["task_name"])
    paper_year = bool(extra.get("paper_year", name in PAPER_YEARS and any(e.get("hf_subset") == "default"
                                                                         for e in entries)))
    clean = {split: [{k: v for k, v in e.items() if k not in ("mteb_version", "mteb_subset")} for e in split_entries]
             for split, split_entries in scores.items()}
    return TaskResult(name, kind, clean, float(data.get("evaluation_time") or 0.0),
                      str(data.get("dataset_revision", "local")), paper_year)


def read_results(folder: str | os.PathLike[str]) -> dict[str, TaskResult]:
    """Every task JSON of one ``<org>__<name>/<revision>`` folder, by task name (sorted by file name)."""
    out = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.name != "model_meta.json":
            result = read_task_json(path)
            out[result.task_name] = result
    return out


def write_results(
    results: dict[str, TaskResult],
    output_dir: str | os.PathLike[str],
    model_name: str,
    revision: str = "no_revision_available",
    model_meta: dict[str, Any] | None = None,
    *,
    model: str | os.PathLike[str] | dict[str, str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write every task JSON and ``model_meta.json`` atomically; returns the ``<org>__<name>/<revision>`` folder.

    Args:
        results: the task results (:func:`~paranmt_hf.evaluation.evaluate`).
        output_dir: the results root (mteb's layout below it); the folder is built aside, then renamed into place.
        model_name: ``org/name`` of the model.
        revision: the model revision (the folder's name).
        model_meta: ``model_meta.json`` (default: name and revision).
        model: the model folder or its :func:`~paranmt_hf.utils.content_hash.model_record` (``publish`` checks it).
        overwrite: replace an existing results folder of this model and revision (a second writer waits; last wins).

    Raises:
        OutputExistsError: the folder exists and ``overwrite`` is false.
    """
    from ..utils.atomic import RECORD_WAIT, atomic_output
    from ..utils.content_hash import model_record

    record = model if isinstance(model, dict) or model is None else model_record(model)
    folder = results_folder(output_dir, model_name, revision)
    meta = model_meta if model_meta is not None else {"name": model_name, "revision": revision}
    with atomic_output(folder, overwrite=overwrite, directory=True, wait=RECORD_WAIT) as tmp:
        for result in results.values():
            value = task_json(result)
            if record is not None:
                value[EXTRA_KEY]["model"] = record
            (tmp / f"{result.task_name}.json").write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
        (tmp / "model_meta.json").write_text(json.dumps(meta, indent=4, default=str) + "\n", encoding="utf-8")
    return folder


def summary_rows(results: dict[str, TaskResult]) -> list[tuple[str, str, str, float, float]]:
    """Rows ``(task, split, subset, headline x100, cosine Spearman / accuracy x100)`` for tables."""
    rows = []
    for result in results.values():
        for split, entries in result.scores.items():
            for e in entries:
                if result.kind == "sts":
                    first = e.get("paper_pearson_mean", e["paper_pearson"])
                    rows.append((result.task_name, split, e["hf_subset"], 100 * first, 100 * e["cosine_spearman"]))
                else:
                    rows.append((result.task_name, split, e["hf_subset"], e["error_xx2en"], e["error_en2xx"]))
    return rows


TABLE_COLUMNS = ("papers' Pearson", "mteb Spearman")
"""The two score columns of :func:`format_table`: each names its protocol."""

TABLE_LEGEND = {
    "sts": ("papers' Pearson: Pearson x100 of cosines; a SemEval year's 'default' row: the mean over its datasets",
            "mteb Spearman: Spearman x100 of cosines; a SemEval year's 'default' row: all its pairs pooled"),
    "bitext": ("Tatoeba: error % of nearest-neighbour mining, xx>en and en>xx (lower is better)",),
}
"""The lines under :func:`format_table`'s title that say what each column measures, per task kind."""


def format_table(results: dict[str, TaskResult], model_name: str = "") -> str:
    """A plain-text table whose header names each column's protocol.

    Per dataset: Pearson x100 of the papers' protocol and cosine Spearman x100 of mteb's; for STS12-16 the
    ``default`` row holds the papers' year mean of Pearson and mteb's pooled Spearman; Tatoeba rows hold error rates.
    """
    sts_width, subset_width = 16, 20
    lines = [f"# {model_name}" if model_name else "# results"]
    kinds = {result.kind for result in results.values()}
    lines += [f"  {line}" for kind, legend in TABLE_LEGEND.items() if kind in kinds for line in legend]
    lines.append(f"{'task':<14}{'split':<11}{'subset':<{subset_width}}{TABLE_COLUMNS[0]:>{sts_width}}"
                 f"{TABLE_COLUMNS[1]:>{sts_width}}")
    for task, split, subset, a, b in summary_rows(results):
        kind = results[task].kind
        if kind == "bitext":
            lines.append(f"{task:<14}{split:<11}{subset:<{subset_width}}{f'err xx>en {a:.1f}':>{sts_width}}"
                         f"{f'err en>xx {b:.1f}':>{sts_width}}")
        else:
            lines.append(f"{task:<14}{split:<11}{subset:<{subset_width}}{a:>{sts_width}.2f}{b:>{sts_width}.2f}")
    avg = paper_average(results)
    if avg is not None:
        lines.append(f"STS12-16 paper protocol (mean over years of mean Pearson x100): {avg:.2f}")
    return "\n".join(lines)

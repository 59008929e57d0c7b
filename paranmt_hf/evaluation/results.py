"""Write results in mteb's layout and print them as a table.

Layout (as ``mteb.ResultCache`` writes it): ``<output>/<org>__<name>/<revision>/<TaskName>.json`` with one file per
task plus ``model_meta.json``. Each task file holds ``dataset_revision, task_name, mteb_version, scores,
evaluation_time, kg_co2_emissions, date`` and loads with ``mteb.TaskResult.from_disk``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from .runner import TaskResult, paper_average


def _mteb_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mteb")
    except PackageNotFoundError:
        return None


def model_folder_name(name: str) -> str:
    """Mteb's folder name for a model name: ``org/name`` -> ``org__name``."""
    return name.replace("/", "__").replace(" ", "_")


def task_json(result: TaskResult) -> dict[str, Any]:
    """One task's result as mteb's JSON object (scores rounded to 6 decimals, as mteb does)."""
    version = _mteb_version()
    scores = {
        split: [
            {k: (round(v, 6) if isinstance(v, float) else v) for k, v in entry.items()} | {"mteb_version": version}
            for entry in entries
        ]
        for split, entries in result.scores.items()
    }
    return {
        "dataset_revision": result.dataset_revision,
        "task_name": result.task_name,
        "mteb_version": version,
        "scores": scores,
        "evaluation_time": round(result.evaluation_time, 4),
        "kg_co2_emissions": None,
        "date": time.time(),
    }


def write_results(
    results: dict[str, TaskResult],
    output_dir: str | os.PathLike[str],
    model_name: str,
    revision: str = "no_revision_available",
    model_meta: dict[str, Any] | None = None,
) -> Path:
    """Write every task JSON and ``model_meta.json``; returns the ``<org>__<name>/<revision>`` folder."""
    folder = Path(output_dir) / model_folder_name(model_name) / revision
    folder.mkdir(parents=True, exist_ok=True)
    for result in results.values():
        with open(folder / f"{result.task_name}.json", "w", encoding="utf-8") as handle:
            json.dump(task_json(result), handle, indent=2)
    meta = model_meta if model_meta is not None else {"name": model_name, "revision": revision}
    with open(folder / "model_meta.json", "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=4, default=str)
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


def format_table(results: dict[str, TaskResult], model_name: str = "") -> str:
    """A plain-text table: per dataset Pearson x100 (papers) and cosine Spearman x100 (mteb); Tatoeba error rates.

    For STS12-16, the ``default`` row holds the papers' year mean of Pearson and mteb's pooled Spearman.
    """
    lines = [f"# {model_name}" if model_name else "# results"]
    lines.append(f"{'task':<14}{'split':<11}{'subset':<20}{'pearson':>9}{'spearman':>10}")
    for task, split, subset, a, b in summary_rows(results):
        kind = results[task].kind
        if kind == "bitext":
            lines.append(f"{task:<14}{split:<11}{subset:<20}{'err xx>en':>9}{a:>6.1f}   err en>xx {b:.1f}")
        else:
            lines.append(f"{task:<14}{split:<11}{subset:<20}{a:>9.2f}{b:>10.2f}")
    avg = paper_average(results)
    if avg is not None:
        lines.append(f"STS12-16 paper protocol (mean over years of mean Pearson x100): {avg:.2f}")
    return "\n".join(lines)

"""Run stock mteb tasks offline on a local copy of their data (the Hub is not needed).

mteb loads a task's data with ``datasets.load_dataset(**task.metadata.dataset)``. Pointing that at a local folder in
the same layout (``{"path": "/abs/folder", "revision": "local"}``) runs a stock task offline, with mteb's own
loading, evaluation and result files::

    tasks = local_mteb_tasks(["STSBenchmark", "STS12", "STS17", "Tatoeba"], data_dir="../shared/data",
                             cache_dir="mteb-local-data")
    results = mteb.evaluate(SentenceTransformer("my-model"), tasks, cache=None)

:func:`write_task_data` writes that folder for STS12–STS16 (each year pooled, as in mteb), STSBenchmark, STS17 and
Tatoeba from the files of ``PARANMT_HF_DATA``. Subsets mteb has but the local data lacks are left out of the task
(``task.hf_subsets``), so the scores cover exactly the data given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..data.eval_sets import EVAL_SETS
from ..data.sts import STSPairs
from ..utils.imports import require
from .tasks import eval_root

LOCAL_REVISION = "local"
SUPPORTED = tuple(name for name, spec in EVAL_SETS.items() if spec.mteb_dataset is not None)


def _pooled(parts: list[STSPairs]) -> dict[str, list[Any]]:
    return {
        "sentence1": [s for p in parts for s in p.sentences1],
        "sentence2": [s for p in parts for s in p.sentences2],
        "score": [float(g) for p in parts for g in p.scores],
    }


def _task_tables(task_name: str, root: Path) -> dict[str, dict[str, dict[str, list[Any]]]]:
    """``{subset: {split: columns}}`` of one task from the local evaluation files (monolingual: ``default``)."""
    spec = EVAL_SETS.get(task_name)
    if spec is None or spec.mteb_dataset is None:
        raise ValueError(f"no local data layout for mteb task {task_name!r}; supported: {SUPPORTED}")
    loaded = spec.load(root, list(spec.all_subsets) if spec.all_subsets else None)
    if spec.kind == "bitext":
        return {pairs.name: {split: {"sentence1": pairs.source, "sentence2": pairs.english}}
                for split, items in loaded.items() for pairs in items}
    if spec.mteb_subsets is not None:
        return {spec.mteb_subsets[pairs.name][0]: {split: _pooled([pairs])}
                for split, items in loaded.items() for pairs in items if pairs.name in spec.mteb_subsets}
    return {"default": {split: _pooled(items) for split, items in loaded.items()}}


def write_task_data(task_name: str, output_dir: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None
                    ) -> tuple[Path, list[str]]:
    """Write the local data folder of an mteb task; returns ``(folder, subsets written)``.

    One Parquet file per subset and split (``data/<subset>/<split>.parquet``) and a README whose ``configs:`` name
    every subset, which is what ``datasets.load_dataset(folder, name=subset)`` reads. Multilingual tasks also get a
    ``default`` config holding every subset's rows with a ``lang`` column (what mteb's "fast loading" tasks, such as
    STS17, read); monolingual tasks have only ``default``.
    """
    from ..utils.paths import data_dir as resolve_data_dir

    datasets = require("datasets", "data")
    tables = _task_tables(task_name, eval_root(resolve_data_dir(data_dir)))
    if list(tables) != ["default"]:
        merged: dict[str, dict[str, list[Any]]] = {}
        for subset, splits in tables.items():
            for split, columns in splits.items():
                target = merged.setdefault(split, {key: [] for key in (*columns, "lang")})
                for key, values in columns.items():
                    target[key].extend(values)
                target["lang"].extend([subset] * len(next(iter(columns.values()))))
        tables = {"default": merged, **tables}
    out = Path(output_dir)
    configs = []
    for subset, splits in tables.items():
        files = []
        for split, columns in splits.items():
            path = out / "data" / subset / f"{split}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            datasets.Dataset.from_dict(columns).to_parquet(str(path))
            files.append(f"  - split: {split}\n    path: data/{subset}/{split}.parquet")
        default = "  default: true\n" if subset == "default" else ""
        configs.append(f"- config_name: {subset}\n{default}  data_files:\n" + "\n".join(files))
    (out / "README.md").write_text("---\nconfigs:\n" + "\n".join(configs) + "\n---\n"
                                   f"Local copy of the evaluation data of mteb's {task_name} (paranmt_hf).\n")
    return out, [name for name in tables if name != "default" or len(tables) == 1]


def local_mteb_task(task_name: str, data_dir: str | os.PathLike[str] | None = None,
                    cache_dir: str | os.PathLike[str] = "mteb-local-data") -> Any:
    """Mteb's own task ``task_name`` reading its data from a local folder (written under ``cache_dir`` once)."""
    mteb = require("mteb", "eval")
    folder = Path(cache_dir).resolve() / task_name
    if (folder / "README.md").is_file():
        names = [line.split(":", 1)[1].strip() for line in (folder / "README.md").read_text().splitlines()
                 if line.startswith("- config_name:")]
        subsets = [name for name in names if name != "default" or len(names) == 1]
    else:
        folder, subsets = write_task_data(task_name, folder, data_dir)
    task = mteb.get_task(task_name)
    task.metadata.dataset = {"path": str(folder), "revision": LOCAL_REVISION}
    if task.metadata.is_multilingual:
        task.hf_subsets = [s for s in task.hf_subsets if s in subsets]
    return task


def local_mteb_tasks(names: list[str], data_dir: str | os.PathLike[str] | None = None,
                     cache_dir: str | os.PathLike[str] = "mteb-local-data") -> list[Any]:
    """:func:`local_mteb_task` for several task names."""
    return [local_mteb_task(name, data_dir, cache_dir) for name in names]

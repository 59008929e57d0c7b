"""The evaluation tasks, by name: what data each reads and how it is scored.

The tasks are the evaluation sets of :data:`paranmt_hf.data.eval_sets.EVAL_SETS`, named as mteb names them:
``STS12`` ... ``STS16``, ``STSBenchmark``, ``STS17``, ``Tatoeba``. A name may carry a
subset filter after a colon (``STS17:en-en``, ``Tatoeba:fra,deu``, ``STSBenchmark:validation``). Groups:
``sts12-16`` (the papers' headline average: STS12 ... STS16) and ``paper`` (the same five years, named for the
papers' tables), ``sts`` (all STS tasks), ``all``. Any directory holding
``STS.input.<name>.txt`` + ``STS.gs.<name>.txt`` files is a task too (named after the folder).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..data import sts
from ..data.errors import UnknownTaskError
from ..data.eval_sets import EVAL_SETS, PAPER_YEARS, EvalSet, Pairs

STS_TASKS = [name for name, spec in EVAL_SETS.items() if spec.kind == "sts"]
ALL_TASKS = list(EVAL_SETS)
GROUPS: dict[str, list[str]] = {"sts12-16": list(PAPER_YEARS), "paper": list(PAPER_YEARS), "sts": STS_TASKS,
                                "all": ALL_TASKS}


@dataclass
class EvalTask:
    """One task: ``kind`` is ``"sts"`` or ``"bitext"``; ``load(root)`` returns ``{split: [datasets]}``.

    ``root`` is the ``eval`` folder of the data directory (holding ``sts/`` and ``tatoeba/``). ``source`` names the
    data (mteb's ``dataset_revision`` field in the result JSON).
    """

    name: str
    kind: str
    load: Callable[[Path], dict[str, list[Pairs]]]
    paper_year: bool = False
    source: str = "local"
    description: str = ""
    data_folders: tuple[str, ...] = ()
    """Folders below ``root`` that the task reads (for download checks)."""


def _set_task(spec: EvalSet, subsets: list[str] | None) -> EvalTask:
    return EvalTask(spec.name, spec.kind, lambda root: spec.load(root, subsets), paper_year=spec.paper_year,
                    description=spec.description, data_folders=spec.folders)


def _dir_task(path: Path) -> EvalTask:
    def load(root: Path) -> dict[str, list[Pairs]]:
        return {"test": sts.load_sts_dir(path)}

    return EvalTask(f"STSDir-{path.resolve().name}", "sts", load, source=str(path.resolve()))


def get_task(spec: str) -> EvalTask:
    """The task for one name (``"STS12"``, ``"STS17:en-en"``, ``"Tatoeba:fra"``) or STS-format directory.

    Raises:
        UnknownTaskError: an unknown name (a ``KeyError``).
    """
    if os.path.isdir(spec):
        return _dir_task(Path(spec))
    name, _, rest = spec.partition(":")
    subsets = [s for s in rest.split(",") if s] or None
    canonical = {t.lower(): t for t in ALL_TASKS} | {"stsb": "STSBenchmark", "sts-b": "STSBenchmark"}
    key = canonical.get(name.lower())
    if key is None:
        close = difflib.get_close_matches(name.lower(), list(canonical) + list(GROUPS), n=1, cutoff=0.6)
        hint = f"did you mean {canonical.get(close[0], close[0])}? " if close else ""
        raise UnknownTaskError(f"unknown task {spec!r}: {hint}use one of {', '.join(ALL_TASKS)}, a group "
                               f"({', '.join(sorted(GROUPS))}) or an STS-format folder")
    return _set_task(EVAL_SETS[key], subsets)


def resolve_tasks(specs: Sequence[str] | str) -> list[EvalTask]:
    """Expand groups into tasks, keeping order; a task named twice keeps its first spec."""
    if isinstance(specs, str):
        specs = [specs]
    tasks: dict[str, EvalTask] = {}
    for spec in specs:
        for name in GROUPS.get(spec.lower(), [spec]):
            task = get_task(name)
            tasks.setdefault(task.name, task)  # the first spec of a task wins
    return list(tasks.values())


def eval_root(data_dir: str | os.PathLike[str]) -> Path:
    """The folder holding ``sts/`` and ``tatoeba/``: ``data_dir/eval``, or ``data_dir`` itself when it holds them.

    A data directory that holds neither (e.g. a new one that ``--download`` fills) gets the standard ``eval/``.
    """
    base = Path(data_dir)
    if (base / "eval").is_dir() or not any((base / name).is_dir() for name in ("sts", "tatoeba")):
        return base / "eval"
    return base

"""The evaluation tasks, by name: what data each reads and how it is scored.

Names follow mteb's task names: ``STS12`` ... ``STS16``, ``STSBenchmark``, ``STS17``, ``Tatoeba``. A name may carry a
subset filter after a colon (``STS17:en-en``, ``Tatoeba:fra,deu``, ``STSBenchmark:validation``). Groups:
``sts12-16`` (the papers' headline average), ``sts`` (all STS tasks), ``all``. Any directory holding
``STS.input.<name>.txt`` + ``STS.gs.<name>.txt`` files is a task too (named after the folder).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..data import sts, tatoeba

PAPER_YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]
STS_TASKS = [*PAPER_YEARS, "STSBenchmark", "STS17"]
ALL_TASKS = [*STS_TASKS, "Tatoeba"]
GROUPS: dict[str, list[str]] = {"sts12-16": PAPER_YEARS, "paper": PAPER_YEARS, "sts": STS_TASKS, "all": ALL_TASKS}

Pairs = sts.STSPairs | tatoeba.BitextPairs


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

    @property
    def data_folders(self) -> list[str]:
        """Folders below ``root`` that the task reads (for download checks)."""
        if self.kind == "bitext":
            return ["tatoeba"]
        if self.name in sts.STS_YEARS:
            return [f"sts/{sts.STS_YEARS[self.name][0]}"]
        return {"STSBenchmark": ["sts/STSBenchmark"], "STS17": ["sts/STS17"]}.get(self.name, [])


def _filter(items: list[Pairs], wanted: list[str] | None, task: str) -> list[Pairs]:
    if not wanted:
        return items
    names = {getattr(x, "name", None) for x in items} | {getattr(x, "lang", None) for x in items}
    missing = [w for w in wanted if w not in names]
    if missing:
        raise KeyError(f"{task}: unknown subset(s) {missing}; available: {sorted(n for n in names if n)}")
    return [x for x in items if x.name in wanted or getattr(x, "lang", None) in wanted]


def _year_task(year: str, subsets: list[str] | None) -> EvalTask:
    def load(root: Path) -> dict[str, list[Pairs]]:
        return {"test": _filter(sts.load_sts_year(root / "sts", year), subsets, year)}

    return EvalTask(year, "sts", load, paper_year=True, description=f"SemEval {year} English test sets")


def _stsb_task(splits: list[str] | None) -> EvalTask:
    def load(root: Path) -> dict[str, list[Pairs]]:
        return {s: [sts.load_stsb(root / "sts", s)] for s in (splits or ["validation", "test"])}

    return EvalTask("STSBenchmark", "sts", load, description="STS Benchmark (dev = validation, test)")


def _sts17_task(subsets: list[str] | None) -> EvalTask:
    def load(root: Path) -> dict[str, list[Pairs]]:
        return {"test": sts.load_sts17(root / "sts", subsets)}

    return EvalTask("STS17", "sts", load, description="SemEval-2017 STS, all tracks (mono- and cross-lingual)")


def _tatoeba_task(langs: list[str] | None) -> EvalTask:
    def load(root: Path) -> dict[str, list[Pairs]]:
        return {"test": tatoeba.load_tatoeba(root / "tatoeba", langs)}

    return EvalTask("Tatoeba", "bitext", load, description="LASER Tatoeba bitext mining, error rate both directions")


def _dir_task(path: Path) -> EvalTask:
    def load(root: Path) -> dict[str, list[Pairs]]:
        return {"test": sts.load_sts_dir(path)}

    return EvalTask(f"STSDir-{path.resolve().name}", "sts", load, source=str(path.resolve()))


def get_task(spec: str) -> EvalTask:
    """The task for one name (``"STS12"``, ``"STS17:en-en"``, ``"Tatoeba:fra"``) or STS-format directory.

    Raises:
        KeyError: an unknown name.
    """
    if os.path.isdir(spec):
        return _dir_task(Path(spec))
    name, _, rest = spec.partition(":")
    subsets = [s for s in rest.split(",") if s] or None
    canonical = {t.lower(): t for t in ALL_TASKS} | {"stsb": "STSBenchmark", "sts-b": "STSBenchmark"}
    key = canonical.get(name.lower())
    if key in sts.STS_YEARS:
        return _year_task(key, subsets)
    if key == "STSBenchmark":
        return _stsb_task(subsets)
    if key == "STS17":
        return _sts17_task(subsets)
    if key == "Tatoeba":
        return _tatoeba_task(subsets)
    raise KeyError(f"unknown task {spec!r}: use one of {ALL_TASKS}, a group {sorted(GROUPS)} or an STS-format folder")


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

"""The evaluation sets, one spec each: the one place that says what a set is, where it lies and how mteb names it.

Read by the evaluation (:mod:`paranmt_hf.evaluation.tasks`: which tasks exist, how each loads), the local mteb
copies and the mteb result layout (:mod:`paranmt_hf.evaluation.mteb_local`, :mod:`~paranmt_hf.evaluation.
mteb_layout`), the model cards (:mod:`paranmt_hf.hub.eval_results`), the download check and the decontamination of
the training data (:mod:`paranmt_hf.fetch`). Adding an evaluation set in a format read here (STS pairs + gold
scores, or line-aligned bitext) is an :class:`EvalSet` below plus its download source (``fetch/registry.py``, with
an installer in ``fetch/installers.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from . import sts, tatoeba
from .errors import UnknownTaskError

Pairs = sts.STSPairs | tatoeba.BitextPairs
Loader = Callable[[Path, "list[str] | None"], dict[str, list[Pairs]]]


@dataclass(frozen=True)
class EvalSet:
    """One evaluation set (= one mteb task).

    Attributes:
        name: the task name (mteb's).
        kind: ``"sts"`` (Pearson / Spearman of cosines) or ``"bitext"`` (translation mining: error rates).
        description: one line (``paranmt-hf eval --help``, results).
        folders: what it reads, relative to the ``eval`` folder of the data directory (download checks).
        load: ``(eval folder, subsets or None) -> {split: [datasets]}``; None: what the evaluation scores by default.
        all_subsets: the subsets (splits for STS-B) of the whole set: what its local mteb copy holds.
        held_out: ``(eval folder) -> every sentence of its files`` (the training data is cleaned against them).
        paper_year: a SemEval year of the papers' STS12-16 average.
        mteb_dataset: the Hub id of mteb's copy (model-card metadata); None: not an mteb task.
        mteb_splits: the splits mteb evaluates.
        mteb_pooled: mteb pools the set's datasets into one ``default`` subset (the SemEval years).
        mteb_subsets: our subset -> (mteb's ``hf_subset``, its languages); None: mteb's subsets are ours.
    """

    name: str
    kind: str
    description: str
    folders: tuple[str, ...]
    load: Loader
    held_out: Callable[[Path], Iterable[str]]
    all_subsets: tuple[str, ...] | None = None
    paper_year: bool = False
    mteb_dataset: str | None = None
    mteb_splits: tuple[str, ...] = ("test",)
    mteb_pooled: bool = False
    mteb_subsets: dict[str, tuple[str, list[str]]] | None = None


def _select(items: list[Pairs], wanted: list[str] | None, name: str) -> list[Pairs]:
    if not wanted:
        return items
    names = {getattr(x, "name", None) for x in items} | {getattr(x, "lang", None) for x in items}
    missing = [w for w in wanted if w not in names]
    if missing:
        raise UnknownTaskError(f"{name}: unknown subset(s) {', '.join(missing)}; available: "
                               f"{', '.join(sorted(n for n in names if n))}")
    return [x for x in items if x.name in wanted or getattr(x, "lang", None) in wanted]


def _year(year: str) -> EvalSet:
    folder, datasets = sts.STS_YEARS[year]
    return EvalSet(
        year, "sts", f"SemEval {year} English test sets ({', '.join(datasets)})", (f"sts/{folder}",),
        lambda root, subsets: {"test": _select(sts.load_sts_year(root / "sts", year), subsets, year)},
        lambda root: sts.input_sentences(root / "sts" / folder),
        paper_year=True, mteb_dataset=f"mteb/{year.lower()}-sts", mteb_pooled=True,
    )


EVAL_SETS: dict[str, EvalSet] = {spec.name: spec for spec in (
    *(_year(year) for year in sts.STS_YEARS),
    EvalSet(
        "STSBenchmark", "sts", "STS Benchmark (dev = validation, test)", ("sts/STSBenchmark",),
        lambda root, splits: {s: [sts.load_stsb(root / "sts", s)] for s in (splits or ["validation", "test"])},
        lambda root: sts.stsb_sentences(root / "sts"),
        all_subsets=tuple(sts.STSB_SPLITS), mteb_dataset="mteb/stsbenchmark-sts",
    ),
    EvalSet(
        "STS17", "sts", "SemEval-2017 STS, all tracks (mono- and cross-lingual)", ("sts/STS17",),
        lambda root, subsets: {"test": sts.load_sts17(root / "sts", subsets)},
        lambda root: sts.input_sentences(root / "sts" / "STS17"),
        mteb_dataset="mteb/sts17-crosslingual-sts",
        mteb_subsets={  # track 4b (es-en-wmt) is not in mteb's STS17
            "ar-ar": ("ar-ar", ["ara-Arab"]), "ar-en": ("en-ar", ["eng-Latn", "ara-Arab"]),
            "es-es": ("es-es", ["spa-Latn"]), "es-en": ("es-en", ["spa-Latn", "eng-Latn"]),
            "en-en": ("en-en", ["eng-Latn"]), "tr-en": ("en-tr", ["eng-Latn", "tur-Latn"]),
        },
    ),
    EvalSet(
        "Tatoeba", "bitext", "LASER Tatoeba bitext mining, error rate both directions", ("tatoeba",),
        lambda root, langs: {"test": tatoeba.load_tatoeba(root / "tatoeba", langs)},
        lambda root: tatoeba.all_sentences(root / "tatoeba"),
        mteb_dataset="mteb/tatoeba-bitext-mining",
    ),
)}
"""Every evaluation set, by task name."""

PAPER_YEARS = tuple(name for name, spec in EVAL_SETS.items() if spec.paper_year)
"""The SemEval years of the papers' headline STS12-16 average."""

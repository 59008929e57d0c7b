"""What of our scores goes into mteb's ``scores`` field, and where the rest of our numbers go.

mteb's ``TaskResult.get_score()`` (``mteb.ResultCache``, the leaderboard) averages ``main_score`` over every entry of
every split in ``scores``, so a task JSON lists there only what mteb's own task produces:

- ``STS12``-``STS16``: the ``default`` subset (the year's datasets pooled, as in mteb), split ``test``.
- ``STSBenchmark``: the ``test`` split (mteb's ``eval_splits``), subset ``default``.
- ``STS17``: the SemEval tracks under mteb's subset names (``EVAL_SETS["STS17"].mteb_subsets``); track 4b
  (``es-en-wmt``) is not in mteb's STS17 and stays out.
- ``Tatoeba``: one entry per language pair (``deu-eng``, ...), mteb's ``xx->en`` metrics (``main_score`` = ``f1``).
- any other task (STS-format folders): every entry, as computed.

Only mteb's metric keys are kept there. Every number we compute (per-dataset Pearson and Spearman, skipped pairs,
validation splits, both Tatoeba error rates, ...) goes to the top-level key ``"paranmt_hf"`` (``EXTRA_KEY``), which
mteb's pydantic ``TaskResult`` ignores on ``from_disk``.
"""

from __future__ import annotations

from typing import Any

from ..data.eval_sets import EVAL_SETS

EXTRA_KEY = "paranmt_hf"
"""Top-level key of the task JSON holding our complete scores (ignored by mteb)."""
LAYOUT_VERSION = 2
"""1: everything in ``scores`` (before mteb's view was separated); 2: ``scores`` = mteb's view + ``EXTRA_KEY``."""

STS_KEYS = ("pearson", "spearman", "cosine_pearson", "cosine_spearman", "manhattan_pearson", "manhattan_spearman",
            "euclidean_pearson", "euclidean_spearman", "main_score")
"""The metric keys of mteb's STS entries."""
BITEXT_KEYS = ("precision", "recall", "f1", "accuracy")
"""mteb's bitext-mining metrics (``main_score`` = ``f1``); ours carry them as ``xx2en_<key>``."""
ENTRY_KEYS = ("hf_subset", "languages", "mteb_version")


def mteb_subset(task: str, subset: str, split: str = "test") -> tuple[str, list[str] | None] | None:
    """Where one of our entries sits in mteb's task: ``(hf_subset, languages or None = ours)``.

    ``None``: mteb's task has no such entry (another split, a per-dataset subset of a pooled year, STS17 track 4b).
    Tasks that are not mteb's (STS-format folders) keep every entry.
    """
    spec = EVAL_SETS.get(task)
    if spec is None or spec.mteb_dataset is None:
        return subset, None
    if split not in spec.mteb_splits:
        return None
    if spec.mteb_pooled:
        return ("default", None) if subset == "default" else None
    if spec.mteb_subsets is not None:
        return spec.mteb_subsets.get(subset)
    return subset, None


def mteb_entry(task: str, entry: dict[str, Any], split: str = "test") -> dict[str, Any] | None:
    """The entry of mteb's task for one of ours (mteb's keys only), or ``None`` when mteb's task has no such entry.

    Raises:
        ValueError: a Tatoeba entry without mteb's ``xx2en_*`` metrics (computed by older versions).
    """
    target = mteb_subset(task, entry["hf_subset"], split)
    if target is None:
        return None
    name, languages = target
    if "error_xx2en" in entry:  # bitext mining
        if "xx2en_f1" not in entry:
            raise ValueError(f"{task} {entry['hf_subset']}: no mteb metrics (xx2en_f1): re-run the evaluation")
        metrics = {k: entry[f"xx2en_{k}"] for k in BITEXT_KEYS} | {"main_score": entry["xx2en_f1"]}
    elif task in EVAL_SETS and EVAL_SETS[task].mteb_dataset is not None:
        metrics = {k: entry[k] for k in STS_KEYS if k in entry}
    else:
        metrics = dict(entry)  # not an mteb task: everything, as computed
    extra = {k: entry[k] for k in ENTRY_KEYS if k in entry}
    return {**metrics, **extra, "hf_subset": name, "languages": languages or entry.get("languages", [])}


def mteb_scores(task: str, scores: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The ``scores`` field of mteb from our complete ``{split: [entries]}`` (splits mteb does not run are dropped)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for split, entries in scores.items():
        kept = [m for m in (mteb_entry(task, e, split) for e in entries) if m is not None]
        if kept:
            out[split] = kept
    return out


def full_scores(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Our complete ``{split: [entries]}`` of a task JSON: ``EXTRA_KEY``'s, else ``scores`` (layout 1 files)."""
    extra = data.get(EXTRA_KEY)
    if isinstance(extra, dict) and isinstance(extra.get("scores"), dict):
        return extra["scores"]
    return data["scores"]

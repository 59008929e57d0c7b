"""The generator's training data: paraphrase pairs read from files, selected by score and overlap, both directions.

ParaNMT-50M §6 trains its generator on the corpus without saying which pairs; the thresholds "used in prior papers
when generating training data for paraphrase generation" are, by PRAS (Figure 3): paraphrase score in [0.7, 1.0]
and trigram overlap below 0.5 (:data:`DEFAULT_BOUNDS`). Any bounds on the columns of
:data:`~paranmt_hf.corpus.measures.registry.MEASURES` can be given instead (a
:class:`~paranmt_hf.corpus.selection.filters.ThresholdFilter` selects the pairs). A held-out set of pairs is drawn
first (seeded); training pairs sharing a sentence with it are left out (counted), so the evaluation inputs were never
seen. Every kept pair trains both directions (a -> b and b -> a) unless asked otherwise.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..corpus.measures.registry import MeasureContext
from ..corpus.selection.filters import Bound, ThresholdFilter

DEFAULT_BOUNDS: dict[str, Bound] = {"paraphrase_score": (0.7, 1.0), "trigram_overlap": (None, 0.5)}
"""PRAS Figure 3's generation-data thresholds (score 0.7-1.0, trigram overlap <= 0.5)."""


@dataclass
class PairColumns:
    """Pairs read from files: the two sides and the columns the files hold (None where a line has none)."""

    text_a: list[str] = field(default_factory=list)
    text_b: list[str] = field(default_factory=list)
    columns: dict[str, list[float | None]] = field(default_factory=dict)
    bad_lines: int = 0


def read_pairs(paths: Sequence[str | os.PathLike[str]], fmt: str = "pairs", strict: bool = False) -> PairColumns:
    """The pairs of TSV files and their numeric columns (bad lines counted).

    A file whose first line names its columns (``corpus backtranslate`` / ``annotate`` output) is read by name;
    others with ``fmt`` (``text_a TAB text_b [TAB score [TAB trigram_overlap]]`` for ``pairs``). Files may differ.
    """
    from ..corpus.measures.columns import common_header
    from ..corpus.pipeline.batches import PairReader

    out = PairColumns()
    chunks: list[tuple[int, dict[str, list[Any]]]] = []
    for path in paths:
        reader = PairReader([path], fmt, strict=strict, header=common_header([path]))
        for batch in reader.run():
            parsed = batch.parsed
            columns = {"paraphrase_score": parsed.score, "trigram_overlap": parsed.overlap,
                       **{k: v for k, v in batch.columns.items() if k != "source"}}
            chunks.append((len(parsed), columns))
            out.text_a.extend(parsed.text_a)
            out.text_b.extend(parsed.text_b)
            out.bad_lines += parsed.report.total_bad
    names = dict.fromkeys(name for _, columns in chunks for name in columns)
    for name in names:
        values: list[float | None] = []
        for size, columns in chunks:
            values.extend(columns.get(name) or [None] * size)
        if any(v is not None for v in values):
            out.columns[name] = values
    return out


@dataclass
class GeneratorData:
    """Sources and targets for training and for evaluation, and what selecting them did."""

    sources: list[str]
    targets: list[str]
    eval_inputs: list[str]
    eval_references: list[str]
    counts: dict[str, Any]


def _key(text: str) -> str:
    return " ".join(text.split()).lower()


def generator_pairs(
    pairs: PairColumns,
    bounds: Mapping[str, Bound] | None = None,
    context: MeasureContext | None = None,
    both_directions: bool = True,
    held_out: int = 1000,
    max_pairs: int | None = None,
    seed: int = 0,
) -> GeneratorData:
    """Select the training pairs and the held-out evaluation pairs.

    Args:
        pairs: the pairs and their columns (:func:`read_pairs`).
        bounds: per column ``(low, high)``, inclusive (default :data:`DEFAULT_BOUNDS`; ``{}`` keeps every pair).
        context: what computes missing columns (e.g. the model of ``paraphrase_score``).
        both_directions: train a -> b and b -> a.
        held_out: pairs drawn (from the selected ones) for evaluation.
        max_pairs: at most this many training pairs (drawn, seeded) before doubling the directions.
        seed: the draws.
    """
    bounds = dict(DEFAULT_BOUNDS if bounds is None else bounds)
    n = len(pairs.text_a)
    counts: dict[str, Any] = {"read": n, "bad_lines": pairs.bad_lines, "bounds": {k: list(v) for k, v in
                                                                                  bounds.items()}}
    if bounds:
        if "paraphrase_score" in bounds and "paraphrase_score" not in pairs.columns and (
                context is None or not context.has("encoder")):
            raise ValueError("the pairs have no paraphrase score: give the model that scores them (--score-model) "
                             "or drop the score bound (--min-score none --max-score none)")
        selection = ThresholdFilter(bounds, context or MeasureContext()).select(pairs.text_a, pairs.text_b,
                                                                               columns=pairs.columns)
        keep = [i for i in range(n) if selection.keep[i]]
        counts["filter"] = selection.counts()
    else:
        keep = list(range(n))
    rng = random.Random(seed)
    rng.shuffle(keep)
    if held_out >= len(keep):
        raise ValueError(f"only {len(keep)} pairs pass the bounds: too few to hold out {held_out} for evaluation")
    evaluation, train = keep[:held_out], keep[held_out:]
    seen = {_key(t) for i in evaluation for t in (pairs.text_a[i], pairs.text_b[i])}
    clean = [i for i in train if _key(pairs.text_a[i]) not in seen and _key(pairs.text_b[i]) not in seen]
    counts["held_out"] = len(evaluation)
    counts["left_out_sharing_a_held_out_sentence"] = len(train) - len(clean)
    counts["within_bounds"] = len(keep)
    if max_pairs is not None and len(clean) > max_pairs:
        counts["left_out_by_max_pairs"] = len(clean) - max_pairs
        clean = clean[:max_pairs]
    counts["training_pairs"] = len(clean)
    sources = [pairs.text_a[i] for i in clean]
    targets = [pairs.text_b[i] for i in clean]
    if both_directions:
        sources, targets = sources + targets, targets + sources
    counts["training_examples"] = len(sources)
    counts["both_directions"] = both_directions
    return GeneratorData(sources, targets, [pairs.text_a[i] for i in evaluation],
                         [pairs.text_b[i] for i in evaluation], counts)


"""EMNLP 2017's threshold tuning: choose each filter's bounds by the dev score of a model trained on what passes.

For each filter of E17 (§5.5-5.7) and each setting of its grid:

1. keep the candidates within the bounds (:class:`~.filters.ThresholdFilter`);
2. take one passing candidate per reference at random and sample ``pairs`` references (fewer: infeasible);
3. train a model on them and score it on dev with a :data:`Scorer` given by the caller
   (:func:`paranmt_hf.evaluation.filter_tuning.trainer_scorer`);
4. per filter, keep the setting with the best mean dev score and report its test scores, which play no part in
   the choice. "None (random)" samples without a filter: the noise the filters have to beat.

Runs are appended to a JSON-lines file, one per setting and seed, so a killed tuning resumes; each names the
sha256 of its candidates file, and a runs file of another file is refused.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

Bounds = dict[str, tuple[float | None, float | None]]
Scorer = Callable[[list[tuple[str, str]], int], dict[str, Any]]
"""Trains on ``(reference, translation)`` pairs with a seed; returns at least ``dev``, ``sts12_16`` and
``stsb_test`` (E17's: :func:`paranmt_hf.evaluation.filter_tuning.trainer_scorer`)."""

RANDOM = "None (random)"
LENGTH_RANGES = [(0, 10), (0, 15), (0, 20), (0, 30), (0, 100), (10, 20), (10, 30), (10, 100), (15, 25), (15, 30),
                 (15, 100), (20, 30), (20, 100), (30, 100)]  # E17 §5.5
COST_UPPER = [round(0.2 + 0.1 * i, 1) for i in range(9)]  # E17 §5.6: [0.2, 1] by 0.1
PERPLEXITY_UPPER = [25, 50, 75, 100, 150, 200]  # E17 §5.6, then infinity
CLASSIFIER_LOWER = [round(0.1 * i, 1) for i in range(10)]  # E17 §5.6: [0, 0.9] by 0.1
DIVERSITY_LOWER, DIVERSITY_UPPER = [0.0, 0.1, 0.2, 0.3], [0.6, 0.7, 0.8, 0.9, 1.0]  # E17 §5.7
COLUMNS = ("translation_length", "translation_cost", "lm_perplexity", "reference_probability", "unigram_overlap",
           "bigram_overlap", "trigram_overlap", "bleu")
"""The columns the filters threshold (:data:`paranmt_hf.corpus.measures.registry.MEASURES`)."""
E17_TEST = {RANDOM: (66.9, 65.5), "length": (67.3, 66.0), "translation cost": (66.6, 65.4),
            "language model": (66.7, 65.5), "reference classification": (67.0, 65.5),
            "unigram overlap": (66.6, 66.1), "bigram overlap": (67.0, 65.5), "trigram overlap": (66.9, 65.4),
            "BLEU": (67.1, 65.3)}
"""E17's test numbers per filter (GRAN, AVG; the mean over its 10 NMT datasets), beside ours in the table."""


class TuningError(ValueError):
    """The candidates or the runs file cannot be used (the message says why, in one sentence)."""


@dataclass
class Candidates:
    """Back-translation candidates: one row per (reference, translation), grouped by source sentence."""

    reference: list[str]
    translation: list[str]
    columns: dict[str, np.ndarray]
    group: np.ndarray
    sha256: str

    @property
    def references(self) -> int:
        """How many source sentences (n-best lists) the rows come from."""
        return len(set(self.group.tolist()))


def read_candidates(path: str | os.PathLike[str]) -> Candidates:
    """Read the candidates of a ``corpus backtranslate`` file (``corpus annotate``d or not; ``.gz`` too).

    Keeps the texts, every measure column the header names, and a group per source sentence (its n-best list).
    """
    from ...corpus.measures.registry import MEASURES
    from ...utils.content_hash import file_sha256

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    header = lines[0].split("\t") if lines else []
    if header[:2] not in (["reference", "paraphrase"], ["text_a", "text_b"]):
        raise TuningError(f"{path}: expected a header line naming reference, paraphrase, ... (corpus backtranslate)")
    index = {name: i for i, name in enumerate(header)}
    rows = [line.split("\t") for line in lines[1:] if line]
    if not rows:
        raise TuningError(f"{path}: no candidates after the header")
    bad = next((n for n, row in enumerate(rows, 2) if len(row) != len(header)), None)
    if bad is not None:
        raise TuningError(f"{path}:{bad}: {len(rows[bad - 2])} columns where the header names {len(header)}")
    groups: dict[tuple[str, str], int] = {}
    source = index.get("source")
    group = [groups.setdefault((row[0], row[source] if source is not None else ""), len(groups)) for row in rows]
    try:
        columns = {name: np.asarray([float(r[i]) for r in rows]) for name, i in index.items() if name in MEASURES}
    except ValueError as err:
        raise TuningError(f"{path}: a measure column holds a value that is not a number ({err})") from err
    return Candidates([r[0] for r in rows], [r[1] for r in rows], columns, np.asarray(group), file_sha256(path))


def filter_columns(candidates: Candidates, language_model: str | None = None, classifier: str | None = None,
                   cache: str | os.PathLike[str] | None = None) -> dict[str, np.ndarray]:
    """Every column the filters threshold: the file's own, the others computed.

    ``cache``: a folder where the columns are kept, by the candidates' sha256, for the next run.
    """
    path = Path(cache) / f"columns-{candidates.sha256[:16]}.npz" if cache is not None else None
    if path is not None and path.is_file():
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    values = {k: v for k, v in candidates.columns.items() if k in COLUMNS}
    missing = [name for name in COLUMNS if name not in values]
    if missing:
        from ...corpus.measures.registry import MeasureContext, compute_measures

        context = MeasureContext(language_model=language_model, classifier=classifier)
        values.update(compute_measures(missing, candidates.reference, candidates.translation, context))
    if path is not None:  # written whole under another name, then renamed: a reader never sees half of it
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.stem}.{os.getpid()}.npz")
        np.savez(partial, **values)
        os.replace(partial, path)
    return values


def grids(full: bool = False, columns: dict[str, np.ndarray] | None = None) -> dict[str, list[Bounds]]:
    """Filter name -> its settings (column bounds), E17's grids.

    Without ``full`` the diversity grids use lower bounds {0, 0.1} only (E17: "the best lower bounds are often 0 or
    0.1"). With ``columns``, translation cost and perplexity, whose scale depends on the MT model and the language
    model, also get upper bounds at their 20th, 40th, 60th and 80th percentiles.
    """
    lower = DIVERSITY_LOWER if full else DIVERSITY_LOWER[:2]
    cost, perplexity = list(COST_UPPER), list(PERPLEXITY_UPPER)
    if columns is not None:
        quantiles = (0.2, 0.4, 0.6, 0.8)
        cost += [round(float(np.quantile(columns["translation_cost"], q)), 3) for q in quantiles]
        perplexity += [round(float(np.quantile(columns["lm_perplexity"], q)), 1) for q in quantiles]

    def diversity(column: str) -> list[Bounds]:
        return [{column: (lo, hi)} for lo in lower for hi in DIVERSITY_UPPER]

    return {
        "length": [{"translation_length": (float(lo), float(hi))} for lo, hi in LENGTH_RANGES],
        "translation cost": [{"translation_cost": (None, hi)} for hi in sorted(set(cost))],
        "language model": [{"lm_perplexity": (None, hi)} for hi in [*sorted(set(perplexity)), None]],
        "reference classification": [{"reference_probability": (lo, None)} for lo in CLASSIFIER_LOWER],
        "unigram overlap": diversity("unigram_overlap"),
        "bigram overlap": diversity("bigram_overlap"),
        "trigram overlap": diversity("trigram_overlap"),
        "BLEU": diversity("bleu"),
    }


def select(candidates: Candidates, columns: dict[str, np.ndarray], bounds: Bounds, pairs: int,
           seed: int) -> tuple[list[tuple[str, str]], int]:
    """One passing candidate per reference (at random), ``pairs`` references sampled; and how many pass.

    No pairs when fewer than ``pairs`` references pass (the setting is infeasible).
    """
    from .filters import ThresholdFilter

    n = len(candidates.reference)
    if bounds:
        given = {name: columns[name].tolist() for name in bounds}
        keep = ThresholdFilter(dict(bounds)).select(candidates.reference, candidates.translation, columns=given).keep
    else:
        keep = np.ones(n, dtype=bool)
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    chosen: dict[int, int] = {}
    for i in order:  # the authors' get_data: shuffle, then the first passing candidate of each reference
        if keep[i]:
            chosen.setdefault(int(candidates.group[i]), i)
    if len(chosen) < pairs:
        return [], len(chosen)
    picked = rng.sample(sorted(chosen.values()), pairs)
    return [(candidates.reference[i], candidates.translation[i]) for i in picked], len(chosen)


def read_runs(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The runs recorded in a runs file (a last line cut short by a kill is left out)."""
    if not Path(path).is_file():
        return []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    runs = []
    for number, line in enumerate(lines, 1):
        try:
            runs.append(json.loads(line))
        except json.JSONDecodeError as err:
            if number < len(lines):
                raise TuningError(f"{path}:{number}: not a JSON line ({err})") from err
    return runs


def tune(candidates: Candidates, columns: dict[str, np.ndarray], runs_path: str | os.PathLike[str], score: Scorer,
         pairs: int, seeds: Sequence[int] = (0,), full_grid: bool = False, quantile_grids: bool = False,
         only: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """Run every setting of every filter with every seed not yet in ``runs_path``.

    Yields each new run once it is appended there: feasible runs carry ``score``'s numbers, every run its provenance.
    ``only`` names the filters to run; the random baseline, which every filter is compared with, always runs.
    """
    from ...utils.provenance import provenance

    if pairs < 1:
        raise TuningError(f"--pairs must be at least 1 (got {pairs})")
    settings_of = grids(full_grid, columns if quantile_grids else None)
    if only is not None and (unknown := sorted(set(only) - set(settings_of) - {RANDOM})):
        raise TuningError(f"unknown filter {unknown[0]!r}: choose among {', '.join([RANDOM, *settings_of])}")
    previous = read_runs(runs_path)
    other = next((r for r in previous if r.get("candidates_sha256") != candidates.sha256 or r["pairs"] != pairs), None)
    if other is not None:
        raise TuningError(f"{runs_path} holds runs of another candidates file or --pairs ({other['pairs']}): give "
                          "another runs file, or move this one away")
    done = {(r["filter"], json.dumps(r["bounds"]), r["seed"]) for r in previous}
    plan: list[tuple[str, Bounds, int]] = [(RANDOM, {}, seed) for seed in sorted({0, 1, 2, *seeds})]
    plan += [(name, bounds, seed) for name, grid in settings_of.items() for bounds in grid for seed in seeds]
    for name, bounds, seed in plan:
        listed = {k: list(v) for k, v in bounds.items()}
        if (only is not None and name not in (*only, RANDOM)) or (name, json.dumps(listed), seed) in done:
            continue
        rows, passing = select(candidates, columns, bounds, pairs, seed)
        run: dict[str, Any] = {"filter": name, "bounds": listed, "seed": seed, "passing_references": passing,
                               "pairs": pairs, "candidates_sha256": candidates.sha256}
        if rows:
            run.update(score(rows, seed))
        run["provenance"] = provenance()
        Path(runs_path).parent.mkdir(parents=True, exist_ok=True)
        with open(runs_path, "a", encoding="utf-8") as handle:  # one write per run: a kill loses at most this line
            handle.write(json.dumps(run) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        yield run


def describe(bounds: dict[str, list[float | None]]) -> str:
    """``low <= column <= high`` of a setting, an open side left out."""
    parts = []
    for name, (low, high) in bounds.items():
        parts.append(("" if low is None else f"{low:g} <= ") + name + ("" if high is None else f" <= {high:g}"))
    return "; ".join(parts) or "-"


def summarize(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per filter: the setting dev chose (the best mean dev score over its seeds) and its scores.

    The random baseline's row holds the mean and standard deviation over its seeds.
    """
    rows = []
    for name in dict.fromkeys(r["filter"] for r in runs):
        settings: dict[str, list[dict[str, Any]]] = {}
        for run in (r for r in runs if r["filter"] == name):
            settings.setdefault(json.dumps(run["bounds"], sort_keys=True), []).append(run)
        feasible = {key: mine for key, mine in settings.items() if all("dev" in r for r in mine)}
        row: dict[str, Any] = {"filter": name, "settings": len(settings), "feasible": len(feasible),
                               "e17_test_gran_avg": E17_TEST.get(name)}
        if name == RANDOM and feasible:
            trained = [r for mine in feasible.values() for r in mine]
            row["setting"] = f"{len(trained)} seeds"
            for key in ("dev", "sts12_16", "stsb_test"):
                values = [r[key] for r in trained]
                row[key] = statistics.mean(values)
                row[key + "_sd"] = statistics.stdev(values) if len(values) > 1 else 0.0
        elif feasible:
            best = max(feasible.values(), key=lambda mine: statistics.mean(r["dev"] for r in mine))
            row.update(setting=describe(best[0]["bounds"]), passing_references=best[0]["passing_references"],
                       seeds=[r["seed"] for r in best],
                       **{key: statistics.mean(r[key] for r in best) for key in ("dev", "sts12_16", "stsb_test")})
        rows.append(row)
    return rows


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """The summary as a markdown table (E17's test numbers beside ours)."""
    lines = ["| filter | settings (feasible) | chosen on dev | passing references | dev | STS12-16 | STS-B test | "
             "E17 test (GRAN / AVG) |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        e17 = " / ".join(map(str, row["e17_test_gran_avg"] or ("-", "-")))
        if "dev" not in row:
            lines.append(f"| {row['filter']} | {row['settings']} (0) | too few references pass | | | | | {e17} |")
            continue
        cells = [f"{row[k]:.2f}" + (f" ± {row[k + '_sd']:.2f}" if k + "_sd" in row else "")
                 for k in ("dev", "sts12_16", "stsb_test")]
        passing = f"{row['passing_references']:,}" if "passing_references" in row else "all"
        lines.append(f"| {row['filter']} | {row['settings']} ({row['feasible']}) | {row['setting']} | {passing} | "
                     + " | ".join(cells) + f" | {e17} |")
    return "\n".join(lines)

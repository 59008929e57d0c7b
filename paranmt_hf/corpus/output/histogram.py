"""Score-range histogram of a pair corpus, in the bins of ParaNMT-50M's Table 3, with mean trigram overlap.

:class:`HistogramCounts` accumulates batches (vectorised); :class:`HistogramStep` does it per task for
``paranmt-hf corpus histogram`` (task counts add up); :func:`corpus_histogram` is the command (a first-pairs count
in one process, or every task's, written as JSON and a plot); :func:`format_table3` prints the result as Table 3.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..measures.overlap import overlaps_many
from ..pipeline.steps import CorpusStep
from ..pipeline.task_process import write_file

# Table 3 of ParaNMT-50M: (-0.1, 0.2], (0.2, 0.4], (0.4, 0.6], (0.6, 0.8], (0.8, 1.0]
TABLE3_EDGES = (-0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
TOP_TOLERANCE = 1e-6
"""Scores up to this much above the top edge count in the top bin: the cosine of two float32 embeddings of the same
sentence comes out as 1.0000002 (a rounding error, not a score above 1)."""
NO_SCORE_ADVICE = "add the scores with `paranmt-hf corpus annotate ... --model MODEL` first"
"""What to do when the histogram meets pairs without a paraphrase score (a ``MissingScoreError``)."""
# Table 3's pair counts (millions) and mean trigram overlap (mean, std) per bin, for comparison.
TABLE3_PAPER = {"millions": [4.0, 3.8, 6.9, 14.4, 18.0],
                "overlap_mean": [0.00, 0.02, 0.07, 0.17, 0.35], "overlap_std": [0.0, 0.1, 0.1, 0.2, 0.2]}


def bin_label(low: float, high: float) -> str:
    """``"(low, high]"``."""
    return f"({low:g}, {high:g}]"


@dataclass
class HistogramCounts:
    """Per-bin pair counts and overlap sums over left-open score bins ``(edges[i], edges[i+1]]``.

    A score within :data:`TOP_TOLERANCE` above the top edge counts in the top bin (float32 cosines of 1).
    """

    edges: tuple[float, ...] = TABLE3_EDGES
    count: np.ndarray = field(init=False)
    sums: np.ndarray = field(init=False)
    squares: np.ndarray = field(init=False)
    below: int = 0
    above: int = 0
    total: int = 0

    def __post_init__(self) -> None:
        edges = list(self.edges)
        if sorted(edges) != edges or len(edges) < 2:
            raise ValueError(f"edges must be increasing, got {edges}")
        self.edges = tuple(edges)
        self.count = np.zeros(len(edges) - 1, dtype=np.int64)
        self.sums = np.zeros(len(edges) - 1, dtype=np.float64)
        self.squares = np.zeros(len(edges) - 1, dtype=np.float64)

    def add(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None],
            overlaps: Sequence[float | None], tokenizer: str = "nltk") -> None:
        """Count a batch; missing overlaps of in-range pairs are computed with ``tokenizer``.

        Raises:
            MissingScoreError: a pair without a score, or with a NaN one (in no bin, neither below nor above).
        """
        from ..errors import MissingScoreError

        if any(s is None for s in scores):
            raise MissingScoreError(f"the histogram needs a paraphrase score on every pair: {NO_SCORE_ADVICE}")
        score = np.asarray(scores, dtype=np.float64)
        if np.isnan(score).any():
            raise MissingScoreError(f"the histogram needs a real score on every pair: {int(np.isnan(score).sum())} "
                                    f"of the {len(score)} scores are NaN")
        self.total += len(score)
        edges = np.asarray(self.edges)
        low, high = score <= edges[0], score > edges[-1] + TOP_TOLERANCE
        self.below += int(low.sum())
        self.above += int(high.sum())
        rows = np.flatnonzero(~(low | high))
        bins = np.searchsorted(edges, np.minimum(score[rows], edges[-1]), side="left") - 1
        values = [overlaps[i] for i in rows]
        todo = [k for k, v in enumerate(values) if v is None]
        for k, v in zip(todo, overlaps_many([text_a[rows[k]] for k in todo], [text_b[rows[k]] for k in todo],
                                            tokenizer), strict=True):
            values[k] = v
        ovl = np.asarray(values, dtype=np.float64)
        size = len(self.count)
        self.count += np.bincount(bins, minlength=size)
        self.sums += np.bincount(bins, weights=ovl, minlength=size)
        self.squares += np.bincount(bins, weights=ovl * ovl, minlength=size)

    def merge(self, other: HistogramCounts) -> None:
        """Add another accumulator's counts, overlap sums and sums of squares (same edges)."""
        if tuple(other.edges) != tuple(self.edges):
            raise ValueError(f"cannot merge histograms with different edges: {self.edges} vs {other.edges}")
        self.count += other.count
        self.sums += other.sums
        self.squares += other.squares
        self.below += other.below
        self.above += other.above
        self.total += other.total

    def state(self) -> dict[str, Any]:
        """The raw counts (JSON-friendly), for :meth:`from_state`."""
        return {"edges": list(self.edges), "count": self.count.tolist(), "sums": self.sums.tolist(),
                "squares": self.squares.tolist(), "below": self.below, "above": self.above, "total": self.total}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> HistogramCounts:
        """Counts saved by :meth:`state`."""
        counts = cls(tuple(state["edges"]))
        counts.count = np.asarray(state["count"], dtype=np.int64)
        counts.sums = np.asarray(state["sums"], dtype=np.float64)
        counts.squares = np.asarray(state["squares"], dtype=np.float64)
        counts.below, counts.above, counts.total = state["below"], state["above"], state["total"]
        return counts

    def result(self) -> dict[str, Any]:
        """The histogram as a JSON-friendly dict (mean ± std overlap per bin; NaN for empty bins)."""
        bins = []
        for i in range(len(self.count)):
            count = int(self.count[i])
            mean = float(self.sums[i] / count) if count else float("nan")
            var = max(float(self.squares[i] / count) - mean * mean, 0.0) if count else float("nan")
            bins.append({"range": bin_label(self.edges[i], self.edges[i + 1]), "count": count,
                         "share": count / self.total if self.total else 0.0, "overlap_mean": mean,
                         "overlap_std": math.sqrt(var)})
        return {"edges": list(self.edges), "total": self.total, "below": self.below, "above": self.above,
                "bins": bins}


def score_histogram(
    records: Iterable[Mapping[str, Any]],
    edges: Sequence[float] = TABLE3_EDGES,
    tokenizer: str = "nltk",
    score_key: str = "score",
    overlap_key: str = "overlap",
) -> dict[str, Any]:
    """Count pairs per left-open score bin ``(edges[i], edges[i+1]]`` with mean ± std trigram overlap (streaming).

    Records without a precomputed overlap get one computed with ``tokenizer``. Scores outside the bins are counted
    in ``below`` / ``above``.
    """
    counts = HistogramCounts(tuple(edges))
    iterator = iter(records)
    while chunk := list(itertools.islice(iterator, 8192)):
        counts.add([r["text_a"] for r in chunk], [r["text_b"] for r in chunk], [r[score_key] for r in chunk],
                   [r.get(overlap_key) for r in chunk], tokenizer)
    return counts.result()


class HistogramStep(CorpusStep):
    """Count each batch into the task's :class:`HistogramCounts`, saved as ``folder/<rank>.json`` at the end."""

    name = "histogram"

    def __init__(self, folder: str | os.PathLike[str], tokenizer: str = "nltk",
                 edges: tuple[float, ...] = TABLE3_EDGES) -> None:
        super().__init__()
        self.folder, self.tokenizer, self.edges = os.fspath(folder), tokenizer, tuple(edges)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Count the task's batches; pass nothing on."""
        counts = HistogramCounts(self.edges)
        for batch in data or ():
            with self.track_time(unit="batch"):
                parsed = batch.parsed
                _check_scored(batch.source, parsed.numbers, parsed.score)
                counts.add(parsed.text_a, parsed.text_b, parsed.score, parsed.overlap, self.tokenizer)
        path = Path(self.folder) / f"{rank:05d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, json.dumps(counts.state()))  # a name of this attempt's own, renamed while the run lives
        return iter(())


def merge_histogram(spec: Any) -> None:
    """Sum the tasks' counts into the histogram JSON (``spec.output``)."""
    from ...utils.atomic import atomic_write_json, check_output
    from ..pipeline.runner import check_some_valid

    check_some_valid(spec, "main", spec.output)
    total = HistogramCounts(tuple(spec.options.edges))
    for rank in range(spec.tasks):
        part = Path(spec.parts_dir()) / f"{rank:05d}.json"
        total.merge(HistogramCounts.from_state(json.loads(part.read_text(encoding="utf-8"))))
    result = total.result()
    result["paper_table3"] = TABLE3_PAPER
    result["inputs"] = list(spec.inputs)
    check_output(spec.output, spec.inputs, spec.overwrite)
    atomic_write_json(spec.output, result, overwrite=spec.overwrite)


def histogram_files(inputs: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str], run: Any = None, *,
                    fmt: str = "pairs", strict: bool = False, tokenizer: str = "nltk",
                    edges: Sequence[float] = TABLE3_EDGES, member_pattern: str | None = None,
                    overwrite: bool = False) -> tuple[dict[str, Any], Any]:
    """The score histogram of ``inputs`` (over every task) as JSON in ``output``; returns it and the summary.

    Inputs with a header (``corpus annotate`` / ``backtranslate`` outputs, :mod:`paranmt_hf.corpus.measures.columns`)
    are read by column name: the score is ``paraphrase_score`` (or ``score``), the overlap ``trigram_overlap`` (or
    ``overlap``), and the header line is not data.
    """
    from ..pipeline.runner import JobOptions, RunOptions, Stage, execute, make_spec, merge_stage

    run = run or RunOptions()
    header = _score_header(inputs, member_pattern, fmt)
    settings = {"format": fmt, "member": member_pattern, "tokenizer": tokenizer, "strict": strict,
                "header": None if header is None else header.line}
    spec, workers = make_spec("histogram", inputs, output, run, overwrite,
                              JobOptions(settings, edges=list(edges)))
    stages = [Stage("main", [spec.reader("main", fmt, strict, member_pattern, header),
                             HistogramStep(spec.parts_dir(), tokenizer, tuple(edges))]),
              merge_stage(merge_histogram, spec)]
    summary = execute(spec, stages, run, workers)
    return json.loads(Path(output).read_text(encoding="utf-8")), summary


def corpus_histogram(inputs: Sequence[str | os.PathLike[str]], run: Any = None, *,
                     output: str | os.PathLike[str] | None = None, plot: str | os.PathLike[str] | None = None,
                     limit: int | None = None, fmt: str = "pairs", strict: bool = False, tokenizer: str = "nltk",
                     edges: Sequence[float] = TABLE3_EDGES, member_pattern: str | None = None,
                     overwrite: bool = False) -> tuple[dict[str, Any], Any]:
    """The score histogram of ``inputs``, optionally written as JSON (``output``) and as a PNG bar chart (``plot``).

    With ``limit``, the first ``limit`` pairs are counted in this process; otherwise every task of ``run`` counts its
    chunks (:func:`histogram_files`), into ``output`` or a temporary file. Both outputs are checked before any work
    (never an input, an existing file only with ``overwrite``) and written atomically. Inputs with a header are read
    by column name either way.

    Returns:
        the histogram (:meth:`HistogramCounts.result` with ``paper_table3`` and ``inputs``) and the run's summary
        (None with ``limit``).
    """
    import tempfile

    from ...utils.atomic import atomic_output, atomic_write_json, check_output

    for path in (output, plot):
        if path:
            check_output(path, inputs, overwrite)
    summary = None
    if limit is not None:
        result = _first_pairs_histogram(inputs, limit, fmt, strict, tokenizer, edges, member_pattern)
        if output:
            atomic_write_json(output, result, overwrite=overwrite)
    elif output:
        result, summary = histogram_files(inputs, output, run, fmt=fmt, strict=strict, tokenizer=tokenizer,
                                          edges=edges, member_pattern=member_pattern, overwrite=overwrite)
    else:
        from dataclasses import replace

        from ..pipeline.runner import RunOptions

        with tempfile.TemporaryDirectory(prefix="paranmt-histogram-") as tmp:
            run = run or RunOptions()
            run = replace(run, work_dir=run.work_dir or str(Path(tmp) / "work"))
            result, summary = histogram_files(inputs, Path(tmp) / "histogram.json", run, fmt=fmt, strict=strict,
                                              tokenizer=tokenizer, edges=edges, member_pattern=member_pattern)
    if plot:
        with atomic_output(plot, inputs, overwrite) as tmp_plot:
            plot_histogram(result, tmp_plot)
    return result, summary


def _first_pairs_histogram(inputs: Sequence[str | os.PathLike[str]], limit: int, fmt: str, strict: bool,
                           tokenizer: str, edges: Sequence[float], member_pattern: str | None) -> dict[str, Any]:
    """The histogram of the first ``limit`` valid pairs of ``inputs`` (one process; a header read by name)."""
    from ..pipeline.batches import PairReader

    header = _score_header(inputs, member_pattern, fmt)
    counts = HistogramCounts(tuple(edges))
    left = limit
    reader = PairReader(inputs, fmt, strict=strict, member_pattern=member_pattern, header=header)
    for batch in reader.run():
        if left <= 0:
            break
        parsed, take = batch.parsed, min(left, len(batch.parsed.text_a))
        _check_scored(batch.source, parsed.numbers[:take], parsed.score[:take])
        counts.add(parsed.text_a[:take], parsed.text_b[:take], parsed.score[:take], parsed.overlap[:take],
                   tokenizer)
        left -= take
    result = counts.result()
    result["paper_table3"] = TABLE3_PAPER
    result["inputs"] = [os.fspath(p) for p in inputs]
    return result


def _check_scored(source: str, numbers: Sequence[int], scores: Sequence[float | None]) -> None:
    """Refuse a batch with a pair without a score, naming its first such line (``file:line``)."""
    from ..errors import MissingScoreError, first_unscored

    first = first_unscored(numbers, scores)
    if first is not None:

        raise MissingScoreError(f"{source}:{first} has a pair without a paraphrase score, and the histogram counts "
                                f"pairs by score: {NO_SCORE_ADVICE}")


def _score_header(inputs: Sequence[str | os.PathLike[str]], member_pattern: str | None, fmt: str = "pairs") -> Any:
    """The inputs' common header (None: none).

    Refused before any work when neither the header nor the line format has a paraphrase score column.
    """
    from ...data.records import line_format
    from ..errors import MissingScoreError
    from ..measures.columns import common_header

    header = common_header(inputs, member_pattern)
    names = ", ".join(map(os.fspath, inputs))
    if header is not None and header.score_index is None:
        raise MissingScoreError(f"{names} has no paraphrase_score column (its columns: {', '.join(header.columns)}): "
                                f"{NO_SCORE_ADVICE}")
    if header is None and line_format(fmt).score_column is None:
        raise MissingScoreError(f"the {fmt} format has no score column, and the histogram counts the pairs of "
                                f"{names} by score: {NO_SCORE_ADVICE}")
    return header


def format_table3(histogram: Mapping[str, Any]) -> str:
    """The histogram as ParaNMT-50M's Table 3: pairs (share) and mean ± std trigram overlap per score range.

    The paper's figures stand beside ours when the bins are Table 3's.
    """
    paper = histogram.get("paper_table3") if tuple(histogram["edges"]) == TABLE3_EDGES else None
    header = f"{'score range':<14}{'pairs':>12}{'share':>8}{'overlap':>16}"
    if paper:
        header += f"{'paper: pairs (M)':>19}{'paper: overlap':>16}"
    lines = [header, "-" * len(header)]
    for i, b in enumerate(histogram["bins"]):
        overlap = "-" if not b["count"] else f"{b['overlap_mean']:.2f} \u00b1 {b['overlap_std']:.2f}"
        row = f"{b['range']:<14}{b['count']:>12,}{100 * b['share']:>7.1f}%{overlap:>16}"
        if paper:
            row += (f"{paper['millions'][i]:>19.1f}"
                    f"{paper['overlap_mean'][i]:>10.2f} \u00b1 {paper['overlap_std'][i]:.1f}")
        lines.append(row)
    lines.append(f"{histogram['total']:,} pairs; {histogram['below']:,} scored <= {histogram['edges'][0]:g}, "
                 f"{histogram['above']:,} above {histogram['edges'][-1]:g}")
    return "\n".join(lines)


def plot_histogram(histogram: Mapping[str, Any], path: str | os.PathLike[str], title: str = "") -> None:
    """Bar chart of the pair share per score bin, labelled with mean trigram overlap (needs matplotlib)."""
    from ...utils.imports import require

    require("matplotlib", "plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = histogram["bins"]
    fig, ax = plt.subplots(figsize=(7, 4))
    bars = ax.bar([b["range"] for b in bins], [100 * b["share"] for b in bins], color="#4c72b0")
    for bar, b in zip(bars, bins, strict=True):
        if b["count"]:
            ax.annotate(f"ovl {b['overlap_mean']:.2f}±{b['overlap_std']:.2f}\nn={b['count']:,}",
                        (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    ax.set_xlabel("paraphrase score range")
    ax.set_ylabel("% of pairs")
    ax.set_title(title or f"{histogram['total']:,} pairs by paraphrase score (bins of ParaNMT-50M Table 3)")
    ax.margins(y=0.2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

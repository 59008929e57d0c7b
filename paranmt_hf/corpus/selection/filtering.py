r"""``corpus filter``: a filter of the registry over whole files, as TSV.

The filters are :data:`paranmt_hf.corpus.selection.filters.FILTERS`.
The kept lines are written unchanged (their line endings normalised to ``\\n``), optionally with the trigram
overlap appended, so the output holds exactly the rows that ``load_paranmt("filtered", ...)`` yields for the same
file and options (tests/test_corpus_filter.py checks this). It runs as datatrove stages
(:mod:`paranmt_hf.corpus.pipeline.runner`): for the ACL-2018 recipe without ``min_score`` a first pass collects every
score (all tasks) and one task computes the fold bounds, then every task filters its chunks, then the parts are merged.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...data.configs import ConfigOptions
from ...data.records import ParsedBlock
from ..errors import MissingScoreError, first_unscored
from ..pipeline.parts import TsvPartWriter, merge_tsv, part_path, part_suffix
from ..pipeline.runner import (
    JobOptions,
    JobSpec,
    RunOptions,
    Stage,
    Summary,
    check_some_valid,
    execute,
    make_spec,
    merge_stage,
)
from ..pipeline.steps import CorpusStep
from ..pipeline.task_process import write_file
from .filters import NO_SCORE_ADVICE, fold_bounds, get_filter_spec, make_filter

BOUNDS_FILE = "fold_bounds.json"


class ScoresStep(CorpusStep):
    """Collect the score of every valid line of the task into ``folder/<rank>.npy`` (the ACL-2018 first pass)."""

    name = "scores"

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        super().__init__()
        self.folder = os.fspath(folder)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Write the task's scores (float64); pass nothing on."""
        chunks: list[np.ndarray] = []
        for batch in data or ():
            parsed = batch.parsed
            first = first_unscored(parsed.numbers, parsed.score)
            if first is not None:
                raise MissingScoreError(f"{batch.source}:{first} has a pair without a paraphrase score, and "
                                        f"{NO_SCORE_ADVICE}")
            chunks.append(np.asarray(batch.parsed.score, dtype=np.float64))
        path = part_path(self.folder, rank, ".npy")
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.save(buffer, np.concatenate(chunks) if chunks else np.zeros(0))
        write_file(path, buffer.getvalue())  # under a name of this attempt's own, renamed while the run lives
        return iter(())


def write_fold_bounds(folder: str | os.PathLike[str], options: ConfigOptions, target: str | os.PathLike[str]) -> None:
    """The ACL-2018 fold bounds over every task's scores (``folder/*.npy``) into ``target`` (JSON)."""
    scores = np.concatenate([np.load(p) for p in sorted(Path(folder).glob("*.npy"))] or [np.zeros(0)])
    low, high = fold_bounds(scores, options.folds, options.num_folds)
    Path(target).write_text(json.dumps({"min_score": low, "max_score": high}), encoding="utf-8")


class BoundsStep(CorpusStep):
    """The one task that turns the scores into fold bounds.

    Input without a valid line (so without a score to rank) is refused as the other stages refuse it
    (:func:`~paranmt_hf.corpus.pipeline.runner.check_some_valid`: a :class:`~paranmt_hf.corpus.errors.CorpusError`
    naming the bad lines).
    """

    name = "fold bounds"

    def __init__(self, folder: str, options: ConfigOptions, target: str, spec: JobSpec | None = None,
                 scores_stage: str = "scores") -> None:
        super().__init__()
        self.folder, self.options, self.target = folder, options, target
        self.spec, self.scores_stage = spec, scores_stage

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Write the bounds; pass nothing on."""
        if self.spec is not None:
            check_some_valid(self.spec, self.scores_stage, os.fspath(self.spec.output))
        write_fold_bounds(self.folder, self.options, self.target)
        return iter(())


def bounds_stages(spec: JobSpec, options: ConfigOptions, fmt: str, member_pattern: str | None,
                  prefix: str = "", header: Any = None) -> tuple[list[Stage], str | None]:
    """The stages computing the corpus-wide fold bounds when the filter needs them, and their bounds file.

    ``([], None)`` when the filter needs none.
    """
    if not get_filter_spec(options.filter).needs_corpus_pass(options):
        return [], None
    folder, target = spec.parts_dir(f"{prefix}scores"), str(spec.work / f"{prefix}{BOUNDS_FILE}")
    return [Stage(f"{prefix}scores", [spec.reader(f"{prefix}scores", fmt, options.strict, member_pattern, header),
                                      ScoresStep(folder)], counts=False),
            Stage(f"{prefix}bounds", [BoundsStep(str(folder), options, target, spec, f"{prefix}scores")], tasks=1,
                  counts=False,
                  reads_input=False)], target


def needs_score(options: ConfigOptions) -> bool:
    """Whether the filter of ``options`` tests the paraphrase score without a model to compute it."""
    tested = options.filter in ("pras", "acl2018") or any(b[0] == "paraphrase_score" for b in options.bounds or ())
    return tested and options.score_model is None


def check_scores_given(inputs: Sequence[str | os.PathLike[str]], fmt: str, header: Any,
                       options: ConfigOptions) -> None:
    """Refuse, before any work, inputs that cannot hold the paraphrase score the filter needs.

    Raises:
        MissingScoreError: the header names no score column, or the line format has none (``bitext``,
            ``processed``), and the filter tests the score without a score model.
    """
    from ...data.records import FORMATS

    if not needs_score(options):
        return
    no_column = header.score_index is None if header is not None else FORMATS[fmt].score_column is None
    if no_column:
        where = "its header names no paraphrase_score column" if header is not None else \
            f"the {fmt} format has no score column"
        raise MissingScoreError(f"{', '.join(map(os.fspath, inputs))}: {where}, and {NO_SCORE_ADVICE}")


def filter_models(options: ConfigOptions) -> list[Any]:
    """The models a filter loads (language ID, score, language model, classifier): inputs no output may replace."""
    return [options.langid_model, options.score_model, options.language_model, options.classifier]


def filter_from_options(options: ConfigOptions, bounds_file: str | os.PathLike[str] | None = None) -> Any:
    """The filter of ``options``, its ACL-2018 fold bounds read from ``bounds_file`` when it needs them."""
    if get_filter_spec(options.filter).needs_corpus_pass(options):
        if bounds_file is None or not Path(bounds_file).is_file():
            raise ValueError(f"the {options.filter} filter needs its fold bounds (the scores stage)")
        bounds = json.loads(Path(bounds_file).read_text(encoding="utf-8"))
        options = ConfigOptions(**{**vars(options), "min_score": bounds["min_score"],
                                   "max_score": options.max_score if options.max_score is not None
                                   else bounds["max_score"]})
    return make_filter(options)


def warm_up(row_filter: Any, overlap: bool) -> None:
    """Load what a filter needs once per task: the NLTK tokenizer, the language identifier.

    Models load on first use, so that a column the data gives loads nothing.
    """
    # the overlap tokenizer (importing nltk alone takes ~2 CPU s) only when an overlap is computed with it; the
    # overlap column added to kept lines is the papers' (nltk)
    from ..text.tokens import warm_up_tokenizer

    if overlap:
        warm_up_tokenizer("nltk")
    if getattr(row_filter, "tokenizer", None):
        warm_up_tokenizer(row_filter.tokenizer)
    if getattr(row_filter, "require_english", False):
        row_filter.langid.is_english_many(["warm up"])


def kept_lines(parsed: ParsedBlock, selection: Any, with_overlap: bool) -> list[str]:
    """The kept lines, unchanged, with their trigram overlap appended when ``with_overlap``."""
    keep = np.flatnonzero(selection.keep).tolist()
    if not with_overlap:
        return [parsed.lines[i] for i in keep]
    from ..measures.overlap import overlaps_many

    overlap = selection.overlap
    missing = [i for i in keep if overlap[i] is None]
    for i, value in zip(missing, overlaps_many([parsed.text_a[i] for i in missing],
                                               [parsed.text_b[i] for i in missing]), strict=True):
        overlap[i] = value
    return [parsed.lines[i] if parsed.overlap[i] is not None else f"{parsed.lines[i]}\t{overlap[i]!r}" for i in keep]


class FilterStep(CorpusStep):
    """Filter each batch: the batch passed on holds the kept pairs, their lines unchanged (or with the overlap)."""

    name = "filter"

    def __init__(self, options: ConfigOptions, with_overlap: bool = False, bounds_file: str | None = None) -> None:
        super().__init__()
        self.options, self.with_overlap, self.bounds_file = options, with_overlap, bounds_file

    def setup(self, rank: int, world_size: int) -> None:
        """Make the filter (once per task)."""
        self._filter = filter_from_options(self.options, self.bounds_file)
        warm_up(self._filter, self.with_overlap)

    def process(self, batch: Any) -> Any:
        """The batch with its kept lines as output."""
        parsed = batch.parsed
        try:
            selection = self._filter.select(parsed.text_a, parsed.text_b, parsed.score, parsed.overlap,
                                            batch.columns or None)
        except MissingScoreError:
            first = first_unscored(parsed.numbers, parsed.score)
            raise MissingScoreError(f"{batch.source}{'' if first is None else f':{first}'} has a pair without a "
                                    f"paraphrase score, and {NO_SCORE_ADVICE}") from None
        lines = kept_lines(parsed, selection, self.with_overlap)
        self.count(selection.counts())
        keep = np.flatnonzero(selection.keep).tolist()
        if len(keep) < len(parsed):  # the steps after this one see the kept pairs only
            batch.keep(keep)
        parsed.lines = lines
        return batch


def filter_corpus(inputs: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str], options: ConfigOptions,
                  run: RunOptions | None = None, *, fmt: str = "paranmt", with_overlap: bool = False,
                  member_pattern: str | None = None, overwrite: bool = False) -> Summary:
    """Filter ``inputs`` into ``output`` (TSV, gzip'd when it ends with ``.gz``): the kept lines in input order.

    Args:
        inputs: pair files (plain, .gz, .zip).
        output: the output file (written atomically; never an input; an existing one only with ``overwrite``).
        options: the filter and its thresholds (``options.filter`` names it in the registry).
        run: tasks, workers, executor, progress (:class:`~paranmt_hf.corpus.pipeline.runner.RunOptions`).
        fmt: line format.
        with_overlap: append the trigram overlap to lines that have none.
        member_pattern: zip member glob.
        overwrite: replace an existing output.
    """
    from ..measures.columns import common_header

    run = run or RunOptions()
    suffix = part_suffix(output)
    header = common_header(inputs, member_pattern)
    check_scores_given(inputs, fmt, header, options)
    out_header = None
    if header is not None:
        out_header = header.line
        if with_overlap and header.overlap_index is None:
            out_header += "\ttrigram_overlap"
    settings = {**vars(options), "format": fmt, "with_overlap": with_overlap, "member": member_pattern}
    spec, workers = make_spec("filter", inputs, output, run, overwrite,
                              JobOptions(settings, part_suffix=suffix, header=out_header),
                              protected=filter_models(options))
    stages, bounds = bounds_stages(spec, options, fmt, member_pattern, header=header)
    stages.append(Stage("main", [spec.reader("main", fmt, options.strict, member_pattern, header),
                                 FilterStep(options, with_overlap, bounds),
                                 TsvPartWriter(spec.parts_dir(), suffix)]))
    stages.append(merge_stage(merge_tsv, spec))
    return execute(spec, stages, run, workers)

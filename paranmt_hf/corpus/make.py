"""Make a ParaNMT from a bitext in one run: back-translate, annotate, filter, de-duplicate, export.

:func:`make_paranmt` (``paranmt-hf corpus make``) runs one datatrove pipeline per stage
(:mod:`paranmt_hf.corpus.pipeline.runner`), on this machine or a cluster:

0. index the sources and decode each distinct one once (:mod:`paranmt_hf.corpus.translation.source_dedup`);
1. give every line its candidates, add the columns (:class:`~paranmt_hf.corpus.annotate.AnnotateStep`), keep
   what the filter passes, spill the key hashes for de-duplication and write the kept pairs as Parquet;
2. one task per group of hash buckets finds the duplicates, across every task;
3. every task writes its pairs without duplicates as Parquet;
4. one task writes the Hub-ready folder (``data/<config>/train-*.parquet``, ``export.json``, a card).

The result loads with plain ``datasets.load_dataset(folder, config)``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..data.configs import ConfigOptions
from ..data.records import ParsedBlock
from ..utils.atomic import atomic_output, path_name
from ..utils.imports import require
from .annotate import AnnotateStep
from .errors import EmptyResultError, InvalidOptionError, option
from .measures.columns import header_of
from .measures.registry import MeasureContext
from .output.export import (
    ParquetShards,
    collect_task_files,
    filter_description,
    public_source,
    task_files,
    write_card,
    write_export_record,
)
from .pipeline.batches import PairBatch
from .pipeline.runner import JobOptions, JobSpec, RunOptions, Stage, execute, make_spec, merge_stage
from .pipeline.steps import CorpusStep
from .selection.dedup import KEEP, KEYS, DedupWriteStep, FindStep, HashStep
from .selection.filtering import FilterStep, bounds_stages
from .translation.backtranslate import TranslationOptions, TranslationPlan, TranslationSummary
from .translation.source_cleaning import SourceCleaning

TEXT_TYPES = ("reference", "paraphrase", "source")


class ParquetPartReader(CorpusStep):
    """Read back this task's pairs of an earlier stage from its Parquet files (``folder/<rank>/``).

    Typed columns, nothing parsed: the same pairs in the same order (the de-duplication's positions match).
    ``reference`` / ``paraphrase`` become the batch's texts, ``paraphrase_score`` / ``trigram_overlap`` its score
    and overlap, every other column one of its ``columns``.
    """

    name = "part reader"
    type = "📖 - READER"

    def __init__(self, folder: str | os.PathLike[str], batch_rows: int = 1 << 16) -> None:
        super().__init__()
        self.folder, self.batch_rows = os.fspath(folder), batch_rows

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[PairBatch]:
        """The batches of this task."""
        pq = require("pyarrow.parquet", "data")
        index = 0
        for path, _rows in task_files(Path(self.folder), rank):  # the files its task recorded, checked
            for record in pq.ParquetFile(path).iter_batches(batch_size=self.batch_rows):
                columns = record.to_pydict()
                n = record.num_rows
                text_a, text_b = columns.pop("reference"), columns.pop("paraphrase")
                score = columns.pop("paraphrase_score", None) or [None] * n
                overlap = columns.pop("trigram_overlap", None) or [None] * n
                parsed = ParsedBlock(str(path), text_a=text_a, text_b=text_b, score=score, overlap=overlap,
                                     numbers=list(range(index + 1, index + n + 1)))
                yield PairBatch(parsed, lines_read=n, index=index, columns=columns)
                index += n


class NamedParquetWriter(CorpusStep):
    """Append each batch's pairs and named columns to this task's Parquet files (``folder/<rank>/``)."""

    name = "parquet writer"
    type = "💽 - WRITER"

    def __init__(self, folder: str | os.PathLike[str], columns: Sequence[str], shard_rows: int = 1_000_000) -> None:
        super().__init__()
        self.folder, self.columns, self.shard_rows = os.fspath(folder), tuple(columns), shard_rows

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Write the task's rows; its files and row counts go to ``folder/<rank>/rows.json``."""
        pa = require("pyarrow", "data")
        schema = arrow_schema(self.columns)
        folder = Path(self.folder) / f"{rank:05d}"
        shards = ParquetShards(folder, schema, self.shard_rows, empty_file=False)
        for batch in data or ():
            with self.track_time(unit="batch"):
                parsed = batch.parsed
                given = {"reference": parsed.text_a, "paraphrase": parsed.text_b, "paraphrase_score": parsed.score,
                         "trigram_overlap": parsed.overlap, **batch.columns}
                table = {name: given[name] for name in self.columns}
                for name in self.columns:
                    if name not in TEXT_TYPES:
                        table[name] = np.asarray(table[name], dtype=np.float32)
                shards.write(pa.Table.from_pydict(table, schema=schema))
            yield batch
        shards.close_task()


def arrow_schema(columns: Sequence[str]) -> Any:
    """The Parquet schema of the columns: text for the sentences, float32 for the numbers."""
    pa = require("pyarrow", "data")
    return pa.schema([(name, pa.string() if name in TEXT_TYPES else pa.float32()) for name in columns])


def merge_made(spec: JobSpec) -> None:
    """Write the Hub folder of :func:`make_paranmt` (atomically)."""
    from .pipeline.runner import check_some_valid, stage_counts

    check_some_valid(spec, "main", spec.output)
    name, columns = spec.options.config, spec.options.columns
    with atomic_output(spec.output, spec.inputs, spec.overwrite, directory=True) as tmp:
        done = collect_task_files(name, columns, arrow_schema(columns), spec.parts_dir("parquet"), spec.tasks,
                                  Path(tmp) / "data" / name, spec.options.shard_rows)
        if done.rows == 0 and not spec.options.allow_empty:
            counts = stage_counts(spec, "main")[1]
            why = ", ".join(f"{n:,} {k}" for k, n in counts.most_common() if n and not k.startswith("throughput"))
            raise EmptyResultError(
                f"no pair was kept{f' ({why})' if why else ''}, so {spec.output} was not written: check the "
                f"translations and the filter, or add "
                f"{option('--allow-empty', 'DatasetOptions(allow_empty=True)')} to write an empty dataset (the work "
                "folder is kept: the same command with it finishes without redoing the work)")
        card = spec.options.card
        write_export_record(tmp, [done], card)
        write_card(tmp, [done], **card)


@dataclass(frozen=True)
class DatasetOptions:
    """What :func:`make_paranmt` writes besides the columns: de-duplication, config, shards, card (all optional).

    Attributes:
        dedup: ``"first"``, ``"none"`` (drop every copy) or None (no de-duplication).
        dedup_key: ``"pair"`` (both texts) or ``"line"`` (texts and every column).
        config: the exported config's name.
        shard_rows: rows per Parquet file of the output (the last one shorter), whatever the number of tasks.
        card: :func:`~paranmt_hf.corpus.output.export.write_card` options (``repo_id``, ``pretty_name``,
            ``license_name``).
        allow_empty: write the folder when no pair is kept (else :class:`~paranmt_hf.corpus.errors.EmptyResultError`,
            the work folder kept, so that the same call with ``allow_empty`` finishes at once).
    """

    dedup: str | None = "first"
    dedup_key: str = "pair"
    config: str = "pairs"
    shard_rows: int = 1_000_000
    card: Mapping[str, Any] = field(default_factory=dict)
    allow_empty: bool = False

    def __post_init__(self) -> None:
        path_name(self.config, "the config name")  # it names data/<config>/ inside the output
        if self.dedup is not None and self.dedup not in KEEP:
            raise InvalidOptionError(f"unknown dedup {self.dedup!r}; choose one of {KEEP} or None")
        if self.dedup_key not in KEYS:
            raise InvalidOptionError(f"unknown dedup_key {self.dedup_key!r}; choose one of {KEYS}")
        if self.shard_rows < 1:
            raise InvalidOptionError(f"shard_rows must be >= 1, got {self.shard_rows}")


def make_paranmt(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    model: str | os.PathLike[str],
    *,
    translation: TranslationOptions | None = None,
    measures: Sequence[str] = (),
    measure_context: MeasureContext | None = None,
    filter_options: ConfigOptions | None = None,
    dataset: DatasetOptions | None = None,
    run: RunOptions | None = None,
    member_pattern: str | None = None,
    strict: bool = False,
    overwrite: bool = False,
) -> TranslationSummary:
    """Back-translate ``inputs``, annotate, filter, de-duplicate and export the pairs as a Hub-ready folder.

    Args:
        inputs: bitext files (two tab-separated columns).
        output: the folder to write (atomically; never holding an input; an existing one only with ``overwrite``).
        model: the translation model into English (Hub id or folder).
        translation: :class:`~paranmt_hf.corpus.translation.backtranslate.TranslationOptions` (cleaning defaults to
            what ``filter_options`` would drop whatever the translation).
        measures: more columns (:data:`~paranmt_hf.corpus.measures.registry.MEASURES`), e.g. ``bleu``.
        measure_context: the models the columns need (:class:`~paranmt_hf.corpus.measures.registry.MeasureContext`;
            its ``encoder`` gives ``paraphrase_score``, None: no score column).
        filter_options: the filter (None: keep every pair); its columns must be among the ones made.
        dataset: de-duplication, config name, shards, card, ``allow_empty`` (:class:`DatasetOptions`).
        run: tasks, workers, executor (:class:`~paranmt_hf.corpus.pipeline.runner.RunOptions`).
        member_pattern: zip member glob.
        strict: fail on the first bad line.
        overwrite: replace an existing folder.

    Raises:
        EmptyResultError: no pair was kept and not ``dataset.allow_empty``.
    """
    from .measures.registry import get_measure

    out = dataset or DatasetOptions()
    context = measure_context or MeasureContext()
    if context.encoder is not None:
        if not isinstance(context.encoder, (str, os.PathLike)):  # it is part of the run's identity
            raise InvalidOptionError("make_paranmt takes the scorer (measure_context.encoder) as a folder or Hub "
                                     f"id, not a loaded {type(context.encoder).__name__}")
        context = replace(context, encoder=os.fspath(context.encoder))
    for name in measures:
        if get_measure(name).compute is None:
            raise ValueError(f"{name} cannot be computed from the texts")
    plan, run = TranslationPlan.check(inputs, model, translation, run, SourceCleaning.for_filter(filter_options),
                                      member_pattern=member_pattern, strict=strict)
    recorded = plan.settings()
    name = recorded["model"]
    bt_columns = ["translation_cost", *(["source"] if plan.with_source else [])]
    compute = [*(["paraphrase_score"] if context.encoder is not None else []), "trigram_overlap", *measures]
    columns = list(dict.fromkeys([*bt_columns, *compute]))
    header = header_of(columns)
    card = {"kind": "own", "built_with": "paranmt-hf corpus make", "sources": [os.fspath(p) for p in inputs],
            "summary": f"English paraphrase pairs made by back-translating the non-English side of the sources below "
                       f"with `{public_source(name)}` ({recorded['engine']}) and pairing each translation with its "
                       "English reference (the method of Wieting et al. 2017 and Wieting & Gimpel 2018).",
            **out.card}
    if filter_options is not None:
        card.setdefault("filter_description", filter_description(filter_options))
    settings = {**recorded, "scorer": context.encoder, "measures": list(measures),
                "filter": None if filter_options is None else vars(filter_options), "dedup": out.dedup,
                "dedup_key": out.dedup_key, "tokenizer": context.tokenizer}
    spec, workers = make_spec("make", inputs, output, run, overwrite,
                              JobOptions(settings, header=header.line, config=out.config,
                                         columns=["reference", "paraphrase", *columns], card=card,
                                         shard_rows=out.shard_rows, allow_empty=out.allow_empty),
                              protected=[model, *context.model_paths()])
    bounds = None
    if filter_options is not None:
        before, bounds = bounds_stages(spec, filter_options, "bitext", member_pattern)
        if before:
            raise ValueError("the filter needs a first pass over the scores (acl2018 without min_score): give "
                             "min_score / max_score, or filter the made pairs with `corpus filter`")
    before, head = plan.stages(spec)
    steps: list[Any] = [*head,
                        AnnotateStep(context, True, columns, compute)]
    if filter_options is not None:
        steps.append(FilterStep(filter_options, bounds_file=bounds))
    parquet = NamedParquetWriter(spec.parts_dir("parquet"), ["reference", "paraphrase", *columns], out.shard_rows)
    if out.dedup is None:
        stages = [*before, Stage("main", [*steps, parquet], unit="sentences")]
    else:
        hashes, drops = spec.parts_dir("hashes"), spec.parts_dir("drops")
        kept = NamedParquetWriter(spec.parts_dir("kept"), ["reference", "paraphrase", *columns], 1 << 40)
        stages = [*before, Stage("main", [*steps, HashStep(hashes, out.dedup_key, passthrough=True), kept],
                                 unit="sentences"),
                  Stage("find", [FindStep(str(hashes), str(drops), out.dedup)], tasks=min(256, spec.tasks),
                        counts=False, reads_input=False),
                  Stage("write", [ParquetPartReader(spec.parts_dir("kept")),
                                  DedupWriteStep(drops, kept_name="unique"), parquet], reads_input=False)]
    return TranslationSummary.of(execute(spec, [*stages, merge_stage(merge_made, spec)], run, workers,
                                         TranslationPlan.signature(spec), plan.prepare))


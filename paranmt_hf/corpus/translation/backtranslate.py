r"""Back-translate the non-English side of a bitext into English pairs, at any scale, resumable.

ParaNMT's construction (EMNLP 2017 §3, ACL 2018 §3).

:func:`backtranslate` reads bitext files (two tab-separated columns, one of them English), translates the other
column with a seq2seq model (:mod:`paranmt_hf.corpus.translation.transformers_engine`; ``engine="ctranslate2"`` for
:mod:`paranmt_hf.corpus.translation.ctranslate2_engine`) and writes, for every candidate of every sentence, one line

    reference \\t back-translation \\t translation_cost [\\t source]

after a header line naming the columns (``reference paraphrase translation_cost [source]``, which the corpus tools
read back by name). ``num_return`` candidates per sentence make the n-best list of EMNLP 2017 (one line each, best
first); the cost is the mean negative log-likelihood per target token (the module docstring of
:mod:`paranmt_hf.corpus.translation.transformers_engine` says exactly which tokens count).

It runs as datatrove stages (:mod:`paranmt_hf.corpus.pipeline.runner`): tasks translate contiguous chunks of the input
(sorted by length inside a chunk and batched under a token budget) and keep every finished chunk in the work
folder, so a killed run, started again, translates only the chunks it had not finished and writes the same output
as an uninterrupted run. Sampling seeds derive from the seed and the chunk, so a sampled output does not depend on
the number of tasks either.

Bad input is counted, never misaligned: a line without exactly two columns or with an empty side is skipped and
counted (``strict``: an error naming it), a source longer than the model's limit is truncated and counted, a
candidate that is empty after decoding is dropped and counted, and tabs or line breaks inside a translation are
replaced by spaces (counted).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ...data.records import ParsedBlock
from ...data.writer import format_numbers
from ...utils.atomic import atomic_write_json, check_output
from ..errors import CorpusError
from ..pipeline.parts import TsvPartWriter, encode_lines, is_gzip_name, merge_tsv
from ..pipeline.runner import (
    JobSpec,
    RunOptions,
    Stage,
    Summary,
    check_work_outside_inputs,
    execute,
    make_spec,
    merge_stage,
    open_work_dir,
)
from ..pipeline.steps import CorpusStep
from ..pipeline.task_process import write_file
from .model_prep import ResolvedModel, prepare_copy, resolve_translation_model
from .source_cleaning import SourceCleaning, SourceCleanStep, default_cleaning, source_side
from .transformers_engine import DecodingOptions, EngineOptions, Translation

logger = logging.getLogger("paranmt_hf.corpus")

CHUNK_BYTES = 1 << 16
"""Default chunk of a back-translation: 64 KiB of bitext (~500 sentences), the unit of resumption."""
OUTPUT_COLUMNS = ("translation_cost",)


def output_header(with_source: bool) -> str:
    """The header line of a back-translation output."""
    return "\t".join(("reference", "paraphrase", *OUTPUT_COLUMNS, *(("source",) if with_source else ())))


def chunk_seed(seed: int, chunk: int, part: int) -> int:
    """The sampling seed of one chunk: fixed by the run's seed and the chunk, whatever the tasks."""
    digest = hashlib.blake2b(f"{seed}:{chunk}:{part}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little") & 0x7FFFFFFF


def _clean(text: str) -> tuple[str, bool]:
    """``text`` with tabs and line breaks replaced by spaces, and whether it had any."""
    if "\t" in text or "\n" in text or "\r" in text:
        return " ".join(text.replace("\t", " ").replace("\r", " ").split("\n")), True
    return text, False


THROUGHPUT = "throughput: "
"""Prefix of the counts that measure this run's decoding (not outcomes: :class:`TranslationSummary` reads them)."""


class BacktranslateStep(CorpusStep):
    """Translate the source side of each bitext batch; the batch passed on holds the candidate pairs.

    The batch's ``parsed`` becomes the pairs (reference, candidate) with the output lines, its ``columns`` get
    ``translation_cost`` (and ``source``), its ``output`` the lines as bytes. Finished chunks are kept in
    ``cache_dir`` (one file per chunk) and reused by a resumed run. With ``dedup``, each distinct source of a chunk is
    decoded once and its candidates are given to every line that has it, in input order (under beam or greedy
    search the output is the one of decoding every line). Each decoded chunk adds its sentences, target tokens and
    decoding time to the task's statistics and log (:class:`TranslationSummary`).

    Args:
        model: Hub id or folder of the translation model (the corpus commands pass their prepared copy).
        options: decoding options.
        engine: the engine's options (:func:`~paranmt_hf.corpus.translation.engines.engine_options`).
        source_column: 1 or 2, the non-English column (None: from the file names).
        with_source: add the source sentence as a fourth column.
        cache_dir: where finished chunks are kept (None: nowhere).
        compress: the output bytes are gzip members.
        dedup: decode each distinct source of a chunk once.
    """

    name = "back-translate"
    type = "🔁 - TRANSLATE"

    def __init__(self, model: str, options: DecodingOptions, engine: EngineOptions,
                 source_column: int | None = None, with_source: bool = False,
                 cache_dir: str | os.PathLike[str] | None = None, compress: bool = False, dedup: bool = True) -> None:
        super().__init__()
        self.model, self.options, self.engine = model, options, engine
        self.source_column, self.with_source, self.compress = source_column, with_source, compress
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)
        self.dedup = dedup

    def setup(self, rank: int, world_size: int) -> None:
        """Load the translator (once per task), with the task's threads, on the task's device."""
        from ..pipeline.executors import task_thread_count
        from .engines import load_translator

        engine = self.engine
        threads = task_thread_count(engine.threads)
        if threads is not None:
            engine = replace(engine, threads=threads)
        self._translator = load_translator(self.model, self.options, engine, rank=rank)

    def _cache(self, batch: Any) -> Path | None:
        if self.cache_dir is None:
            return None
        return Path(self.cache_dir) / f"{batch.chunk:08d}-{batch.part:03d}.json"

    def process(self, batch: Any) -> Any:
        """Translate (or take from the cache) and pass on the candidate pairs."""
        cache = self._cache(batch)
        if cache is not None and cache.is_file():
            record = json.loads(cache.read_text(encoding="utf-8"))
            if record["first_line"] == (batch.parsed.numbers[0] if len(batch) else None):
                self.count(record["counts"] | {"chunks resumed": 1})
                return self._pairs(batch, record["rows"])
        source_first = source_side(batch.source, self.source_column)
        parsed = batch.parsed
        sources, references = (parsed.text_a, parsed.text_b) if source_first else (parsed.text_b, parsed.text_a)
        distinct = list(dict.fromkeys(sources)) if self.dedup else list(sources)
        start = time.perf_counter()
        result = self._translator.translate(distinct, seed=chunk_seed(self.options.seed, batch.chunk, batch.part))
        seconds = time.perf_counter() - start
        if self.dedup:
            found = dict(zip(distinct, zip(result.hypotheses, result.truncated, strict=True), strict=True))
            hypotheses, truncated = [found[s][0] for s in sources], [found[s][1] for s in sources]
        else:
            hypotheses, truncated = result.hypotheses, result.truncated
        rows, counts = self._rows(parsed, sources, references, hypotheses)
        counts["truncated sources"] = sum(truncated)
        counts["duplicate sources (decoded once)"] = len(sources) - len(distinct)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            write_file(cache, json.dumps({"first_line": parsed.numbers[0] if len(batch) else None, "counts": counts,
                                          "rows": rows}))  # per-attempt temporary name (task_process)
        generated = sum(c.tokens for h in result.hypotheses for c in h)
        self.count(counts | {f"{THROUGHPUT}sentences": len(sources), f"{THROUGHPUT}decoded sentences": len(distinct),
                             f"{THROUGHPUT}target tokens": generated,
                             f"{THROUGHPUT}decoding ms": round(seconds * 1000)})
        if distinct:
            from loguru import logger as task_logger  # the task's log file

            task_logger.info(f"chunk {batch.chunk}.{batch.part}: {len(sources)} sentences ({len(distinct)} decoded) "
                             f"in {seconds:.2f} s: {len(sources) / max(seconds, 1e-9):.1f} sentences/s, "
                             f"{generated / max(seconds, 1e-9):.0f} target tokens/s")
        return self._pairs(batch, rows)

    def _rows(self, parsed: ParsedBlock, sources: list[str], references: list[str],
              hypotheses: list[list[Translation]]) -> tuple[list[list[Any]], dict[str, int]]:
        """``[line number, reference, candidate, cost, source]`` per kept candidate, and the counts."""
        counts = {"sentences": len(sources), "candidates": 0, "empty candidates": 0, "unfinished candidates": 0,
                  "tabs or line breaks replaced": 0}
        rows: list[list[Any]] = []
        for number, source, reference, candidates in zip(parsed.numbers, sources, references, hypotheses,
                                                         strict=True):
            for candidate in candidates:
                text, replaced = _clean(candidate.text)
                counts["tabs or line breaks replaced"] += replaced
                if not text.strip():
                    counts["empty candidates"] += 1
                    continue
                counts["candidates"] += 1
                counts["unfinished candidates"] += not candidate.finished
                rows.append([number, reference, text, candidate.cost, source])
        return rows, counts

    def _pairs(self, batch: Any, rows: list[list[Any]]) -> Any:
        """The batch holding the candidate pairs."""
        costs = [r[3] for r in rows]
        columns = [[r[1] for r in rows], [r[2] for r in rows], format_numbers(costs)]
        if self.with_source:
            columns.append([r[4] for r in rows])
        lines = list(map("\t".join, zip(*columns, strict=True))) if rows else []
        batch.parsed = ParsedBlock(batch.source, text_a=columns[0], text_b=columns[1], score=[None] * len(rows),
                                   overlap=[None] * len(rows), lines=lines, numbers=[r[0] for r in rows],
                                   report=batch.parsed.report, position=batch.parsed.position)
        batch.columns = {"translation_cost": costs}
        if self.with_source:
            batch.columns["source"] = [r[4] for r in rows]
        batch.output = encode_lines(lines, self.compress)
        return batch


def engine_settings(engine: EngineOptions) -> dict[str, Any]:
    """What a run records of its engine (its name and options, less those that change no output)."""
    from .engines import engine_name

    settings = {k: v for k, v in asdict(engine).items() if k not in ("threads", "inter_threads", "cache_dir")}
    return {"engine": engine_name(engine), "engine_kwargs": settings}


MODEL_RECORD = "model.json"
"""The work folder's record of the run's translation model (name, Hub revision, content sha256)."""


def check_model(model: str | os.PathLike[str], options: DecodingOptions, engine: EngineOptions,
                revision: str | None = None) -> ResolvedModel:
    """Pin and check the model and the decoding before any task starts (Hub ids resolved here, once).

    Checks that it is a seq2seq model with known language codes whose target is English and that the engine can
    decode as asked (:func:`~paranmt_hf.corpus.translation.transformers_engine.decoding_plan`); returns it with its
    folder, Hub commit
    and content hash (:func:`~paranmt_hf.corpus.translation.model_prep.resolve_translation_model`).

    Raises:
        TranslationModelError: the model cannot translate (not seq2seq, a code missing, unknown or not English...).
        InvalidOptionError: decoding options the model or the engine cannot honour.
    """
    from .engines import check_decoding
    from .transformers_engine import (
        LanguageCodes,
        decoding_plan,
        load_generation_config,
        load_seq2seq_config,
        load_tokenizer,
        require_english_target,
    )

    check_decoding(engine, options)
    resolved = resolve_translation_model(model, revision)
    trust = engine.trust_remote_code
    folder = str(resolved.folder)
    config = load_seq2seq_config(folder, trust)
    LanguageCodes.setup(load_tokenizer(folder, trust), resolved.name, options.source_lang, options.target_lang)
    require_english_target(options.target_lang)
    decoding_plan(options, load_generation_config(folder, config), config, resolved.name)
    return resolved


def prepare_model(resolved: ResolvedModel, destination: str | os.PathLike[str], engine: EngineOptions,
                  progress: bool = False) -> tuple[str, EngineOptions]:
    """Copy the model (and convert it for CTranslate2) once into ``destination``: what every task then loads.

    Returns the folder the tasks load and their engine options (``cache_dir``: where its CTranslate2 conversion
    is). Both are keyed by the model's content (:func:`~paranmt_hf.corpus.translation.model_prep.prepare_copy`,
    :func:`~paranmt_hf.corpus.translation.ctranslate2_engine.converted_model`): a second run with the same model
    reuses them.
    """
    from .engines import engine_name

    copy = prepare_copy(resolved, destination)
    if engine_name(engine) == "ctranslate2":
        from .ctranslate2_engine import converted_model

        converted_model(str(copy), copy.parent, engine.trust_remote_code, progress=progress)
        engine = replace(engine, cache_dir=str(copy.parent))
    return str(copy), engine


def open_model_run(spec: JobSpec, run: RunOptions, resolved: ResolvedModel,
                   model_cache: str | os.PathLike[str] | None = None) -> tuple[RunOptions, Path]:
    """Open the run's work folder before its model is prepared there; returns the run options and the model folder.

    A work folder left by a run of another model (its files replaced in place, say) is refused in one sentence,
    unless ``run.restart``. The run's :data:`MODEL_RECORD` is written; the models go to ``model_cache`` or
    ``<work>/models``. The returned options no longer restart (the folder was opened, with its model, here).

    Raises:
        CorpusError: the work folder belongs to a run of another model, or to another run.
    """
    check_output(spec.output, spec.all_inputs, spec.overwrite)
    check_work_outside_inputs(spec)
    record = spec.work / MODEL_RECORD
    if not run.restart and record.is_file():
        try:
            before = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = {}
        if isinstance(before, dict) and before.get("sha256") not in (None, resolved.sha256):
            raise CorpusError(f"the translation model {resolved.name} is not the one the interrupted run in "
                              f"{spec.work} started with (its files' sha256 was {before['sha256'][:12]}…, is now "
                              f"{resolved.sha256[:12]}…): put that model back to resume, or add --restart to start "
                              "again with this one")
    open_work_dir(spec, {"options": spec.options}, run.restart)
    atomic_write_json(record, resolved.record())
    return replace(run, restart=False), Path(model_cache) if model_cache is not None else spec.work / "models"


@dataclass
class TranslationSummary(Summary):
    """A back-translation's :class:`~paranmt_hf.corpus.pipeline.runner.Summary` with its decoding throughput.

    ``throughput`` (chunks decoded by this run only; resumed ones are not timed again): ``sentences`` (input
    sentences of those chunks), ``decoded_sentences`` (distinct sources decoded), ``target_tokens`` (tokens of the
    candidates generated, end tokens included), ``decoding_seconds`` (summed over tasks), and the rates a planner
    reads: ``sentences_per_second`` / ``target_tokens_per_second`` of the whole run (wall time) and
    ``per_task_sentences_per_second`` / ``per_task_target_tokens_per_second`` (one task while it decodes).
    """

    throughput: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, summary: Summary) -> TranslationSummary:
        """The summary with the throughput counts taken out of its outcome counts."""
        counts = summary.counts.copy()
        measured = {k.removeprefix(THROUGHPUT): counts.pop(k) for k in list(counts) if k.startswith(THROUGHPUT)}
        out = cls(lines=summary.lines, counts=counts, report=summary.report, seconds=summary.seconds,
                  tasks=summary.tasks, workers=summary.workers, complete=summary.complete)
        sentences, tokens = measured.get("sentences", 0), measured.get("target tokens", 0)
        busy = measured.get("decoding ms", 0) / 1000
        wall = summary.seconds
        out.throughput = {
            "sentences": sentences, "decoded_sentences": measured.get("decoded sentences", 0),
            "target_tokens": tokens, "decoding_seconds": busy,
            "sentences_per_second": sentences / wall if wall else 0.0,
            "target_tokens_per_second": tokens / wall if wall else 0.0,
            "per_task_sentences_per_second": sentences / busy if busy else 0.0,
            "per_task_target_tokens_per_second": tokens / busy if busy else 0.0,
        }
        return out

    def line(self, what: str = "lines") -> str:
        """The summary line, then the throughput."""
        t = self.throughput
        if not t.get("sentences"):
            return super().line(what)
        return (f"{super().line(what)}; decoding: {t['sentences_per_second']:,.1f} sentences/s, "
                f"{t['target_tokens_per_second']:,.0f} target tokens/s in all "
                f"({t['per_task_sentences_per_second']:,.1f} sentences/s, "
                f"{t['per_task_target_tokens_per_second']:,.0f} target tokens/s per task)")

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly totals, with the throughput."""
        return super().as_dict() | {"throughput": dict(self.throughput)}


def backtranslate(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    model: str | os.PathLike[str],
    options: DecodingOptions | None = None,
    run: RunOptions | None = None,
    *,
    engine: str | EngineOptions = "transformers",
    engine_kwargs: Mapping[str, Any] | None = None,
    source_column: int | None = None,
    with_source: bool = False,
    model_revision: str | None = None,
    model_cache: str | os.PathLike[str] | None = None,
    cleaning: SourceCleaning | None = None,
    member_pattern: str | None = None,
    strict: bool = False,
    overwrite: bool = False,
) -> TranslationSummary:
    """Back-translate the non-English column of ``inputs`` into ``output`` (see the module docstring).

    The model is resolved (a Hub id pinned to a commit), hashed, copied and, for CTranslate2, converted once, in this
    process, into the run's work folder (or ``model_cache``), keyed by its content; every task loads that copy. Its
    content hash is part of the run's identity: a resumed run with a changed model is refused. The bitext is cleaned
    first (``cleaning``, default :func:`~paranmt_hf.corpus.translation.source_cleaning.default_cleaning`: duplicate
    sources of a
    chunk decoded once, references the default filter would drop never decoded).

    Args:
        inputs: bitext files (two tab-separated columns; plain, .gz or .zip).
        output: TSV(.gz) output (atomic; never an input; an existing one only with ``overwrite``).
        model: Hub id or folder of a seq2seq translation model into English.
        options: decoding options (beam, n-best, sampling, lengths, language codes, batch budget, seed).
        run: tasks, workers, executor, progress (:class:`~paranmt_hf.corpus.pipeline.runner.RunOptions`; chunks of
            :data:`CHUNK_BYTES` unless set).
        engine: the engine: a name of :data:`~paranmt_hf.corpus.translation.engines.ENGINES` (``"transformers"``,
            ``"ctranslate2"``) or its options object (``CTranslate2Options(compute_type="int8")``).
        engine_kwargs: with an engine name, its settings (transformers: ``device``, ``dtype``, ``threads``,
            ``trust_remote_code``; ctranslate2: ``compute_type``, ``device``, ``threads``, ``cache_dir``,
            ``trust_remote_code``); a setting of another engine is refused before any work.
        source_column: 1 or 2, the non-English column (None: from ``en-xx`` / ``xx-en`` file names).
        with_source: add the source sentence as a fourth column.
        model_revision: the Hub revision (branch, tag or commit) of a Hub id (default: its main branch).
        model_cache: where the prepared model goes (default: the run's work folder); kept across runs there.
        cleaning: what is removed before decoding
        (:class:`~paranmt_hf.corpus.translation.source_cleaning.SourceCleaning`).
        member_pattern: zip member glob.
        strict: fail on the first bad line instead of skipping it.
        overwrite: replace an existing output.
    """
    options = options or DecodingOptions()
    run = replace(run or RunOptions(), chunk_bytes=(run.chunk_bytes if run else None) or CHUNK_BYTES)
    for path in inputs:
        source_side(os.fspath(path), source_column)  # fail now, not in a task
    from .engines import engine_options

    typed = engine_options(engine, engine_kwargs)
    cleaning = cleaning if cleaning is not None else default_cleaning()
    resolved = check_model(model, options, typed, model_revision)
    suffix = ".tsv.gz" if is_gzip_name(output) else ".tsv"
    settings = {"model": resolved.name, "model_revision": resolved.revision, "model_sha256": resolved.sha256,
                **engine_settings(typed), "decoding": asdict(options), "source_column": source_column,
                "with_source": with_source, "cleaning": asdict(cleaning), "member": member_pattern, "strict": strict}
    spec, workers = make_spec("backtranslate", inputs, output, run, overwrite,
                              {"settings": settings, "part_suffix": suffix, "reading_stage": "main",
                               "header": output_header(with_source)}, protected=[model])
    run, models = open_model_run(spec, run, resolved, model_cache)
    folder, task_engine = prepare_model(resolved, models, typed, progress=run.progress)
    step = BacktranslateStep(folder, options, task_engine, source_column, with_source,
                             spec.parts_dir("chunks"), is_gzip_name(output), dedup=cleaning.dedup)
    stages = [Stage("main", [spec.reader("main", "bitext", strict, member_pattern),
                             SourceCleanStep(cleaning, source_column), step,
                             TsvPartWriter(spec.parts_dir(), suffix)], unit="sentences"),
              merge_stage(merge_tsv, spec)]
    return TranslationSummary.of(execute(spec, stages, run, workers))

r"""Back-translate the non-English side of a bitext into English pairs, at any scale, resumable.

ParaNMT's construction (EMNLP 2017 §3, ACL 2018 §3). :func:`backtranslate` translates the non-English column of
bitext files with a seq2seq model (:mod:`~paranmt_hf.corpus.translation.transformers_engine` or
:mod:`~paranmt_hf.corpus.translation.ctranslate2_engine`) and writes, after a header, one line per candidate

    reference \\t back-translation \\t translation_cost [\\t source]

(``num_return`` candidates: EMNLP 2017's n-best list, best first). It runs as datatrove stages: each distinct
source of the run is decoded once (:mod:`paranmt_hf.corpus.translation.source_dedup`), finished chunks are kept
so a killed run resumes, and sampling seeds derive from the seed and the chunk, so the output does not depend on
the number of tasks.

Bad input is counted, never misaligned: lines without two non-empty columns are skipped (``strict``: an error),
over-long sources truncated, empty candidates dropped, tabs or line breaks in a translation replaced by spaces.
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
from ...utils.atomic import atomic_write_json
from ..errors import RESTART, CorpusError, option
from ..pipeline.batches import RateFile
from ..pipeline.parts import TsvPartWriter, is_gzip_name, merge_tsv
from ..pipeline.runner import JobOptions, JobSpec, RunOptions, Stage, Summary, execute, make_spec, merge_stage
from ..pipeline.steps import CorpusStep
from ..pipeline.task_process import write_file
from .model_prep import ResolvedModel, prepare_copy, resolve_translation_model
from .source_cleaning import (
    SourceCleaning,
    SourceCleanStep,
    batch_sources,
    default_cleaning,
    resolve_cleaning,
    source_side,
)
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


MODES = ("all", "decode", "fill")
CACHE_VERSION = 2
"""The format of a chunk's cache record (a record of another format is decoded again)."""


def _candidate(translation: Translation) -> list[Any]:
    return [translation.text, translation.cost, translation.tokens, translation.finished]


def _translation(candidate: Sequence[Any]) -> Translation:
    return Translation(text=candidate[0], cost=candidate[1], tokens=candidate[2], finished=candidate[3])


class BacktranslateStep(CorpusStep):
    """Translate the source side of each bitext batch; the batch passed on holds the candidate pairs.

    Decoded chunks are kept in ``cache_dir`` and reused by a resumed run.

    Args:
        model: Hub id or folder of the translation model (the corpus commands pass their prepared copy).
        options: decoding options.
        engine: the engine's options (:func:`~paranmt_hf.corpus.translation.engines.engine_options`).
        source_column: 1 or 2, the non-English column (None: from the file names).
        with_source: add the source sentence as a fourth column.
        cache_dir: where decoded chunks are kept (None: nowhere; ``"fill"`` needs it).
        mode: ``"all"``, ``"decode"`` (later sources skipped) or ``"fill"`` (:mod:`~.source_dedup`).
        duplicates: the duplicates table's folder (``"decode"``, ``"fill"``).
        exports: the side files' folder (``"decode"``, ``"fill"``).
        throughput_dir: where a decoding task writes its running throughput (None: nowhere).
    """

    name = "back-translate"
    type = "🔁 - TRANSLATE"

    def __init__(self, model: str, options: DecodingOptions, engine: EngineOptions,
                 source_column: int | None = None, with_source: bool = False,
                 cache_dir: str | os.PathLike[str] | None = None, mode: str = "all",
                 duplicates: str | os.PathLike[str] | None = None, exports: str | os.PathLike[str] | None = None,
                 throughput_dir: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
        if mode != "all" and (duplicates is None or exports is None or cache_dir is None):
            raise ValueError(f"mode {mode!r} needs the duplicates table, the side files and the chunk cache")
        self.model, self.options, self.engine = model, options, engine
        self.source_column, self.with_source = source_column, with_source
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)
        self.mode = mode
        self.duplicates = None if duplicates is None else os.fspath(duplicates)
        self.exports = None if exports is None else os.fspath(exports)
        self.throughput_dir = None if throughput_dir is None else os.fspath(throughput_dir)
        self.uses_device = mode != "fill"  # cluster.stage_uses_device: the fill stage gets no GPU

    def concurrent_tasks(self, workers: int, tasks: int) -> tuple[int, str | None]:
        """How many of its stage's tasks run at once here, and the line saying so (:func:`.engines.concurrent_tasks`).

        The runner asks before it starts the stage: a model on GPUs runs at most one task per GPU at a time.
        """
        from .engines import concurrent_tasks

        return (workers, None) if self.mode == "fill" else concurrent_tasks(self.engine, workers, tasks)

    def use_model(self, model: str, engine: EngineOptions) -> None:
        """Load ``model`` with ``engine`` (the prepared copy, set once the run has made it)."""
        self.model, self.engine = model, engine

    def setup(self, rank: int, world_size: int) -> None:
        """Load the translator (once per task, with the task's threads, on the task's device) and the tables."""
        from ..pipeline.executors import task_thread_count
        from .engines import load_translator
        from .source_dedup import ExportWriter, load_duplicates, load_exports

        self._seen = 0  # the task's kept lines so far: the positions of the duplicates table
        self._later: dict[int, int] = {}
        self._first: dict[int, int] = {}
        if self.duplicates is not None:
            self._later, self._first = load_duplicates(self.duplicates, rank)
        self._exports = ExportWriter(self.exports, rank) if self.mode == "decode" else None
        self._found = load_exports(self.exports, self._later.values()) if self.mode == "fill" else {}
        if self.mode == "fill" and len(self._found) < len(set(self._later.values())):
            raise CorpusError(f"the candidates of some duplicated sources are missing from {self.exports}: run the "
                              f"command again with {option(*RESTART)}")
        self._rate = RateFile(self.throughput_dir, rank) if self.mode != "fill" else None
        if self.mode == "fill":
            return
        engine = self.engine
        threads = task_thread_count(engine.threads)
        if threads is not None:
            engine = replace(engine, threads=threads)
        self._translator = load_translator(self.model, self.options, engine, rank=rank)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Any:
        """Translate (or fill) every batch; a decoding task writes its side file at its end."""
        yield from super().run(data, rank, world_size)
        if self._exports is not None:
            self._exports.close()

    def _cache(self, batch: Any) -> Path | None:
        if self.cache_dir is None:
            return None
        return Path(self.cache_dir) / f"{batch.chunk:08d}-{batch.part:03d}.json"

    def _cached(self, batch: Any) -> dict[str, Any] | None:
        cache = self._cache(batch)
        if cache is None or not cache.is_file():
            return None
        record = json.loads(cache.read_text(encoding="utf-8"))
        first = batch.parsed.numbers[0] if len(batch) else None
        if record.get("version") != CACHE_VERSION or record["first_line"] != first:
            return None
        return record

    def process(self, batch: Any) -> Any:
        """Decode, fill or both (see the class docstring); the batch of pairs passed on (``"decode"``: none)."""
        start = self._seen
        self._seen += len(batch)
        sources, references = batch_sources(batch, self.source_column)
        later = [self._later.get(i) for i in range(start, start + len(sources))]
        if self.mode == "fill":
            record = self._cached(batch)
            if record is None:
                raise CorpusError(f"the translation of chunk {batch.chunk} of {batch.source} is missing from the "
                                  f"work folder {Path(self.cache_dir).parent}: run the command again with "
                                  f"{option(*RESTART)}")
        else:
            record = self._decoded(batch, sources, start, later)
            if self.mode == "decode":
                return None
        decoded = iter(record["candidates"])
        hypotheses = [[_translation(c) for c in (next(decoded) if h is None else self._found[h])] for h in later]
        rows, counts = self._rows(batch.parsed, sources, references, hypotheses)
        self.count(counts | {"duplicate sources (decoded once)": len(later) - later.count(None)})
        return self._pairs(batch, rows)

    def _decoded(self, batch: Any, sources: list[str], start: int, later: list[int | None]) -> dict[str, Any]:
        """The chunk's record: its decoded lines' candidates (from the cache when a run decoded it already)."""
        record = self._cached(batch)
        if record is not None:
            self.count({"chunks resumed": 1})
        else:
            decode = [s for s, h in zip(sources, later, strict=True) if h is None]
            begin = time.perf_counter()
            result = self._translator.translate(decode, seed=chunk_seed(self.options.seed, batch.chunk, batch.part))
            seconds = time.perf_counter() - begin
            candidates = [[_candidate(t) for t in h] for h in result.hypotheses]
            exports: dict[str, Any] = {}
            if self._first:
                kept = iter(candidates)
                for i, h in enumerate(later):
                    if h is None:
                        mine = next(kept)
                        if start + i in self._first:
                            exports[str(self._first[start + i])] = mine
            record = {"version": CACHE_VERSION, "first_line": batch.parsed.numbers[0] if len(batch) else None,
                      "candidates": candidates, "exports": exports}
            cache = self._cache(batch)
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                write_file(cache, json.dumps(record))  # per-attempt temporary name (task_process)
            generated = sum(c.tokens for h in result.hypotheses for c in h)
            self.count({"truncated sources": sum(result.truncated), f"{THROUGHPUT}sentences": len(sources),
                        f"{THROUGHPUT}decoded sentences": len(decode), f"{THROUGHPUT}target tokens": generated,
                        f"{THROUGHPUT}decoding ms": round(seconds * 1000)})
            if self._rate is not None:
                self._rate.add(len(sources), generated, seconds)
            if decode:
                from loguru import logger as task_logger  # the task's log file

                task_logger.info(f"chunk {batch.chunk}.{batch.part}: {len(sources)} sentences ({len(decode)} "
                                 f"decoded) in {seconds:.2f} s: {len(sources) / max(seconds, 1e-9):.1f} "
                                 f"sentences/s, {generated / max(seconds, 1e-9):.0f} target tokens/s")
        if self._exports is not None:
            self._exports.add(record["exports"])
        return record

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
    folder, Hub commit and content hash (:func:`~paranmt_hf.corpus.translation.model_prep.resolve_translation_model`).

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


def check_model_record(spec: JobSpec, resolved: ResolvedModel) -> None:
    """Refuse a work folder left by a run of another model (its files replaced in place, say), then record this one.

    Raises:
        CorpusError: the interrupted run in the work folder started with another model.
    """
    record = spec.work / MODEL_RECORD
    if record.is_file():
        try:
            before = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            before = {}
        if isinstance(before, dict) and before.get("sha256") not in (None, resolved.sha256):
            raise CorpusError(f"the translation model {resolved.name} is not the one the interrupted run in "
                              f"{spec.work} started with (its files' sha256 was {before['sha256'][:12]}…, is now "
                              f"{resolved.sha256[:12]}…): put that model back to resume, or add {option(*RESTART)} "
                              "to start again with this one")
    atomic_write_json(record, resolved.record())


@dataclass(frozen=True)
class TranslationOptions:
    """How a bitext is back-translated: the same object for ``backtranslate`` and ``corpus make`` (all optional).

    Attributes:
        decoding: beam, n-best, sampling, lengths, language codes, batch budget, seed.
        engine: a name of :data:`~paranmt_hf.corpus.translation.engines.ENGINES` or that engine's options object.
        cleaning: what is removed before decoding: None (the default), a
            :class:`~paranmt_hf.corpus.translation.source_cleaning.SourceCleaning`, a mapping of fields to change, or
            False (:func:`~paranmt_hf.corpus.translation.source_cleaning.resolve_cleaning`).
        source_column: 1 or 2, the non-English column (None: from ``en-xx`` / ``xx-en`` file names).
        with_source: keep the source sentence as a column.
        model_revision: the Hub revision of a Hub id model (default: its main branch).
        model_cache: where the prepared model goes, kept across runs (default: the run's work folder).
    """

    decoding: DecodingOptions = field(default_factory=DecodingOptions)
    engine: str | EngineOptions = "transformers"
    cleaning: SourceCleaning | Mapping[str, Any] | bool | None = None
    source_column: int | None = None
    with_source: bool = False
    model_revision: str | None = None
    model_cache: str | os.PathLike[str] | None = None


@dataclass
class TranslationPlan:
    """The back-translation part of a command's run (``corpus backtranslate``, ``corpus make``), checked.

    :meth:`stages` gives the stages before the command's main stage and the main stage's first steps (read, clean,
    translate or fill); :meth:`prepare` is the run's ``prepare`` (:func:`~paranmt_hf.corpus.pipeline.runner.execute`:
    the model's record checked and the model copied, under the run's lock); :meth:`settings` what the run records.
    """

    resolved: ResolvedModel
    options: DecodingOptions
    engine: EngineOptions
    cleaning: SourceCleaning
    source_column: int | None = None
    with_source: bool = False
    model_cache: str | None = None
    member_pattern: str | None = None
    strict: bool = False
    progress: bool = True
    _decoders: list[BacktranslateStep] = field(default_factory=list, repr=False)

    @classmethod
    def check(cls, inputs: Sequence[str | os.PathLike[str]], model: str | os.PathLike[str],
              translation: TranslationOptions | None, run: RunOptions | None, default: SourceCleaning, *,
              member_pattern: str | None = None, strict: bool = False) -> tuple[TranslationPlan, RunOptions]:
        """Check everything before any work (sides, engine, model, decoding); the plan and the run options.

        ``default`` is the command's cleaning when ``translation.cleaning`` does not replace it
        (:func:`~paranmt_hf.corpus.translation.source_cleaning.resolve_cleaning`).
        """
        from ...data.reader import check_input_files
        from .engines import engine_options

        t = translation or TranslationOptions()
        cleaning = resolve_cleaning(t.cleaning, default)
        check_input_files(inputs)
        run = replace(run or RunOptions(), chunk_bytes=(run.chunk_bytes if run else None) or CHUNK_BYTES)
        for path in inputs:
            source_side(os.fspath(path), t.source_column)  # fail now, not in a task
        typed = engine_options(t.engine)
        resolved = check_model(model, t.decoding, typed, t.model_revision)
        return cls(resolved, t.decoding, typed, cleaning, t.source_column,
                   t.with_source, None if t.model_cache is None else os.fspath(t.model_cache), member_pattern,
                   strict, run.progress), run

    def settings(self) -> dict[str, Any]:
        """What the run records of its translation (part of its identity)."""
        r = self.resolved
        return {"model": r.name, "model_revision": r.revision, "model_sha256": r.sha256,
                **engine_settings(self.engine), "decoding": asdict(self.options),
                "source_column": self.source_column, "with_source": self.with_source,
                "cleaning": asdict(self.cleaning), "member": self.member_pattern, "strict": self.strict}

    @staticmethod
    def signature(spec: JobSpec) -> dict[str, Any]:
        """The run's identity in its work folder, less the model's content (:func:`check_model_record` says it)."""
        options = spec.options.identity()
        options["settings"].pop("model_sha256", None)
        return {"options": options}

    def stages(self, spec: JobSpec) -> tuple[list[Stage], list[Any]]:
        """``(stages before the main one, the main stage's first steps)``.

        Without source de-duplication: the main stage reads, cleans and decodes. With it: an index of the sources
        and the table of their duplicates (both ``whole``), a ``translate`` stage that decodes each distinct source
        once, and the main stage fills every line's candidates
        (:mod:`~paranmt_hf.corpus.translation.source_dedup`).
        """
        from ..selection.dedup import BUCKETS
        from .source_dedup import SourceFindStep, SourceHashStep

        def read(stage: str) -> list[Any]:
            return [spec.reader(stage, "bitext", self.strict, self.member_pattern),
                    SourceCleanStep(self.cleaning, self.source_column, counted=stage == "main")]

        def step(mode: str, stage: str, **tables: Any) -> BacktranslateStep:
            made = BacktranslateStep(str(self.resolved.folder), self.options, self.engine, self.source_column,
                                     self.with_source, spec.parts_dir("chunks"), mode=mode,
                                     throughput_dir=spec.stage_dir(stage) / "throughput", **tables)
            if mode != "fill":
                self._decoders.append(made)
            return made

        if not self.cleaning.dedup:
            return [], [*read("main"), step("all", "main")]
        hashes, table = spec.parts_dir("source-hashes"), spec.parts_dir("source-repeats")
        tables = {"duplicates": table, "exports": spec.parts_dir("source-candidates")}
        before = [Stage("sources", [*read("sources"), SourceHashStep(hashes, self.source_column)], counts=False,
                        whole=True),
                  Stage("repeats", [SourceFindStep(hashes, table)], tasks=min(BUCKETS, spec.tasks),
                        counts=False, reads_input=False, whole=True),
                  Stage("translate", [*read("translate"), step("decode", "translate", **tables)],
                        unit="sentences")]
        return before, [*read("main"), step("fill", "main", **tables)]

    def prepare(self, spec: JobSpec) -> None:
        """Check the work folder's model record, copy (and convert) the model once, give the copy to the steps."""
        check_model_record(spec, self.resolved)
        destination = Path(self.model_cache) if self.model_cache is not None else spec.work / "models"
        folder, engine = prepare_model(self.resolved, destination, self.engine, progress=self.progress)
        for decoder in self._decoders:
            decoder.use_model(folder, engine)


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
        return (f"{super().line(what)}; decoding: {t['decoded_sentences']:,} distinct sources decoded for "
                f"{t['sentences']:,} sentences, {t['sentences_per_second']:,.1f} sentences/s, "
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
    translation: TranslationOptions | None = None,
    run: RunOptions | None = None,
    *,
    member_pattern: str | None = None,
    strict: bool = False,
    overwrite: bool = False,
) -> TranslationSummary:
    """Back-translate the non-English column of ``inputs`` into ``output`` (see the module docstring).

    The model is resolved, hashed and prepared once, keyed by its content; a resumed run with a changed model is
    refused. The bitext is cleaned first (``translation.cleaning``).

    Args:
        inputs: bitext files (two tab-separated columns; plain, .gz or .zip).
        output: TSV(.gz) output (atomic; never an input; an existing one only with ``overwrite``).
        model: Hub id or folder of a seq2seq translation model into English.
        translation: decoding, engine, cleaning, source column, model revision and cache (:class:`TranslationOptions`).
        run: tasks, workers, executor, progress (:class:`~paranmt_hf.corpus.pipeline.runner.RunOptions`).
        member_pattern: zip member glob.
        strict: fail on the first bad line instead of skipping it.
        overwrite: replace an existing output.
    """
    plan, run = TranslationPlan.check(inputs, model, translation, run, default_cleaning(),
                                      member_pattern=member_pattern, strict=strict)
    suffix = ".tsv.gz" if is_gzip_name(output) else ".tsv"
    spec, workers = make_spec("backtranslate", inputs, output, run, overwrite,
                              JobOptions(plan.settings(), part_suffix=suffix, header=output_header(plan.with_source)),
                              protected=[model])
    before, head = plan.stages(spec)
    stages = [*before, Stage("main", [*head, TsvPartWriter(spec.parts_dir(), suffix)], unit="sentences"),
              merge_stage(merge_tsv, spec)]
    return TranslationSummary.of(execute(spec, stages, run, workers, TranslationPlan.signature(spec), plan.prepare))

r"""Back-translate the non-English side of a bitext into English pairs, at any scale, resumable.

ParaNMT's construction (EMNLP 2017 §3, ACL 2018 §3).

:func:`backtranslate` reads bitext files (two tab-separated columns, one of them English), translates the other
column with a seq2seq model (:mod:`paranmt_hf.corpus.translation`; ``engine="ctranslate2"`` for
:mod:`paranmt_hf.corpus.translation_ct2`) and writes, for every candidate of every sentence, one line

    reference \\t back-translation \\t translation_cost [\\t source]

after a header line naming the columns (``reference paraphrase translation_cost [source]``, which the corpus tools
read back by name). ``num_return`` candidates per sentence make the n-best list of EMNLP 2017 (one line each, best
first); the cost is the mean negative log-likelihood per target token (the module docstring of
:mod:`paranmt_hf.corpus.translation` says exactly which tokens count).

It runs as datatrove stages (:mod:`paranmt_hf.corpus.runner`): tasks translate contiguous chunks of the input
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
import os
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..data.configs import bitext_sides
from ..data.records import ParsedBlock
from ..data.writer import format_numbers
from .errors import CorpusError, InvalidOptionError
from .parts import TsvPartWriter, encode_lines, is_gzip_name, merge_tsv
from .runner import RunOptions, Stage, Summary, execute, make_spec, merge_stage
from .steps import CorpusStep
from .task_process import write_file
from .translation import DecodingOptions, Translation
from .translation_engines import ENGINES

CHUNK_BYTES = 1 << 16
"""Default chunk of a back-translation: 64 KiB of bitext (~500 sentences), the unit of resumption."""
OUTPUT_COLUMNS = ("translation_cost",)


def output_header(with_source: bool) -> str:
    """The header line of a back-translation output."""
    return "\t".join(("reference", "paraphrase", *OUTPUT_COLUMNS, *(("source",) if with_source else ())))


def source_side(path: str, source_column: int | None) -> bool:
    """Whether the source (non-English) side is the first column of ``path``'s lines.

    Raises:
        CorpusError: neither ``source_column`` (1 or 2) nor an ``en-xx`` / ``xx-en`` file name says it.
    """
    if source_column is not None:
        if source_column not in (1, 2):
            raise CorpusError(f"--source-column must be 1 or 2 (a bitext has two columns), got {source_column}")
        return source_column == 1
    sides = bitext_sides(path.split("::")[0])
    if sides is None:
        raise CorpusError(f"cannot tell which column of {path} is the non-English source: pass --source-column 1|2 "
                          "(or name the file en-xx / xx-en)")
    return not sides[0]


def chunk_seed(seed: int, chunk: int, part: int) -> int:
    """The sampling seed of one chunk: fixed by the run's seed and the chunk, whatever the tasks."""
    digest = hashlib.blake2b(f"{seed}:{chunk}:{part}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little") & 0x7FFFFFFF


def _clean(text: str) -> tuple[str, bool]:
    """``text`` with tabs and line breaks replaced by spaces, and whether it had any."""
    if "\t" in text or "\n" in text or "\r" in text:
        return " ".join(text.replace("\t", " ").replace("\r", " ").split("\n")), True
    return text, False


class BacktranslateStep(CorpusStep):
    """Translate the source side of each bitext batch; the batch passed on holds the candidate pairs.

    The batch's ``parsed`` becomes the pairs (reference, candidate) with the output lines, its ``columns`` get
    ``translation_cost`` (and ``source``), its ``output`` the lines as bytes. Finished chunks are kept in
    ``cache_dir`` (one file per chunk) and reused by a resumed run.

    Args:
        model: Hub id or folder of the translation model.
        options: decoding options.
        engine: ``"transformers"`` or ``"ctranslate2"``.
        engine_kwargs: passed to the engine (``compute_type``, ``device``, ``dtype``, ``trust_remote_code``...).
        source_column: 1 or 2, the non-English column (None: from the file names).
        with_source: add the source sentence as a fourth column.
        cache_dir: where finished chunks are kept (None: nowhere).
        compress: the output bytes are gzip members.
    """

    name = "back-translate"
    type = "🔁 - TRANSLATE"

    def __init__(self, model: str, options: DecodingOptions, engine: str = "transformers",
                 engine_kwargs: dict[str, Any] | None = None, source_column: int | None = None,
                 with_source: bool = False, cache_dir: str | os.PathLike[str] | None = None,
                 compress: bool = False) -> None:
        super().__init__()
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; choose one of {ENGINES}")
        self.model, self.options, self.engine = model, options, engine
        self.engine_kwargs = dict(engine_kwargs or {})
        self.source_column, self.with_source, self.compress = source_column, with_source, compress
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)

    def setup(self, rank: int, world_size: int) -> None:
        """Load the translator (once per task), with the task's threads."""
        from .executors import task_thread_count
        from .translation_engines import load_translator

        kwargs = dict(self.engine_kwargs)
        threads = task_thread_count(kwargs.pop("threads", None))
        if threads is not None:
            kwargs["threads"] = threads
        self._translator = load_translator(self.model, self.options, engine=self.engine, **kwargs)

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
        result = self._translator.translate(sources, seed=chunk_seed(self.options.seed, batch.chunk, batch.part))
        rows, counts = self._rows(parsed, sources, references, result.hypotheses)
        counts["truncated sources"] = result.truncated_count
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            write_file(cache, json.dumps({"first_line": parsed.numbers[0] if len(batch) else None, "counts": counts,
                                          "rows": rows}))  # per-attempt temporary name (task_process)
        self.count(counts)
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


def check_model(model: str, options: DecodingOptions, engine: str, engine_kwargs: dict[str, Any]) -> str:
    """Check the model before any task starts; returns the model name to pass to the tasks.

    Checks that it is a seq2seq model with known language codes, and converts it once for CTranslate2.

    Raises:
        TranslationModelError: the model cannot translate (not seq2seq, a code missing or unknown...).
    """
    from .translation import LanguageCodes, load_seq2seq_config, load_tokenizer, resolve_model

    name = resolve_model(model)
    trust = bool(engine_kwargs.get("trust_remote_code", False))
    load_seq2seq_config(name, trust)
    LanguageCodes.setup(load_tokenizer(name, trust), name, options.source_lang, options.target_lang)
    if engine == "ctranslate2":
        from .translation_ct2 import converted_model

        converted_model(name, engine_kwargs.get("cache_dir"), trust, progress=True)
    return name


def backtranslate(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    model: str | os.PathLike[str],
    options: DecodingOptions | None = None,
    run: RunOptions | None = None,
    *,
    engine: str = "transformers",
    source_column: int | None = None,
    with_source: bool = False,
    compute_type: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
    trust_remote_code: bool = False,
    member_pattern: str | None = None,
    strict: bool = False,
    overwrite: bool = False,
) -> Summary:
    """Back-translate the non-English column of ``inputs`` into ``output`` (see the module docstring).

    Args:
        inputs: bitext files (two tab-separated columns; plain, .gz or .zip).
        output: TSV(.gz) output (atomic; never an input; an existing one only with ``overwrite``).
        model: Hub id or folder of a seq2seq translation model into English.
        options: decoding options (beam, n-best, sampling, lengths, language codes, batch budget, seed).
        run: tasks, workers, executor, progress (:class:`~paranmt_hf.corpus.runner.RunOptions`; chunks of
            :data:`CHUNK_BYTES` unless set).
        engine: ``"transformers"`` or ``"ctranslate2"``.
        source_column: 1 or 2, the non-English column (None: from ``en-xx`` / ``xx-en`` file names).
        with_source: add the source sentence as a fourth column.
        compute_type: CTranslate2's compute type (default int8 on CPU).
        device: ``"cpu"`` / ``"cuda"`` (None: CUDA when available).
        dtype: transformers weight dtype (e.g. ``"bfloat16"`` on GPU).
        trust_remote_code: run code from the model folder.
        member_pattern: zip member glob.
        strict: fail on the first bad line instead of skipping it.
        overwrite: replace an existing output.
    """
    options = options or DecodingOptions()
    run = replace(run or RunOptions(), chunk_bytes=(run.chunk_bytes if run else None) or CHUNK_BYTES)
    for path in inputs:
        source_side(os.fspath(path), source_column)  # fail now, not in a task
    engine_kwargs: dict[str, Any] = {"device": device, "trust_remote_code": trust_remote_code}
    if engine == "ctranslate2":
        engine_kwargs["compute_type"] = compute_type
    elif compute_type is not None:
        raise InvalidOptionError("compute_type is a CTranslate2 setting: add engine='ctranslate2' "
                                 "(--engine ctranslate2)")
    else:
        engine_kwargs["dtype"] = dtype
    engine_kwargs = {k: v for k, v in engine_kwargs.items() if v is not None}
    name = check_model(os.fspath(model), options, engine, engine_kwargs)
    suffix = ".tsv.gz" if is_gzip_name(output) else ".tsv"
    settings = {"model": name, "engine": engine, "engine_kwargs": engine_kwargs, "decoding": asdict(options),
                "source_column": source_column, "with_source": with_source, "member": member_pattern,
                "strict": strict}
    spec, workers = make_spec("backtranslate", inputs, output, run, overwrite,
                              {"settings": settings, "part_suffix": suffix, "reading_stage": "main",
                               "header": output_header(with_source)}, protected=[model])
    step = BacktranslateStep(name, options, engine, engine_kwargs, source_column, with_source,
                             spec.parts_dir("chunks"), is_gzip_name(output))
    stages = [Stage("main", [spec.reader("main", "bitext", strict, member_pattern), step,
                             TsvPartWriter(spec.parts_dir(), suffix)], unit="sentences"),
              merge_stage(merge_tsv, spec)]
    return execute(spec, stages, run, workers)

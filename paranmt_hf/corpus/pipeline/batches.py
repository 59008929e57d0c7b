"""What flows through a corpus pipeline: batches of pairs (:class:`PairBatch`), read by :class:`PairReader`.

The corpus tools are datatrove pipelines (:mod:`paranmt_hf.corpus.pipeline.runner`). Their items are not one datatrove
``Document`` per line but one :class:`PairBatch` per *chunk* of input: the valid lines of the chunk as columns
(``text_a``, ``text_b``, ``score``, ``overlap``, the raw lines), so that every step works on whole columns
(vectorised filters, batched models) and a line costs no Python object of its own.

Chunks lie on a fixed grid over the uncompressed bytes of all inputs taken in order: chunk ``k`` holds the lines
whose first byte lies in ``[k * chunk_bytes, (k + 1) * chunk_bytes)``. A task (datatrove rank) reads a contiguous
run of chunks (:func:`task_chunks`): several tasks share one big file by byte ranges, and a chunk is the same lines
whatever the number of tasks, which is what makes the outputs of any number of tasks equal (and what lets a resumed
back-translation find the chunks it already translated). A chunk that spans two files gives one batch per file.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...data.reader import MAX_LINE_BYTES, Block, Shard, input_bytes, iter_blocks, uncompressed_sizes
from ...data.records import BadLineReport, LineFormat, ParsedBlock, line_format, parse_block
from ..measures.columns import Header, parse_named
from .steps import CorpusStep
from .task_process import write_file

CHUNK_BYTES = 1 << 20


@dataclass
class PairBatch:
    """The valid lines of one chunk of input (of one file), as columns, and what the steps made of them.

    Attributes:
        parsed: the valid lines (``text_a``, ``text_b``, ``score``, ``overlap``, raw ``lines``, line ``numbers``,
            the bad-line ``report``). A step that changes the pairs' text form (annotate, back-translate) sets
            ``lines``; only the writers serialise them (:class:`~paranmt_hf.corpus.pipeline.parts.TsvPartWriter`).
        chunk: the chunk's index on the grid (see the module docstring).
        part: the batch's index within its chunk (a chunk spanning files gives several batches).
        lines_read: input lines of the batch, valid and bad.
        index: index of the batch's first valid line among the task's valid lines (for steps that mark lines).
        columns: columns added by steps (e.g. ``translation_cost``), one value per valid line.
    """

    parsed: ParsedBlock
    chunk: int = 0
    part: int = 0
    lines_read: int = 0
    index: int = 0
    columns: dict[str, list[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.parsed)

    def keep(self, rows: Sequence[int]) -> None:
        """Keep only the pairs ``rows`` (indices, in order): their parsed columns and the added columns."""
        parsed = self.parsed
        for attribute in ("text_a", "text_b", "score", "overlap", "lines", "numbers"):
            values = getattr(parsed, attribute)
            if values or attribute != "lines":  # pairs read back from a typed part have no text line
                setattr(parsed, attribute, [values[i] for i in rows])
        self.columns = {name: [values[i] for i in rows] for name, values in self.columns.items()}

    @property
    def source(self) -> str:
        """The file (or ``zip::member``) the batch comes from."""
        return self.parsed.source


def grid_chunks(total_bytes: int, chunk_bytes: int) -> int:
    """Number of chunks of ``chunk_bytes`` in ``total_bytes``."""
    return max(1, math.ceil(total_bytes / chunk_bytes)) if total_bytes else 1


def task_chunks(rank: int, world_size: int, chunks: int) -> tuple[int, int]:
    """The chunks ``[first, last)`` of task ``rank`` among ``world_size`` (contiguous, in input order)."""
    return rank * chunks // world_size, (rank + 1) * chunks // world_size


@dataclass(frozen=True)
class ByteRange(Shard):
    """A byte range ``[start, end)`` of the inputs (a :class:`~paranmt_hf.data.reader.Shard` the reader takes)."""

    start: int = 0
    end: int = 0

    @property
    def whole(self) -> bool:
        """Never the whole input (the range is read even when it covers everything)."""
        return False

    def byte_range(self, total: int) -> tuple[int, int]:
        """The range, whatever the total."""
        return self.start, min(self.end, total)


def _grid_pieces(block: Block, chunk_bytes: int) -> Iterator[tuple[int, Block]]:
    """Cut a block at the grid: ``(chunk, piece)`` for each run of its lines that starts in one chunk."""
    data, offset = block.data, block.offset
    start = 0
    line = block.first_line
    while start < len(data):
        chunk = (offset + start) // chunk_bytes
        boundary = (chunk + 1) * chunk_bytes - offset  # relative position of the next grid line
        if boundary >= len(data):
            end = len(data)
        else:
            end = data.find(b"\n", max(boundary - 1, start)) + 1 or len(data)
        piece = data[start:end]
        yield chunk, Block(block.source, line, piece, offset + start, block.position)
        line += piece.count(b"\n")
        start = end


class ProgressFile:
    """A task's progress (lines read, bytes done of its range) in a small file the runner's progress bar reads."""

    def __init__(self, path: str | os.PathLike[str] | None, total: int) -> None:
        self.path = Path(path) if path is not None else None
        self.total, self.lines, self.done = total, 0, 0
        self._last = 0.0

    def update(self, lines: int, done: int, force: bool = False) -> None:
        """``lines`` more lines read; ``done`` bytes of the range done so far."""
        self.lines += lines
        self.done = done
        now = time.monotonic()
        if self.path is not None and (force or now - self._last > 0.5):
            self._last = now
            write_file(self.path, json.dumps({"lines": self.lines, "done": self.done, "total": self.total}))


class RateFile:
    """A decoding task's running throughput (sentences, target tokens, decoding seconds) for the progress bar."""

    def __init__(self, folder: str | os.PathLike[str] | None, rank: int) -> None:
        self.path = None if folder is None else Path(folder) / f"{rank:05d}.json"
        self.sentences, self.tokens, self.seconds = 0, 0, 0.0
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def add(self, sentences: int, tokens: int, seconds: float) -> None:
        """One more decoded chunk."""
        self.sentences, self.tokens, self.seconds = self.sentences + sentences, self.tokens + tokens, \
            self.seconds + seconds
        if self.path is not None:
            write_file(self.path, json.dumps({"sentences": self.sentences, "tokens": self.tokens,
                                              "seconds": self.seconds}))


def read_rates(folder: str | os.PathLike[str]) -> list[dict[str, float]]:
    """The running throughput of every task writing a :class:`RateFile` in ``folder`` (in task order)."""
    rates = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            rates.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return rates


def rate_postfix(rates: Sequence[dict[str, float]], wall: float) -> str:
    """The progress bar's throughput: sentences/s and target tokens/s in all and per task (empty: none yet).

    In all: over ``wall`` seconds; per task: over the seconds the tasks spent decoding.
    """
    sentences = sum(r["sentences"] for r in rates)
    tokens = sum(r["tokens"] for r in rates)
    busy = sum(r["seconds"] for r in rates)
    if not sentences or wall <= 0 or busy <= 0:
        return ""
    return (f"{sentences / wall:,.1f} sentences/s, {tokens / wall:,.0f} target tokens/s in all; per task "
            f"{sentences / busy:,.1f} sentences/s, {tokens / busy:,.0f} target tokens/s")


def read_progress(folder: str | os.PathLike[str]) -> tuple[int, float]:
    """Lines read so far by the tasks writing progress files in ``folder``, and the share of bytes done."""
    lines, done, total = 0, 0, 0
    for path in Path(folder).glob("*.json"):
        try:
            value = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        lines += value["lines"]
        done += value["done"]
        total += value["total"]
    return lines, (done / total if total else 0.0)


class PairReader(CorpusStep):
    """Read this task's chunks of pair files (plain, gzip, zip) as :class:`PairBatch` es.

    Args:
        inputs: the files, in order.
        fmt: line format (:data:`paranmt_hf.data.records.FORMATS` name or a :class:`LineFormat`).
        strict: fail on the first bad line instead of skipping and counting it.
        member_pattern: glob of the zip members to read.
        chunk_bytes: grid size (see the module docstring).
        state_dir: the stage's folder: the task writes ``progress/<rank>.json`` (read by the progress bar) and, at
            its end, ``reports/<rank>.json`` (its bad-line report); None: neither.
        header: the inputs' header (:mod:`paranmt_hf.corpus.measures.columns`): its line is skipped and the lines are
            read by column name (``fmt`` is then not used); None: files without a header, read with ``fmt``.
        max_line_bytes: lines longer than this are skipped and counted (``line too long``) without being held in
            memory (:data:`~paranmt_hf.data.reader.MAX_LINE_BYTES`; None: no bound).
    """

    name = "pair reader"
    type = "📖 - READER"

    def __init__(self, inputs: Sequence[str | os.PathLike[str]], fmt: str | LineFormat = "pairs", *,
                 strict: bool = False, member_pattern: str | None = None, chunk_bytes: int = CHUNK_BYTES,
                 state_dir: str | os.PathLike[str] | None = None, header: Header | None = None,
                 max_line_bytes: int | None = MAX_LINE_BYTES) -> None:
        super().__init__()
        self.inputs = [os.fspath(p) for p in inputs]
        self.fmt = line_format(fmt)
        self.strict = strict
        self.member_pattern = member_pattern
        self.chunk_bytes = chunk_bytes
        self.state_dir = os.fspath(state_dir) if state_dir is not None else None
        self.header = header
        self.max_line_bytes = max_line_bytes

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[PairBatch]:
        """The batches of this task, in input order."""
        if data:
            yield from data
        if world_size > 1:
            total = sum(uncompressed_sizes(self.inputs, self.member_pattern))
            first, last = task_chunks(rank, world_size, grid_chunks(total, self.chunk_bytes))
            start, end = first * self.chunk_bytes, min(last * self.chunk_bytes, total)
            if start >= end:
                self._empty_task(rank)
                return
            blocks = iter_blocks(self.inputs, self.member_pattern, block_bytes=self.chunk_bytes,
                                 shard=ByteRange(start=start, end=end), max_line_bytes=self.max_line_bytes)
            span, position_of = end - start, (lambda b: b.offset + len(b.data) - start)
        else:
            blocks = iter_blocks(self.inputs, self.member_pattern, block_bytes=self.chunk_bytes,
                                 max_line_bytes=self.max_line_bytes)
            span, position_of = input_bytes(self.inputs) or 0, (lambda b: b.position)
        state = Path(self.state_dir) if self.state_dir is not None else None
        if state is not None:
            (state / "progress").mkdir(parents=True, exist_ok=True)
            (state / "reports").mkdir(parents=True, exist_ok=True)
        progress = ProgressFile(None if state is None else state / "progress" / f"{rank:05d}.json", span)
        report = BadLineReport()
        index = 0
        for batch, done in self._batches(blocks, position_of):
            batch.index = index
            index += len(batch)
            report.merge(batch.parsed.report)
            self.stat_update("lines", value=batch.lines_read)
            for reason, count in batch.parsed.report.bad.items():
                self.stat_update(f"bad: {reason}", value=count)
            yield batch
            progress.update(batch.lines_read, done)
        progress.update(0, span, force=True)
        if state is not None:
            write_file(state / "reports" / f"{rank:05d}.json", json.dumps(report.as_dict()))

    def _empty_task(self, rank: int) -> None:
        """A task with no chunk still reports (nothing)."""
        if self.state_dir is not None:
            folder = Path(self.state_dir) / "reports"
            folder.mkdir(parents=True, exist_ok=True)
            write_file(folder / f"{rank:05d}.json", json.dumps(BadLineReport().as_dict()))

    def _batches(self, blocks: Iterator[Block], position_of: Any) -> Iterator[tuple[PairBatch, int]]:
        """Whole chunks (one batch per chunk and file), parsed."""
        pending: Block | None = None
        key: tuple[int, str] | None = None
        parts: dict[int, int] = {}
        done = 0

        def emit(block: Block, chunk: int) -> PairBatch:
            part = parts.get(chunk, 0)
            parts[chunk] = part + 1
            if self.header is None:
                return PairBatch(parse_block(block, self.fmt, self.strict), chunk, part, block.lines)
            if block.first_line == 1:  # the header line
                cut = block.data.find(b"\n") + 1
                block = Block(block.source, 2, block.data[cut:], block.offset + cut, block.position)
            parsed, columns = parse_named(block, self.header, self.strict)
            return PairBatch(parsed, chunk, part, block.lines, columns=columns)

        for block in blocks:
            for chunk, piece in _grid_pieces(block, self.chunk_bytes):
                if key == (chunk, piece.source) and pending is not None:
                    pending = Block(pending.source, pending.first_line, pending.data + piece.data, pending.offset,
                                    piece.position)
                    continue
                if pending is not None and key is not None:
                    yield emit(pending, key[0]), done
                pending, key = piece, (chunk, piece.source)
            done = position_of(block)
        if pending is not None and key is not None:
            yield emit(pending, key[0]), done

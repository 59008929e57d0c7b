"""Run a corpus tool over blocks of lines on every core, in input order, with progress and a summary.

A tool is a :class:`BlockTask`: a picklable object whose :meth:`~BlockTask.setup` loads what it needs (in each
worker) and whose call turns one :class:`~paranmt_hf.data.reader.Block` into a :class:`BlockResult` (output bytes
or arrays, counts per outcome, bad lines). :func:`run_blocks` reads the inputs (one shard of them, if asked),
hands blocks to worker processes (forked where the platform can, so models load once and are shared
copy-on-write), keeps at most a few blocks in flight (bounded memory), and gives the results back in input order
to a ``consume`` callback in the main process, which writes them. A tqdm bar shows lines, lines/s and the ETA
(from the bytes read, when the input sizes are known).
"""

from __future__ import annotations

import collections
import multiprocessing as mp
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data.reader import BLOCK_BYTES, Block, Opener, Shard, input_bytes, iter_blocks
from ..data.records import BadLineReport, LineFormat, iter_parsed

_TASK: dict[str, Any] = {}
IN_FLIGHT_PER_PROCESS = 2


class CorpusError(ValueError):
    """A corpus run that cannot do what was asked (e.g. no valid line in the input)."""


@dataclass
class BlockResult:
    """What a task made of one block: ``payload`` for the main process, the block's input line count, counts of
    outcomes (e.g. ``kept``, ``score``), and its bad lines.
    """

    payload: Any
    lines: int
    counts: Counter[str] = field(default_factory=Counter)
    report: BadLineReport = field(default_factory=BadLineReport)


class BlockTask:
    """A corpus tool's work on one block (subclass; keep instances small and picklable)."""

    def setup(self) -> None:
        """Load models, caches... (runs once per worker process, and in the main process with one process)."""

    def __call__(self, block: Block) -> BlockResult:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class Summary:
    """Totals of a run: input lines, outcome counts, bad lines, wall time."""

    lines: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    report: BadLineReport = field(default_factory=BadLineReport)
    seconds: float = 0.0
    processes: int = 1
    shard: Shard = field(default_factory=Shard)

    def add(self, result: BlockResult) -> None:
        """Count one block's result."""
        self.lines += result.lines
        self.counts.update(result.counts)
        self.report.merge(result.report)

    @property
    def lines_per_second(self) -> float:
        """Input lines per second."""
        return self.lines / self.seconds if self.seconds else 0.0

    def line(self, what: str = "lines") -> str:
        """One-line summary: counts per outcome and per bad-line reason."""
        parts = [f"{count:,} {name}" for name, count in self.counts.items() if count]
        bad = self.report.total_bad
        if bad:
            reasons = ", ".join(f"{n:,} {reason}" for reason, n in self.report.bad.most_common())
            parts.append(f"{bad:,} bad ({reasons})")
        shard = "" if self.shard.whole else f" (shard {self.shard.index + 1} of {self.shard.count})"
        return (f"read {self.lines:,} {what}{shard} in {self.seconds:.1f} s ({self.lines_per_second:,.0f}/s, "
                f"{self.processes} process{'es' if self.processes > 1 else ''}): " + "; ".join(parts))

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly totals."""
        return {"lines": self.lines, "counts": dict(self.counts), "bad_lines": self.report.as_dict(),
                "seconds": self.seconds, "lines_per_second": self.lines_per_second, "processes": self.processes,
                "shard": [self.shard.index, self.shard.count]}


def available_cores() -> int:
    """CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def resolve_processes(processes: int | None) -> int:
    """``processes``, or every available core for None (1 inside a daemonic process, which may not fork)."""
    if processes is not None and processes < 1:
        raise ValueError(f"processes must be >= 1, got {processes}")
    if mp.current_process().daemon:
        return 1
    return processes or available_cores()


def _init_worker(task: BlockTask | None) -> None:
    if task is not None:  # spawn: the task comes pickled
        _TASK["task"] = task
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool stops its workers with SIGTERM
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    if "torch" in sys.modules:  # one intra-op thread per worker: the processes are the parallelism
        sys.modules["torch"].set_num_threads(1)


def _run(block: Block) -> BlockResult:
    # spawned workers set up on their first block, not in the pool initializer: an error there must reach the
    # caller (a failing initializer makes multiprocessing restart the worker forever)
    if not _TASK.get("ready"):
        _TASK["task"].setup()
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(1)
        _TASK["ready"] = True
    return _TASK["task"](block)


class Progress:
    """A tqdm bar over input lines with lines/s and an ETA estimated from the bytes read (when sizes are known)."""

    def __init__(self, total_bytes: int | None, desc: str, enabled: bool = True) -> None:
        from tqdm.auto import tqdm

        self.total_bytes = total_bytes
        self.bar = tqdm(desc=desc, unit=" lines", unit_scale=True, dynamic_ncols=True, disable=not enabled,
                        smoothing=0.1)

    def update(self, lines: int, position: int) -> None:
        """``lines`` more lines done; ``position`` bytes of the inputs read so far."""
        if self.total_bytes and position:
            estimate = int((self.bar.n + lines) * self.total_bytes / min(position, self.total_bytes))
            self.bar.total = max(estimate, self.bar.n + lines)
        self.bar.update(lines)

    def close(self) -> None:
        """Finish the bar (its total becomes the true line count)."""
        self.bar.total = self.bar.n
        self.bar.refresh()
        self.bar.close()


def run_blocks(
    paths: Sequence[str | os.PathLike[str]],
    task: BlockTask,
    consume: Callable[[BlockResult], None],
    *,
    member_pattern: str | None = None,
    shard: Shard | None = None,
    processes: int | None = None,
    block_bytes: int = BLOCK_BYTES,
    desc: str = "lines",
    progress: bool = True,
    opener: Opener = open,
    blocks: Iterable[Block] | None = None,
) -> Summary:
    """Run ``task`` on every block of ``paths`` (or of ``blocks``) and ``consume`` the results in input order.

    Args:
        paths: input files (plain, .gz, .zip).
        task: the tool's work per block.
        consume: called in the main process with each block's result, in input order.
        member_pattern: glob of the zip members to read.
        shard: process only this shard of the input lines.
        processes: worker processes (None: every available core; 1: no worker, all in this process).
        block_bytes: about how many input bytes a block holds.
        desc: progress-bar label.
        progress: show the progress bar.
        opener: binary ``open``.
        blocks: blocks to process instead of reading ``paths`` (e.g. a second pass that adds data to each block).

    Returns:
        the run's :class:`Summary` (``consume`` sees the per-block counts as well).
    """
    shard = shard or Shard()
    processes = resolve_processes(processes)
    summary = Summary(processes=processes, shard=shard)
    source = blocks if blocks is not None else iter_blocks(paths, member_pattern, opener, block_bytes, shard)
    bar = Progress(input_bytes(paths) if shard.whole else None, desc, progress)
    start = time.perf_counter()

    def take(result: BlockResult, position: int) -> None:
        summary.add(result)
        consume(result)
        bar.update(result.lines, position)

    try:
        if processes == 1:
            task.setup()
            for block in source:
                take(task(block), block.position)
        else:
            method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
            if method == "fork":  # set up once here: the workers share the loaded modules and models copy-on-write
                task.setup()
                _TASK.update(task=task, ready=True)
            ctx = mp.get_context(method)
            limit = IN_FLIGHT_PER_PROCESS * processes
            with ctx.Pool(processes, initializer=_init_worker, initargs=(None if method == "fork" else task,)) as pool:
                pending: collections.deque[tuple[Any, int]] = collections.deque()
                for block in source:
                    pending.append((pool.apply_async(_run, (block,)), block.position))
                    while len(pending) >= limit:
                        result, position = pending.popleft()
                        take(result.get(), position)
                while pending:
                    result, position = pending.popleft()
                    take(result.get(), position)
    finally:
        _TASK.clear()
        bar.close()
    summary.seconds = time.perf_counter() - start
    return summary


def iter_records_progress(
    paths: Sequence[str | os.PathLike[str]],
    fmt: LineFormat | str,
    *,
    strict: bool = False,
    member_pattern: str | None = None,
    desc: str = "lines",
    progress: bool = True,
) -> Iterator[dict[str, Any]]:
    """The valid records of ``paths`` (as :func:`paranmt_hf.data.records.iter_records`) with a progress bar, for
    tools that consume records one by one in this process.
    """
    bar = Progress(input_bytes(paths), desc, progress)
    report = BadLineReport()
    try:
        for parsed in iter_parsed(paths, fmt, strict, member_pattern, report=report):
            yield from parsed.records()
            bar.update(len(parsed) + parsed.report.total_bad, parsed.position)
    finally:
        bar.close()

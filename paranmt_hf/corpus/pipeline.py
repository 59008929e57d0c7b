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
import contextlib
import multiprocessing as mp
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
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
    """What a task made of one block.

    ``payload`` for the main process, the block's input line count, counts of outcomes (e.g. ``kept``,
    ``score``), and its bad lines.
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
        """The result of one block."""
        raise NotImplementedError


@dataclass(frozen=True)
class RunSettings:
    """How a corpus tool runs.

    Worker ``processes`` (None: every core; 1: all in this process), the ``shard`` of the input to process, about
    how many input bytes one block holds, and whether to show progress bars.
    """

    processes: int | None = None
    shard: Shard = field(default_factory=Shard)
    block_bytes: int = BLOCK_BYTES
    progress: bool = True


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


@contextlib.contextmanager
def single_threaded(torch_threads: bool = True) -> Iterator[None]:
    """One BLAS thread (NumPy's OpenBLAS/MKL, via threadpoolctl when installed) and one torch intra-op thread.

    The processes are a corpus tool's parallelism: a BLAS pool of every core in each of them (NumPy's default)
    spins on cores the other workers need (on 2 cores it doubled the CPU time of the language check's small
    matrix products). ``torch_threads=False`` leaves torch's setting alone. The previous limits are restored on
    exit.
    """
    torch = sys.modules.get("torch") if torch_threads else None
    threads = torch.get_num_threads() if torch is not None else None
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with the data extra
        limits: Any = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=1, user_api="blas")
    with limits:
        if torch is not None and threads != 1:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if torch is not None and threads != 1 and torch.get_num_threads() != threads:
                torch.set_num_threads(threads)


def _init_worker(task: BlockTask | None) -> None:
    if task is not None:  # spawn: the task comes pickled
        _TASK.update(task=task, ready=False)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool stops its workers with SIGTERM
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    # one BLAS and one intra-op thread per worker: the processes are the parallelism (kept for the worker's life)
    _TASK["threads"] = single_threaded()
    _TASK["threads"].__enter__()


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
        self.total_bytes, self.desc, self.enabled = total_bytes, desc, enabled
        self._bar: Any = None  # made on the first update: after the workers are forked (tqdm starts a thread)

    @property
    def bar(self) -> Any:
        """The tqdm bar."""
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(desc=self.desc, unit=" lines", unit_scale=True, dynamic_ncols=True,
                             disable=not self.enabled, smoothing=0.1)
        return self._bar

    def update(self, lines: int, position: int) -> None:
        """``lines`` more lines done; ``position`` bytes of the inputs read so far."""
        bar = self.bar
        if self.total_bytes and position:
            estimate = int((bar.n + lines) * self.total_bytes / min(position, self.total_bytes))
            bar.total = max(estimate, bar.n + lines)
        bar.update(lines)

    def close(self) -> None:
        """Finish the bar (its total becomes the true line count)."""
        bar = self.bar
        bar.total = bar.n
        bar.refresh()
        bar.close()


def run_blocks(
    paths: Sequence[str | os.PathLike[str]],
    task: BlockTask,
    consume: Callable[[BlockResult], None],
    settings: RunSettings | None = None,
    *,
    member_pattern: str | None = None,
    desc: str = "lines",
    opener: Opener = open,
    blocks: Iterable[Block] | None = None,
) -> Summary:
    """Run ``task`` on every block of ``paths`` (or of ``blocks``) and ``consume`` the results in input order.

    Args:
        paths: input files (plain, .gz, .zip).
        task: the tool's work per block.
        consume: called in the main process with each block's result, in input order.
        settings: processes, shard, block size, progress (:class:`RunSettings`; default: every core, all lines).
        member_pattern: glob of the zip members to read.
        desc: progress-bar label.
        opener: binary ``open``.
        blocks: blocks to process instead of reading ``paths`` (e.g. a second pass that adds data to each block).

    Returns:
        the run's :class:`Summary` (``consume`` sees the per-block counts as well).
    """
    settings = settings or RunSettings()
    shard = settings.shard
    processes = resolve_processes(settings.processes)
    summary = Summary(processes=processes, shard=shard)
    source = blocks if blocks is not None else iter_blocks(paths, member_pattern, opener, settings.block_bytes, shard)
    bar = Progress(input_bytes(paths) if shard.whole else None, desc, settings.progress)
    start = time.perf_counter()

    def take(result: BlockResult, position: int) -> None:
        summary.add(result)
        consume(result)
        bar.update(result.lines, position)

    try:
        if processes == 1:
            task.setup()
            # one BLAS thread (NumPy's small products gain nothing from more); torch keeps the caller's threads
            with single_threaded(torch_threads=False):
                for block in source:
                    take(task(block), block.position)
        else:
            method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
            if method == "fork":  # set up once here: the workers share the loaded modules and models copy-on-write
                task.setup()
                _TASK.update(task=task, ready=True)
            limit = IN_FLIGHT_PER_PROCESS * processes
            # a ProcessPoolExecutor, not a Pool: a worker that dies (killed, out of memory) raises BrokenProcessPool
            # here instead of leaving the run waiting forever
            pool = ProcessPoolExecutor(processes, mp_context=mp.get_context(method), initializer=_init_worker,
                                       initargs=(None if method == "fork" else task,))
            pending: collections.deque[tuple[Any, int]] = collections.deque()
            try:
                for block in source:
                    pending.append((pool.submit(_run, block), block.position))
                    while len(pending) >= limit:
                        future, position = pending.popleft()
                        take(future.result(), position)
                while pending:
                    future, position = pending.popleft()
                    take(future.result(), position)
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
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
    """The valid records of ``paths`` (as :func:`paranmt_hf.data.records.iter_records`) with a progress bar.

    For tools that consume records one by one in this process.
    """
    bar = Progress(input_bytes(paths), desc, progress)
    report = BadLineReport()
    try:
        for parsed in iter_parsed(paths, fmt, strict, member_pattern, report=report):
            yield from parsed.records()
            bar.update(len(parsed) + parsed.report.total_bad, parsed.position)
    finally:
        bar.close()

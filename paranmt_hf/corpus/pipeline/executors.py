"""datatrove's local executor as the corpus tools run it: tasks log to their files only, with bounded threads.

They die with the run (a pool worker is bound to the run's main process,
:mod:`paranmt_hf.corpus.pipeline.task_process`: the
kernel kills it when its parent dies, it publishes nothing once the run is gone, and it leaves Ctrl-C to the main
process, which stops the pool).

Imported by :func:`paranmt_hf.corpus.pipeline.runner.run_local` (a module-level class, so that the worker processes,
which receive the executor pickled, import it by name).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from ...utils.imports import require
from .task_process import bind_to_run

_local = require("datatrove.executor.local", "data")
_base = require("datatrove.executor.base", "data")

LOG_FORMAT = "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}"


def open_task_log(logging_dir: Any, rank: int) -> Any:
    """The task's log file in datatrove's logging folder."""
    return logging_dir.open(f"logs/task_{rank:05d}.log", "w")


class LogSink:
    """A task's log file as a loguru sink: a line that a full disk refuses is dropped.

    Loguru would print a "Logging error in Loguru Handler" block of about 30 lines on stderr for each; the task's own
    data writes fail on the same full disk and the run says so in one sentence.
    """

    def __init__(self, logfile: Any) -> None:
        self.logfile = logfile

    def write(self, message: str) -> None:
        """Write one log record (dropped when the disk is full)."""
        try:
            self.logfile.write(message)
        except OSError as err:
            if err.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise

    def flush(self) -> None:
        """Flush the file (nothing when the disk is full)."""
        try:
            self.logfile.flush()
        except OSError as err:
            if err.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise


@contextlib.contextmanager
def task_logging() -> Iterator[None]:
    """Datatrove's per-task logger without its copy on stderr (the task's log file keeps everything)."""
    from loguru import logger

    original_add, original_close = _base.add_task_logger, _base.close_task_logger

    def add(logging_dir: Any, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
        logger.remove()
        logfile = open_task_log(logging_dir, rank)
        logger.add(LogSink(logfile), colorize=False, level="DEBUG", format=LOG_FORMAT)
        return logfile

    def close(logfile: Any) -> None:
        logger.complete()
        logger.remove()
        try:
            logfile.close()
        except OSError as err:  # the last lines of the log do not fit: the run reports the full disk itself
            if err.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise

    _base.add_task_logger, _base.close_task_logger = add, close
    try:
        yield
    finally:
        _base.add_task_logger, _base.close_task_logger = original_add, original_close


@contextlib.contextmanager
def task_threads(threads: int | None, limit_torch: bool) -> Iterator[None]:
    """One BLAS thread and, when ``limit_torch``, ``threads`` torch threads for a task; restored on exit.

    NumPy's small products gain nothing from more BLAS threads, and a pool of every core in each task spins on the
    cores the other tasks need (on 2 cores it doubled the CPU time of the language check). Models read
    ``$PARANMT_HF_TASK_THREADS`` (:func:`task_thread_count`) for their own thread settings.
    """
    torch = sys.modules.get("torch") if limit_torch else None
    before = torch.get_num_threads() if torch is not None else None
    previous = os.environ.get("PARANMT_HF_TASK_THREADS")
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with the data extra
        limits: Any = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=1, user_api="blas")
    with limits:
        if limit_torch:
            os.environ["PARANMT_HF_TASK_THREADS"] = str(threads or 1)
            if torch is not None:
                torch.set_num_threads(threads or 1)
        try:
            yield
        finally:
            if limit_torch:
                if previous is None:
                    os.environ.pop("PARANMT_HF_TASK_THREADS", None)
                else:
                    os.environ["PARANMT_HF_TASK_THREADS"] = previous
            if torch is not None and before is not None and torch.get_num_threads() != before:
                torch.set_num_threads(before)


def task_thread_count(default: int | None = None) -> int | None:
    """The threads a task's models should use (set by the runner when several tasks share the machine)."""
    value = os.environ.get("PARANMT_HF_TASK_THREADS")
    return int(value) if value else default


def _worker_start(run_pid: int) -> None:
    """A pool worker's or the pool manager's first act: bind to the run (die with it), leave Ctrl-C to the run."""
    bind_to_run(run_pid)
    if threading_is_main():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


class _BoundContext:
    """A ``multiprocess`` context whose pools start their workers bound to the run."""

    def __init__(self, context: Any, run_pid: int) -> None:
        self._context, self._run_pid = context, run_pid

    def Pool(self, processes: int | None = None, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - multiprocess's
        """``context.Pool`` with :func:`_worker_start` as the workers' initializer."""
        if args or "initializer" in kwargs:  # pragma: no cover - datatrove passes the processes only
            return self._context.Pool(processes, *args, **kwargs)
        return self._context.Pool(processes, initializer=_worker_start, initargs=(self._run_pid,), **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


class _BoundMultiprocess:
    """The ``multiprocess`` module as datatrove's local executor sees it during a run.

    Its manager process and its pools' workers are bound to the run (:mod:`paranmt_hf.corpus.pipeline.task_process`).
    """

    def __init__(self, module: Any, run_pid: int) -> None:
        self._module, self._run_pid = module, run_pid

    def Manager(self) -> Any:  # noqa: N802 - multiprocess's name
        """A started ``SyncManager`` whose server process dies with the run."""
        from multiprocess.managers import SyncManager

        manager = SyncManager(ctx=self._module.get_context())
        manager.start(initializer=_worker_start, initargs=(self._run_pid,))
        return manager

    def get_context(self, method: str | None = None) -> _BoundContext:
        """The context of ``method``, whose pools' workers are bound to the run."""
        return _BoundContext(self._module.get_context(method), self._run_pid)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


@contextlib.contextmanager
def processes_bound_to(run_pid: int) -> Iterator[None]:
    """While the block runs, the processes datatrove's local executor starts die with the process ``run_pid``."""
    original = _local.multiprocess
    _local.multiprocess = _BoundMultiprocess(original, run_pid)
    try:
        yield
    finally:
        _local.multiprocess = original


TASK_SLOT = "PARANMT_HF_TASK_SLOT"
"""Set in a pool worker of :class:`CorpusLocalExecutor` to its slot (datatrove's local rank, 0 to workers - 1,
unique among the tasks running at once): the GPU its translation model goes on
(:mod:`paranmt_hf.corpus.translation.placement`)."""


class CorpusLocalExecutor(_local.LocalPipelineExecutor):
    """``LocalPipelineExecutor`` whose tasks log to their log files only, with bounded threads, dying with the run.

    Its worker processes (and the pool's manager) are bound to the run's main process: killed by the kernel when it
    dies (Linux), they never publish a file afterwards; Ctrl-C is left to the main process, which stops the pool.

    Args:
        threads: torch threads per task when ``limit_torch`` (several tasks at a time, or threads asked for).
        limit_torch: whether to set torch's threads in each task.
        *args / **kwargs: ``LocalPipelineExecutor``'s.
    """

    def __init__(self, *args: Any, threads: int | None = None, limit_torch: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.threads = threads
        self.limit_torch = limit_torch
        self.run_pid = os.getpid()

    def run(self) -> Any:
        """Run the tasks (see ``LocalPipelineExecutor.run``), every process it starts bound to this one."""
        self.run_pid = os.getpid()
        with processes_bound_to(self.run_pid):
            return super().run()

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
        if os.getpid() != self.run_pid:  # a pool worker: check again that the run is alive before the task starts
            _worker_start(self.run_pid)
            os.environ[TASK_SLOT] = str(local_rank)  # the worker's own process: its GPU (translation.placement)
        with task_logging(), task_threads(self.threads, self.limit_torch):
            return super()._run_for_rank(rank, local_rank, node_rank)


def threading_is_main() -> bool:
    """Whether this is the process's main thread (signal handlers can be set only there)."""
    import threading

    return threading.current_thread() is threading.main_thread()

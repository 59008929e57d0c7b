"""datatrove's local executor as the corpus tools run it: tasks log to their files only, with bounded threads.

Imported by :func:`paranmt_hf.corpus.runner.run_local` (a module-level class, so that the worker processes, which
receive the executor pickled, import it by name).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from ..utils.imports import require

_local = require("datatrove.executor.local", "data")
_base = require("datatrove.executor.base", "data")

LOG_FORMAT = "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}"


@contextlib.contextmanager
def task_logging() -> Iterator[None]:
    """Datatrove's per-task logger without its copy on stderr (the task's log file keeps everything)."""
    from loguru import logger

    original_add, original_close = _base.add_task_logger, _base.close_task_logger

    def add(logging_dir: Any, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
        logger.remove()
        logfile = logging_dir.open(f"logs/task_{rank:05d}.log", "w")
        logger.add(logfile, colorize=False, level="DEBUG", format=LOG_FORMAT)
        return logfile

    def close(logfile: Any) -> None:
        logger.complete()
        logger.remove()
        logfile.close()

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


class CorpusLocalExecutor(_local.LocalPipelineExecutor):
    """``LocalPipelineExecutor`` whose tasks log to their log files only and run with bounded threads.

    Args:
        threads: torch threads per task when ``limit_torch`` (several tasks at a time, or threads asked for).
        limit_torch: whether to set torch's threads in each task.
        *args / **kwargs: ``LocalPipelineExecutor``'s.
    """

    def __init__(self, *args: Any, threads: int | None = None, limit_torch: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.threads = threads
        self.limit_torch = limit_torch

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
        with task_logging(), task_threads(self.threads, self.limit_torch):
            return super()._run_for_rank(rank, local_rank, node_rank)

"""A task's process lives and publishes only while its run does.

datatrove's local executor runs the tasks of a stage in a pool of worker processes. When the run's main process is
killed (the OOM killer, ``kill -9``) its pool workers would live on, finish their task and rename their part into
the work folder while the next run of the same command writes the same part. So each worker process is bound to its
run (:func:`bind_to_run`, called by :class:`~paranmt_hf.corpus.pipeline.executors.CorpusLocalExecutor` when the task
starts):

- on Linux, the kernel kills it when the process that started it dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``);
- everywhere, it checks that its run is still alive (its parent unchanged, the run's main process present) before it
  renames a finished file into the work folder (:func:`publish`, :func:`write_file`), and stops otherwise.

Files are written under per-attempt temporary names (:func:`paranmt_hf.utils.atomic.attempt_temp`), so two writers
of the same file never write into one file.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
from pathlib import Path

from ...utils.atomic import attempt_temp
from ..errors import CorpusError

PR_SET_PDEATHSIG = 1
_run: dict[str, int] = {}


def _die_with_parent() -> bool:
    """Ask the kernel to kill this process when its parent dies (Linux); whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return False


def bind_to_run(run_pid: int) -> None:
    """Bind this process to the run whose main process is ``run_pid`` (nothing to do in that process itself).

    Raises:
        CorpusError: the run is gone already.
    """
    if os.getpid() == run_pid:
        return
    if _run.get("pid") != run_pid:
        _run["pid"], _run["parent"] = run_pid, os.getppid()
        _die_with_parent()
        if os.getppid() != run_pid:  # started by datatrove's forkserver, not by the run: watch the run itself
            threading.Thread(target=_die_with_run, args=(run_pid,), name="paranmt-hf run watch", daemon=True).start()
    check_run_alive()


def _die_with_run(run_pid: int) -> None:
    """Kill this process as soon as the process ``run_pid`` ends (a daemon thread of a task's process).

    The parent-death signal covers the processes the run forks; a pool worker that datatrove's forkserver started
    has the forkserver as its parent, which itself lives as long as those workers hold its pipe: without this watch
    they would finish their task (seconds to minutes) after the run was killed. Linux: the run's pidfd becomes
    readable when it ends; elsewhere, a check twice a second.
    """
    import select
    import time

    try:
        handle = os.pidfd_open(run_pid)
    except (AttributeError, OSError):  # no pidfd (not Linux >= 5.3), or the run is gone already
        handle = None
    if handle is not None:
        select.select([handle], [], [])
    else:
        while run_alive():
            time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGKILL)


def run_alive() -> bool:
    """Whether the run this process works for is alive (always True outside a bound worker)."""
    if not _run:
        return True
    if os.getppid() != _run["parent"]:
        return False
    try:
        os.kill(_run["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a process of another user took the pid
        return False
    return True


def check_run_alive() -> None:
    """Stop (:class:`CorpusError`) when the run that started this task is gone: an orphan publishes nothing."""
    if not run_alive():
        raise CorpusError(f"the run (pid {_run.get('pid')}) that started this task is gone: this task stops "
                          "without writing (run the command again to resume)")


def publish(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> Path:
    """Rename the finished ``tmp`` onto ``target`` if the run is alive (else remove it and stop)."""
    if not run_alive():
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        check_run_alive()
    os.replace(tmp, target)
    return Path(target)


def write_file(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` to ``path`` under a per-attempt temporary name, then :func:`publish` it."""
    target = Path(path)
    tmp = attempt_temp(target)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        return publish(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise

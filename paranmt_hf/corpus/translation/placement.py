"""Which device a translation task loads its model on: every task its own GPU of those it can see.

:func:`task_device`, called by both engines with the number of CUDA devices the task sees, is the one rule:
``"cpu"`` is the CPU, ``"cuda:N"`` device N of the visible ones; ``"auto"`` (the default) and ``"cuda"`` give
``cuda:{local index mod visible devices}``, and with no visible device ``"auto"`` gives the CPU, ``"cuda"`` an
error. The local index is the datatrove task's rank inside a corpus task (its slot in the local executor's pool,
:data:`~paranmt_hf.corpus.pipeline.executors.TASK_SLOT`), otherwise ``LOCAL_RANK``, else ``SLURM_LOCALID``,
else 0; a Slurm or Ray task given one GPU sees ``cuda:0``.

Tasks sharing a GPU decode more slowly in all than one task alone on it (benchmarks/backtranslation), so a stage
that decodes on GPUs runs at most as many tasks at a time as there are GPUs (:func:`concurrent_tasks`); its
tasks, chunks and output are unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ..errors import InvalidOptionError
from ..pipeline.executors import TASK_SLOT

DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?")
LOCAL_INDEX_VARIABLES = ("LOCAL_RANK", "SLURM_LOCALID")
"""Environment variables holding a process's index on its node, first found wins: torchrun's, then srun's."""


def check_device(device: str) -> str:
    """``device`` if it is ``auto``, ``cpu``, ``cuda`` or ``cuda:N``.

    Raises:
        InvalidOptionError: anything else.
    """
    if not isinstance(device, str) or not DEVICE_PATTERN.fullmatch(device):
        raise InvalidOptionError(f"device must be auto, cpu, cuda or cuda:N, got {device!r}")
    return device


def local_index(rank: int | None, environ: Mapping[str, str] | None = None) -> int:
    """The task's index among the tasks of its node (see the module docstring)."""
    environ = os.environ if environ is None else environ
    if rank is not None:
        slot = environ.get(TASK_SLOT, "").strip()
        return int(slot) if slot.isdigit() else rank
    for name in LOCAL_INDEX_VARIABLES:
        value = environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return 0


def task_device(device: str, cuda_devices: int, rank: int | None = None,
                environ: Mapping[str, str] | None = None) -> str:
    """The device a task loads its model on: ``"cpu"`` or ``"cuda:N"`` (see the module docstring).

    Args:
        device: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``.
        cuda_devices: CUDA devices visible to the task (``torch.cuda.device_count()``,
            ``ctranslate2.get_cuda_device_count()``).
        rank: the datatrove task's rank (None: not a corpus task).
        environ: the environment (default ``os.environ``).

    Raises:
        InvalidOptionError: a malformed device, CUDA asked for where none is visible, or ``cuda:N`` not visible.
    """
    check_device(device)
    if device == "cpu" or (device == "auto" and cuda_devices < 1):
        return "cpu"
    if cuda_devices < 1:
        raise InvalidOptionError(f"device {device} asked for, but this task sees no CUDA device (use --device auto "
                                 "or cpu)")
    if device.startswith("cuda:"):
        index = int(device.split(":")[1])
        if index >= cuda_devices:
            raise InvalidOptionError(f"device {device} is not visible to this task: it sees {cuda_devices} CUDA "
                                     f"device(s), cuda:0 to cuda:{cuda_devices - 1}")
        return device
    return f"cuda:{local_index(rank, environ) % cuda_devices}"


def concurrent_tasks(device: str, cuda_devices: int, workers: int, tasks: int) -> tuple[int, str | None]:
    """How many tasks of a decoding stage run at once on this machine, and the line saying so (None: nothing to say).

    ``workers`` tasks at a time on the CPU; on GPUs at most one task per GPU the device setting uses (``cuda:N``:
    one; ``auto`` and ``cuda``: every visible one), the others waiting their turn.

    Args:
        device: the engine's device setting (``auto``, ``cpu``, ``cuda``, ``cuda:N``).
        cuda_devices: CUDA devices visible here.
        workers: the tasks the run would run at once.
        tasks: the stage's tasks.
    """
    check_device(device)
    if device == "cpu" or cuda_devices < 1:
        return workers, None
    gpus = 1 if device.startswith("cuda:") else cuda_devices
    if min(workers, tasks) <= gpus:
        return workers, None
    where = device if device.startswith("cuda:") else ("cuda:0" if gpus == 1 else f"cuda:0 to cuda:{gpus - 1}")
    return gpus, (f"{tasks} decoding tasks on {gpus} GPU{'s' if gpus > 1 else ''} ({where}): {gpus} at a time, each "
                  "alone on its GPU, the others after them (tasks sharing a GPU decode more slowly in all than one)")

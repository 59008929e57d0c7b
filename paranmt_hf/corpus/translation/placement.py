"""Which device a translation task loads its model on: every task its own GPU of those it can see.

:func:`task_device` is the one rule, called by both engines (:mod:`paranmt_hf.corpus.translation.transformers_engine`,
:mod:`paranmt_hf.corpus.translation.ctranslate2_engine`) with the number of CUDA devices visible to the task (after
``CUDA_VISIBLE_DEVICES``, which Slurm's ``--gres``/``--gpus-per-task`` and Ray's ``num_gpus`` set per task):

- ``"cpu"``: the CPU; ``"cuda:N"``: device N of the visible ones (an error when it is not visible);
- ``"auto"`` (the default) and ``"cuda"``: ``cuda:{local index mod visible devices}``; with no visible device
  ``"auto"`` gives the CPU and ``"cuda"`` an error. The local index is

  1. the datatrove task's rank when the model is loaded by a corpus task (``corpus backtranslate`` / ``make``, any
     executor): local workers are consecutive ranks running side by side, so ``--workers 4`` on a 4-GPU machine puts
     tasks 0, 1, 2, 3 on ``cuda:0..3`` (and task 4 on ``cuda:0`` again); a Slurm or Ray task given one GPU sees one
     device, ``cuda:0``;
  2. otherwise (the API in one's own process): ``LOCAL_RANK`` (torchrun, accelerate), else ``SLURM_LOCALID``
     (``srun``), else 0.

  A corpus task run by the local executor's pool uses its slot in the pool instead of its rank (datatrove's local
  rank, 0 to workers - 1, unique among the tasks running at once:
  :data:`~paranmt_hf.corpus.pipeline.executors.TASK_SLOT`).

Tasks sharing a GPU decode more slowly in all than one task alone on it (an opus-mt-sized model on an H200: 140
sentences/s for two tasks together, 319 for one): a stage that decodes on GPUs runs at most as many tasks at a time
as there are GPUs (:func:`concurrent_tasks`), the others after them, each alone on its GPU. The stage keeps its
tasks (their chunks, resumption and output are unchanged); only how many run at once changes, through the local
executor's own ``workers``.
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

"""Multi-process encoding for large inputs: the batches of one plan shared out over worker processes.

``ParaNMTEncoder.encode`` plans its batches once and hands :func:`encode_parallel` a callable that embeds any run of
those batches (``encode_plan`` with the sentences bound); workers run exactly those forward passes, each with one
intra-op thread, so the embeddings are bit-identical to a single-process run. Workers are forked where the platform
can fork: the callable (model, sentences) is shared copy-on-write and each worker writes its rows straight into a
shared anonymous memory map, so nothing is pickled either way. Elsewhere they are spawned: the callable is pickled
once per worker and the rows come back through the pool.
"""

from __future__ import annotations

import mmap
import multiprocessing as mp
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

EncodeBatches = Callable[[Sequence[tuple[int, int]]], torch.Tensor]
"""Embeds the given ``(start, end)`` batches of a plan; rows in plan order."""

TASKS_PER_PROCESS = 4
"""Batches are grouped into about this many tasks per worker (load balance vs. per-task overhead)."""

_STATE: dict[str, Any] = {}


def available_cores() -> int:
    """CPU cores this process may run on (respects ``taskset``/cgroup affinity where the OS reports it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def resolve_processes(num_processes: int | None, n_sentences: int, threshold: int, n_batches: int) -> int:
    """How many processes ``encode`` uses: explicit ``num_processes``, or all cores above ``threshold`` sentences.

    Never more processes than batches; always 1 inside a daemonic process (which may not have children).
    """
    if num_processes is not None and num_processes < 1:
        raise ValueError(f"num_processes must be >= 1 or None, got {num_processes}")
    if mp.current_process().daemon:
        return 1
    wanted = num_processes if num_processes is not None else (available_cores() if n_sentences >= threshold else 1)
    return max(1, min(wanted, n_batches))


def _init_worker(state: dict[str, Any] | None) -> None:
    if state is not None:  # spawn: the state comes pickled
        _STATE.update(state)
    torch.set_num_threads(1)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"


def _run_task(task: tuple[int, int]) -> tuple[int, int, np.ndarray | None]:
    lo, hi = task
    bounds = _STATE["bounds"][lo:hi]
    emb = _STATE["encode_batches"](bounds)
    shared = _STATE.get("out")
    if shared is None:  # spawn: send the rows back
        return lo, hi, emb.numpy()
    shared[bounds[0][0] : bounds[-1][1]] = emb.numpy()  # fork: write into the parent's shared buffer
    return lo, hi, None


def tasks_for(n_batches: int, processes: int) -> list[tuple[int, int]]:
    """Consecutive batch ranges ``[lo, hi)``: about ``TASKS_PER_PROCESS`` per process."""
    n_tasks = min(n_batches, processes * TASKS_PER_PROCESS)
    edges = np.linspace(0, n_batches, n_tasks + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


def encode_parallel(
    encode_batches: EncodeBatches,
    bounds: Sequence[tuple[int, int]],
    dim: int,
    processes: int,
    progress: Any = None,
) -> torch.Tensor:
    """Embeddings (``dim`` wide) of every batch of the plan ``bounds`` (rows in plan order), by ``processes`` workers.

    ``encode_batches`` must be picklable where processes are spawned (a ``functools.partial`` of a method is).
    """
    state: dict[str, Any] = {"encode_batches": encode_batches, "bounds": list(bounds)}
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    tasks = tasks_for(len(bounds), processes)
    rows = bounds[-1][1] - bounds[0][0]
    buffer = None
    if method == "fork":  # an anonymous shared mapping: children write their rows in place, nothing is pickled
        buffer = mmap.mmap(-1, max(1, rows * dim * 4))
        state["out"] = np.frombuffer(buffer, dtype=np.float32, count=rows * dim).reshape(rows, dim)
        _STATE.update(state)
    saved_env = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # quiets tokenizers' warning in forked children
    try:
        ctx = mp.get_context(method)
        initargs = (None if method == "fork" else state,)
        with ctx.Pool(processes, initializer=_init_worker, initargs=initargs) as pool:
            out = torch.empty(rows, dim, dtype=torch.float32) if buffer is None else None
            for lo, hi, emb in pool.imap_unordered(_run_task, tasks):
                if out is not None and emb is not None:
                    start, end = bounds[lo][0] - bounds[0][0], bounds[hi - 1][1] - bounds[0][0]
                    out[start:end] = torch.from_numpy(emb)
                if progress is not None:
                    progress.update(hi - lo)
        if buffer is not None:
            out = torch.from_numpy(state["out"])  # keeps the mapping alive; freed with the tensor
    finally:
        _STATE.clear()
        if saved_env is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = saved_env
    return out

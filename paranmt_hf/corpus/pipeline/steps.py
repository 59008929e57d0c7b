"""The base of the corpus tools' datatrove pipeline steps.

A :class:`CorpusStep` is a ``datatrove.pipeline.base.PipelineStep`` whose items are
:class:`~paranmt_hf.corpus.pipeline.batches.PairBatch` es: :meth:`CorpusStep.setup` loads what the step needs once per
task (models, tokenizers: in the task's process, never in ``__init__``, so that steps pickle small and load on the
machine that runs them), :meth:`CorpusStep.process` turns one batch into the batch passed on (or None to drop it),
and :meth:`CorpusStep.count` adds outcome counts to datatrove's per-task statistics (which the runner sums into the
summary line).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...utils.imports import require

_base = require("datatrove.pipeline.base", "data")


def limit_torch_threads() -> None:
    """Give torch the task's threads when the runner set them (a model imported torch after the task started)."""
    value = os.environ.get("PARANMT_HF_TASK_THREADS")
    torch = sys.modules.get("torch")
    if value and torch is not None and torch.get_num_threads() != int(value):
        torch.set_num_threads(int(value))


class CorpusStep(_base.PipelineStep):
    """A pipeline step over pair batches (subclass: ``setup`` and ``process``)."""

    type = "🔧 - CORPUS"
    name = "corpus step"

    def setup(self, rank: int, world_size: int) -> None:
        """Load what the step needs (once per task, in the task's process)."""

    def process(self, batch: Any) -> Any:
        """The batch passed on (None: drop it)."""
        return batch

    def count(self, counts: Mapping[str, int]) -> None:
        """Add outcome counts to the task's statistics (zero counts are skipped)."""
        for name, value in counts.items():
            if value:
                self.stat_update(name, value=int(value))

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Apply :meth:`process` to every batch of ``data``."""
        self.setup(rank, world_size)
        limit_torch_threads()
        for batch in data or ():
            with self.track_time(unit="batch"):
                out = self.process(batch)
            if out is not None:
                yield out

    def __getstate__(self) -> dict[str, Any]:
        """What is pickled to the task's process: the settings, not what :meth:`setup` loaded (``_``-names)."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


class MergeStep(CorpusStep):
    """The final stage's only step: run ``merge(spec)`` once (rank 0), in the task's process."""

    name = "merge"
    type = "🔗 - MERGE"

    def __init__(self, merge: Callable[[Any], Any], spec: Any) -> None:
        super().__init__()
        self.merge, self.spec = merge, spec

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Merge (the previous steps pass nothing); pass nothing on."""
        self.merge(self.spec)
        return iter(())

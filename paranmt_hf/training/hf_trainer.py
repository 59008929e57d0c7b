"""The sentence-transformers trainer as paranmt_hf runs it: sparse-gradient norms and the loss's state in checkpoints.

Imports sentence-transformers at module level: import this module only when training.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sentence_transformers import SentenceTransformerTrainer
from transformers import TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from .checkpoints import load_loss_state, write_checkpoint_record


def gradient_norm(parameters: Any) -> float:
    """L2 norm of all gradients, sparse ones included (their stored values only: O(rows used))."""
    total = 0.0
    for p in parameters:
        if p.grad is None:
            continue
        if p.grad.is_sparse:
            p.grad = p.grad.coalesce()  # once: the optimizer step then finds it coalesced
            grad = p.grad.values()
        else:
            grad = p.grad
        total += float(grad.float().pow(2).sum())
    return total**0.5


class ParaNMTTrainer(SentenceTransformerTrainer):
    """``SentenceTransformerTrainer`` whose logged gradient norm also works with sparse embedding gradients.

    transformers' Trainer computes the norm with ``clip_grad_norm_`` at every step, which fails on sparse gradients
    (and costs a pass over every dense embedding table). There is no public hook for it: this overrides the private
    ``Trainer._get_grad_norm(model, grad_norm=None)``, which the training loop calls at every optimizer step (with
    the norm ``max_grad_norm`` clipping returned, else None) and whose result it logs as ``grad_norm``.
    ``tests/test_loss_trainer.py`` pins the signature and that call: a transformers release that changes them
    fails that test instead of silently logging nothing or failing on sparse gradients.
    """

    def _get_grad_norm(self, model: Any, grad_norm: Any = None) -> Any:
        if grad_norm is not None:
            return grad_norm
        return gradient_norm(model.parameters())


class RunStateCallback(TrainerCallback):
    """Keeps the loss's state and the run's arguments with every checkpoint, and restores the state on resume.

    Args:
        loss: the training loss (its ``training_state`` / ``load_training_state`` if it has them).
        record: the run record (:func:`~paranmt_hf.training.checkpoints.run_record`) written into each checkpoint.
        resume_from: the checkpoint being resumed, if any.
    """

    def __init__(self, loss: Any, record: dict[str, Any], resume_from: Path | None = None) -> None:
        self.loss = loss
        self.record = record
        self.resume_from = resume_from

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Restore the pool and annealing clock of the resumed checkpoint (a clock from the step count without)."""
        if self.resume_from is not None and load_loss_state(self.resume_from, self.loss):
            return
        if hasattr(self.loss, "steps"):
            self.loss.steps = state.global_step * args.gradient_accumulation_steps

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Complete the checkpoint just written: loss state, then the run record."""
        if state.is_world_process_zero:
            path = Path(args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"
            write_checkpoint_record(path, self.record, self.loss)

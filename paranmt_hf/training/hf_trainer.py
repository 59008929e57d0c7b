"""The sentence-transformers trainer as paranmt_hf runs it: sparse-gradient norms and the loss's state in checkpoints.

Imports sentence-transformers at module level: import this module only when training.
"""

from __future__ import annotations

from typing import Any

from sentence_transformers import SentenceTransformerTrainer
from transformers import TrainerCallback


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
    (and costs a pass over every dense embedding table).
    """

    def _get_grad_norm(self, model: Any, grad_norm: Any = None) -> Any:
        if grad_norm is not None:
            return grad_norm
        return gradient_norm(model.parameters())


class LossScheduleCallback(TrainerCallback):
    """Sets the loss's mini-batch counter (annealing) to the trained step count at the start of training.

    A resumed run then continues the annealing schedule instead of restarting it.
    """

    def __init__(self, loss: Any) -> None:
        self.loss = loss

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Set the annealing clock."""
        self.loss.steps = state.global_step * args.gradient_accumulation_steps

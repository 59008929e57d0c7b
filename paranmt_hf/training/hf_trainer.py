"""The sentence-transformers trainer as paranmt_hf runs it: its arguments, callbacks and what a run reports of it.

Sparse-gradient norms; the loss's state and the run record in every checkpoint (written, and read back on resume).

Imports sentence-transformers at module level: import this module only when training.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sentence_transformers import SentenceTransformerTrainer
from transformers import TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from ..utils.atomic import atomic_write_json
from .checkpoints import LOSS_STATE_FILE, RUN_FILE, TRAINER_STATE_FILE
from .distributed import world_size
from .recipes import Schedule


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


def training_arguments(
    schedule: Schedule, checkpoints: Path, *, seed: int = 0, max_steps: int = -1, save_steps: int = 500,
    eval_steps: int | None = None, logging_steps: int = 50, evaluate: bool = False, show_progress: bool = True,
) -> Any:
    """The ``SentenceTransformerTrainingArguments`` of a run: ``schedule`` on CPU, checkpoints in ``checkpoints``.

    No warmup or weight decay (the papers' Adam), the data order seeded by ``seed``, the two newest checkpoints
    kept, evaluation every ``eval_steps`` (default ``save_steps``) when ``evaluate``, gloo under ``torchrun``.
    """
    from sentence_transformers import SentenceTransformerTrainingArguments

    return SentenceTransformerTrainingArguments(
        output_dir=str(checkpoints),
        per_device_train_batch_size=schedule.batch_size,
        learning_rate=schedule.learning_rate,
        num_train_epochs=schedule.epochs,
        max_steps=max_steps,
        lr_scheduler_type=schedule.lr_scheduler,
        warmup_steps=0,
        weight_decay=0.0,
        optim="adamw_torch",
        max_grad_norm=schedule.max_grad_norm,
        seed=seed,
        data_seed=seed,
        use_cpu=True,
        report_to="none",
        save_strategy="steps",
        save_steps=save_steps,
        save_total_limit=2,
        eval_strategy="steps" if evaluate else "no",
        eval_steps=eval_steps or save_steps,
        logging_steps=logging_steps,
        disable_tqdm=not show_progress,
        dataloader_drop_last=False,
        ddp_backend="gloo" if world_size() > 1 else None,
    )


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

    def _save(self, output_dir: str | None = None, state_dict: Any = None) -> None:
        """Write the checkpoint's model files from the process that saves (rank 0 under ``torchrun``) only.

        transformers 5 calls ``Trainer._save`` on every process and checks ``args.should_save`` inside it;
        sentence-transformers' override writes without that check, so under ``torchrun`` every rank wrote the same
        checkpoint files at the same moment (one rank could find a file the other was replacing and fail the run).
        ``tests/test_loss_trainer.py`` pins that only the saving process writes.
        """
        if self.args.should_save:
            super()._save(output_dir, state_dict=state_dict)


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


def write_checkpoint_record(path: Path, record: dict[str, Any], loss: Any) -> None:
    """Add the loss's state, then the run record (last: it marks the checkpoint complete), to a checkpoint."""
    import torch

    if hasattr(loss, "training_state"):
        tmp = path / f".{LOSS_STATE_FILE}.tmp"
        torch.save(loss.training_state(), tmp)
        os.replace(tmp, path / LOSS_STATE_FILE)
    atomic_write_json(path / RUN_FILE, record)


def load_loss_state(path: Path, loss: Any) -> bool:
    """Restore the loss's state saved with checkpoint ``path``; False when there is none."""
    import torch

    file = path / LOSS_STATE_FILE
    if not (file.is_file() and hasattr(loss, "load_training_state")):
        return False
    loss.load_training_state(torch.load(file, map_location="cpu", weights_only=True))
    return True


def finished_run(checkpoint: Path, loss: Any) -> tuple[int, list[dict[str, Any]]]:
    """The steps and log history of a run that took its steps and stopped before its final save.

    Its last checkpoint is the model; ``loss`` gets that checkpoint's state (for the summary's loss statistics).
    """
    load_loss_state(checkpoint, loss)
    trainer_state = json.loads((checkpoint / TRAINER_STATE_FILE).read_text(encoding="utf-8"))
    return int(trainer_state["global_step"]), trainer_state.get("log_history", [])


def dev_scores(log_history: list[dict[str, Any]]) -> list[dict[str, float]]:
    """The dev evaluations of the trainer's log history."""
    return [
        {k: v for k, v in log.items() if k.startswith("eval_")}
        for log in log_history
        if any(k.startswith("eval_") for k in log)
    ]


def loss_stats(loss: Any) -> dict[str, Any]:
    """The mega-batch pool's size and the annealing clock (empty for other losses)."""
    pool = getattr(loss, "pool", None)
    stats: dict[str, Any] = (
        {"pool_pairs": sum(len(entry) for entry in pool), "pool_minibatches": len(pool)} if pool else {}
    )
    if hasattr(loss, "steps"):
        stats["minibatches_seen"] = loss.steps  # the annealing clock, continued across resumes
    return stats

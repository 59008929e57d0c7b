"""The sentence-transformers trainer as paranmt_hf runs it: its arguments, callbacks and what a run reports of it.

Sparse-gradient norms; the loss's state and the run record in every checkpoint (written, and read back on resume).

Imports sentence-transformers at module level: import this module only when training.
"""

from __future__ import annotations

import gc
import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from sentence_transformers import SentenceTransformerTrainer
from transformers import TrainerCallback
from transformers.trainer import TRAINING_ARGS_NAME
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

    No warmup or weight decay (the papers' Adam; torch's fused AdamW kernel where the run has no optimizer of its
    own), the data order seeded by ``seed``, the two newest checkpoints kept, evaluation every ``eval_steps``
    (default ``save_steps``) when ``evaluate``, gloo under ``torchrun``.
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
        optim="adamw_torch_fused",  # one pass over each dense table per step (the per-tensor AdamW takes ~8)
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
        logging_nan_inf_filter=False,  # a diverged run's loss is logged as it is (DivergenceCallback stops it)
        disable_tqdm=not show_progress,
        dataloader_drop_last=False,
        ddp_backend="gloo" if world_size() > 1 else None,
    )


@contextmanager
def loaded_objects_frozen() -> Iterator[None]:
    """Keep the objects alive on entry out of garbage collection until exit (``gc.freeze`` / ``gc.unfreeze``).

    A training process holds some 500K objects of the libraries it imported (functions, types, dicts), none of
    them garbage; every full collection walks them all. transformers' loop starts with one (accelerate's
    ``free_memory`` calls ``gc.collect``), and Python runs more as training allocates. Frozen objects are skipped;
    objects made inside are collected as usual. The freeze is the process's (other threads' objects too) until
    exit, where everything frozen is unfrozen; a caller that froze objects itself keeps them frozen (nothing is done).
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class ParaNMTTrainer(SentenceTransformerTrainer):
    """``SentenceTransformerTrainer`` whose logged gradient norm also works with sparse embedding gradients.

    transformers' Trainer computes the norm with ``clip_grad_norm_`` at every step, which fails on sparse gradients
    (and costs a pass over every dense embedding table). There is no public hook for it: this overrides the private
    ``Trainer._get_grad_norm(model, grad_norm=None)``, which the training loop calls at every optimizer step (with
    the norm ``max_grad_norm`` clipping returned, else None) and whose result it logs as ``grad_norm``.
    ``tests/test_loss_trainer.py`` pins the signature and that call: a transformers release that changes them
    fails that test instead of silently logging nothing or failing on sparse gradients.
    """

    def train(self, *args: Any, **kwargs: Any) -> Any:
        """``Trainer.train`` with the objects alive before it outside the garbage collector's full passes.

        See :func:`loaded_objects_frozen`: the same training, without a collection over every object of the
        imported libraries at its start (accelerate's ``free_memory``) and at Python's own full collections.
        """
        with loaded_objects_frozen():
            return super().train(*args, **kwargs)

    def _get_grad_norm(self, model: Any, grad_norm: Any = None) -> Any:
        if grad_norm is not None:
            return grad_norm
        if not self._logs_next_step():
            return None  # the loop logs only the norm of a logging step: a pass over every gradient spared
        return gradient_norm(model.parameters())

    def _logs_next_step(self) -> bool:
        """Whether the optimizer step about to be taken is one whose log the loop writes (``grad_norm`` included).

        transformers' ``DefaultFlowCallback`` logs after step 1 with ``logging_first_step``, every
        ``logging_steps`` steps with the ``steps`` strategy, and, whatever the strategy, the loop's last log uses
        the last step's norm; other strategies: every step.
        """
        step, state = self.state.global_step + 1, self.state
        if str(getattr(self.args.logging_strategy, "value", self.args.logging_strategy)) != "steps":
            return True
        return (step % max(1, int(state.logging_steps)) == 0 or (step == 1 and self.args.logging_first_step)
                or step >= state.max_steps)

    def get_train_dataloader(self) -> Any:
        """The trainer's loader, its batches assembled from token ids computed once per distinct text.

        With a ParaNMT input module, the stock collator and a plain ``datasets.Dataset``, batches come from
        :class:`~paranmt_hf.training.batches.PairBatches` (the same features as the stock collator's, without
        tokenising every text of every batch) in the order of the trainer's own batch sampler (same seed, same
        batches); anything else takes sentence-transformers' loader.
        """
        batches = self._pair_batches()
        if batches is None:
            return super().get_train_dataloader()
        from torch.utils.data import DataLoader

        from .batches import collated

        self.accelerator.even_batches = False  # as sentence-transformers' get_train_dataloader
        generator = torch.Generator()
        if self.args.seed is not None:
            generator.manual_seed(self.args.seed)
        sampler = self.get_batch_sampler(
            self.train_dataset, batch_size=self.args.train_batch_size, drop_last=self.args.dataloader_drop_last,
            valid_label_columns=self.data_collator.valid_label_columns, generator=generator, seed=self.args.seed,
        )
        loader = DataLoader(batches, batch_sampler=sampler, collate_fn=collated,
                            num_workers=self.args.dataloader_num_workers, pin_memory=self.args.dataloader_pin_memory)
        self._train_dataloader = self.accelerator.prepare(loader)
        return self._train_dataloader

    def _pair_batches(self) -> Any:
        """The :class:`~paranmt_hf.training.batches.PairBatches` of the training set, or None where it does not apply.

        Built once per trainer (the token ids of every distinct text).
        """
        cached = getattr(self, "_pair_batches_cache", None)
        if cached is not None:
            return cached
        from datasets import Dataset
        from sentence_transformers.base.data_collator import BaseDataCollator

        from ..modeling.input_module_paranmt import ParaNMTInputModule
        from .batches import PairBatches

        collator = self.data_collator
        modules = list(self.model.children()) if hasattr(self.model, "children") else []
        plain = (
            isinstance(self.train_dataset, Dataset)
            and "dataset_name" not in self.train_dataset.column_names
            and len(modules) == 1 and isinstance(modules[0], ParaNMTInputModule)
            and type(collator).__call__ is BaseDataCollator.__call__
            and not collator.prompts and not collator.router_mapping and collator.max_length is None
        )
        if not plain:
            return None
        label_columns = list(collator.valid_label_columns or ())
        self._pair_batches_cache = PairBatches.from_dataset(self.train_dataset, modules[0].featurizer, label_columns)
        return self._pair_batches_cache

    def _save(self, output_dir: str | None = None, state_dict: Any = None) -> None:
        """Write the checkpoint's model files from the process that saves (rank 0 under ``torchrun``) only.

        transformers 5 calls ``Trainer._save`` on every process and checks ``args.should_save`` inside it;
        sentence-transformers' override writes without that check, so under ``torchrun`` every rank wrote the same
        checkpoint files at the same moment (one rank could find a file the other was replacing and fail the run).
        ``tests/test_loss_trainer.py`` pins that only the saving process writes. The files are
        sentence-transformers' (model, tokenizer, training arguments); a checkpoint's come without a model card: it
        is for resuming, and the card (dataset statistics, widget examples) costs more than the weights of a small
        model. ``save_model`` into any other folder writes the card.
        """
        if not self.args.should_save:
            return
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(output_dir, exist_ok=True)
        checkpoint = Path(output_dir).name.startswith(f"{PREFIX_CHECKPOINT_DIR}-")
        self.model.save_pretrained(output_dir, create_model_card=not checkpoint)
        if self.processing_class is not None:
            self.processing_class.save_pretrained(output_dir)
        torch.save(self.args, os.path.join(output_dir, TRAINING_ARGS_NAME))


class RunDivergedError(ValueError):
    """The training loss or the model's weights became infinite or NaN: the run diverged."""


class DivergenceCallback(TrainerCallback):
    """Stops a run that diverged before its model or a checkpoint is saved.

    A diverged model embeds every sentence as NaN, and nothing after training would say so. Reads the losses the
    trainer logs (``logging_nan_inf_filter=False``: as they are), and checks the weights are finite before each
    checkpoint (a resume would otherwise finish from a diverged one); no extra work at other steps.
    """

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """Raise :class:`RunDivergedError` at a log whose training loss is infinite or NaN."""
        logs = logs or {}
        loss = logs.get("loss", logs.get("train_loss"))  # the last log of a run: its mean loss
        if isinstance(loss, (int, float)) and not math.isfinite(loss):
            raise RunDivergedError(_diverged(f"the training loss is {loss}", state, args))

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        """Raise :class:`RunDivergedError` before a checkpoint of weights that are not all finite."""
        if control.should_save and model is not None and not all(
            bool(torch.isfinite(p.detach()).all()) for p in model.parameters()
        ):
            raise RunDivergedError(_diverged("the model's weights are not finite", state, args))


def _diverged(what: str, state: Any, args: Any) -> str:
    return (f"{what} at step {state.global_step}: the run diverged (learning rate {args.learning_rate} too high?); "
            "the model was not saved")


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

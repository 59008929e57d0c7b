"""Train a ParaNMT encoder with the stock ``SentenceTransformerTrainer`` and the papers' mega-batch margin loss.

The pieces live by concept: :mod:`.recipes` (hyper-parameters), :mod:`.initial_model` (recipe -> untrained model),
:mod:`.loss` (recipe -> loss), :mod:`.optim` (LazyAdam, sparse gradients), :mod:`.distributed` (torchrun ranks),
:mod:`.hf_trainer` (the trainer class and callbacks) and :mod:`.data` (training pairs). This module runs them.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..utils.imports import require
from .data import PairSource, has_bitext, load_pairs
from .distributed import is_main_process, world_size
from .initial_model import build_initial_encoder
from .loss import make_loss
from .optim import LazyAdam, set_sparse_embeddings, uses_lazy_adam
from .recipes import Recipe

logger = logging.getLogger(__name__)

INIT_DIR = "initial-model"
CHECKPOINT_DIR = "checkpoints"
SUMMARY_FILE = "training_summary.json"


@dataclass
class TrainResult:
    """What a training run produced."""

    output_dir: str
    steps: int
    seconds: float
    train_pairs: int
    world_size: int
    threads: int = 1
    dev_scores: list[dict[str, float]] = field(default_factory=list)
    loss_stats: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunOptions:
    """How to run a training (everything but the recipe, the data and the output folder); see :func:`train`."""

    seed: int = 0
    dev_evaluator: Any = None
    eval_steps: int | None = None
    save_steps: int = 500
    resume: bool = False
    max_steps: int = -1
    logging_steps: int = 50
    show_progress: bool = True


def train(
    recipe: Recipe,
    sources: Sequence[PairSource | str],
    output_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    dev_evaluator: Any = None,
    eval_steps: int | None = None,
    save_steps: int = 500,
    resume: bool = False,
    max_steps: int = -1,
    logging_steps: int = 50,
    show_progress: bool = True,
) -> TrainResult:
    """Train ``recipe`` on ``sources`` and save a model directory that loads everywhere into ``output_dir``.

    Args:
        recipe: the hyper-parameters (see :mod:`paranmt_hf.training.recipes`).
        sources: training files (``"CONFIG:PATH,..."`` strings or :class:`PairSource`).
        output_dir: where the final model goes; ``checkpoints/`` and ``initial-model/`` are kept inside.
        seed: seed of shuffling, initialisation, dropout and scrambling (runs are deterministic for a seed).
        dev_evaluator: a sentence-transformers evaluator run every ``eval_steps`` (e.g. STS17 en-en).
        eval_steps: evaluation interval (default: ``save_steps``).
        save_steps: checkpoint interval in optimizer steps.
        resume: continue from the latest checkpoint in ``output_dir/checkpoints`` (same recipe and data).
        max_steps: stop after this many steps (``-1``: train ``recipe.epochs`` epochs).
        logging_steps: loss logging interval.
        show_progress: show the trainer's progress bars.
    """
    options = RunOptions(
        seed=seed,
        dev_evaluator=dev_evaluator,
        eval_steps=eval_steps,
        save_steps=save_steps,
        resume=resume,
        max_steps=max_steps,
        logging_steps=logging_steps,
        show_progress=show_progress,
    )
    require("sentence_transformers", "st")
    from transformers import set_seed

    set_seed(seed)
    threads = training_threads(recipe)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _train(recipe, list(sources), Path(output_dir), options)
    finally:
        torch.set_num_threads(previous_threads)


def training_threads(recipe: Recipe) -> int:
    """Torch threads for training: the recipe's, else 1 for averaging encoders, else torch's default."""
    if recipe.num_threads:
        return recipe.num_threads
    from ..build import parse_kinds
    from ..modeling.configuration_paranmt import AVERAGING_KINDS

    return 1 if all(k in AVERAGING_KINDS for k in parse_kinds(recipe.kind)) else torch.get_num_threads()


def _latest_checkpoint(directory: Path) -> str | None:
    checkpoints = sorted(directory.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    return str(checkpoints[-1]) if checkpoints else None


def _training_arguments(recipe: Recipe, out: Path, options: RunOptions) -> Any:
    from sentence_transformers import SentenceTransformerTrainingArguments

    evaluating = options.dev_evaluator is not None
    return SentenceTransformerTrainingArguments(
        output_dir=str(out / CHECKPOINT_DIR),
        per_device_train_batch_size=recipe.batch_size,
        learning_rate=recipe.learning_rate,
        num_train_epochs=recipe.epochs,
        max_steps=options.max_steps,
        lr_scheduler_type=recipe.lr_scheduler,
        warmup_steps=0,
        weight_decay=0.0,
        optim="adamw_torch",
        max_grad_norm=recipe.max_grad_norm,
        seed=options.seed,
        data_seed=options.seed,
        use_cpu=True,
        report_to="none",
        save_strategy="steps",
        save_steps=options.save_steps,
        save_total_limit=2,
        eval_strategy="steps" if evaluating else "no",
        eval_steps=options.eval_steps or options.save_steps,
        logging_steps=options.logging_steps,
        disable_tqdm=not options.show_progress,
        dataloader_drop_last=False,
        ddp_backend="gloo" if world_size() > 1 else None,
    )


def _initial_encoder(recipe: Recipe, pairs: Any, out: Path, options: RunOptions) -> Any:
    from ..encoder import ParaNMTEncoder

    init_dir = out / INIT_DIR
    if options.resume and (init_dir / "config.json").is_file():
        return ParaNMTEncoder.from_pretrained(init_dir)
    encoder = build_initial_encoder(recipe, list(pairs["anchor"]) + list(pairs["positive"]), options.seed)
    if is_main_process():
        encoder.save_pretrained(init_dir, sentence_transformers=False)
    return encoder


def _train(recipe: Recipe, sources: list[PairSource | str], out: Path, options: RunOptions) -> TrainResult:
    from sentence_transformers import SentenceTransformer

    from ..st import ParaNMTSentenceEncoder
    from .hf_trainer import LossScheduleCallback, ParaNMTTrainer

    pairs = load_pairs(sources, recipe.max_pairs, options.seed)
    encoder = _initial_encoder(recipe, pairs, out, options)
    lazy = uses_lazy_adam(recipe.optimizer, recipe.max_grad_norm, encoder.model)
    set_sparse_embeddings(encoder.model, lazy)
    model = SentenceTransformer(modules=[ParaNMTSentenceEncoder.from_encoder(encoder)], device="cpu")
    loss = make_loss(recipe, model, has_bitext(sources), distributed=world_size() > 1)
    optimizers = (LazyAdam(model.parameters(), lr=recipe.learning_rate), None) if lazy else (None, None)
    trainer = ParaNMTTrainer(
        model=model,
        args=_training_arguments(recipe, out, options),
        train_dataset=pairs,
        loss=loss,
        evaluator=options.dev_evaluator,
        optimizers=optimizers,
    )
    if hasattr(loss, "steps"):
        trainer.add_callback(LossScheduleCallback(loss))
    started = time.perf_counter()
    checkpoint = _latest_checkpoint(out / CHECKPOINT_DIR) if options.resume else None
    state = trainer.train(resume_from_checkpoint=checkpoint)
    seconds = time.perf_counter() - started
    result = TrainResult(
        output_dir=str(out),
        steps=state.global_step,
        seconds=seconds,
        train_pairs=len(pairs),
        world_size=world_size(),
        dev_scores=_dev_scores(trainer.state.log_history),
        loss_stats=_loss_stats(loss),
        threads=torch.get_num_threads(),
    )
    if is_main_process():
        trained = model[0].to_encoder()
        set_sparse_embeddings(trained.model, False)  # saved models fine-tune with any optimizer
        trained.save_pretrained(out)
        summary = {
            "recipe": recipe.to_dict(),
            "sources": [str(PairSource.parse(s) if isinstance(s, str) else s) for s in sources],
            "seed": options.seed,
            **result.__dict__,
        }
        (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, default=str))
    return result


def _dev_scores(log_history: list[dict[str, Any]]) -> list[dict[str, float]]:
    """The dev evaluations of the trainer's log history."""
    return [
        {k: v for k, v in log.items() if k.startswith("eval_")}
        for log in log_history
        if any(k.startswith("eval_") for k in log)
    ]


def _loss_stats(loss: Any) -> dict[str, Any]:
    """The mega-batch pool's size and the annealing clock (empty for other losses)."""
    pool = getattr(loss, "pool", None)
    stats: dict[str, Any] = (
        {"pool_pairs": sum(len(entry) for entry in pool), "pool_minibatches": len(pool)} if pool else {}
    )
    if hasattr(loss, "steps"):
        stats["minibatches_seen"] = loss.steps  # the annealing clock, continued across resumes
    return stats

"""Train a ParaNMT encoder with the stock ``SentenceTransformerTrainer`` and the papers' mega-batch margin loss."""

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
from .data import PairSource, has_bitext, load_pairs, vocab_corpus
from .optim import LazyAdam
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


def world_size() -> int:
    """Processes of this run (``torchrun`` sets ``WORLD_SIZE``)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """Whether this is rank 0 (the process that writes the final model)."""
    return int(os.environ.get("RANK", "0")) == 0


def build_initial_encoder(recipe: Recipe, sentences: list[str], seed: int) -> Any:
    """The untrained encoder of ``recipe`` with vocabularies built from ``sentences``."""
    from ..build import build_encoder

    config: dict[str, Any] = {
        "pooling": recipe.pooling,
        "scramble_rate": recipe.scramble_rate,
        "embedding_dropout": recipe.embedding_dropout,
        "bilstm_merge": recipe.bilstm_merge,
        **recipe.extra,
    }
    if recipe.rnn_hidden_size:
        config["rnn_hidden_size"] = recipe.rnn_hidden_size
    return build_encoder(
        recipe.kind,
        sentences,
        vocab_size=recipe.vocab_size,
        embedding_dim=recipe.embedding_dim,
        token_type=recipe.token_type,
        min_count=recipe.min_count,
        word_vectors=recipe.word_vectors,
        vector_vocab_size=recipe.vector_vocab_size,
        combination=recipe.combination,
        seed=seed,
        **config,
    )


def make_loss(recipe: Recipe, model: Any, bitext: bool) -> Any:
    """The recipe's loss on a SentenceTransformer ``model``."""
    if recipe.loss == "megabatch":
        from ..losses import MegaBatchMarginLoss

        return MegaBatchMarginLoss(
            model,
            margin=recipe.margin,
            megabatch_size=recipe.megabatch_size,
            anneal=recipe.anneal,
            sampling=recipe.sampling,
            candidates="other_side" if bitext else "both",
            gather_across_devices=world_size() > 1,
        )
    if recipe.loss == "mnrl":
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

        return MultipleNegativesRankingLoss(model, gather_across_devices=world_size() > 1)
    raise ValueError(f"unknown loss {recipe.loss!r}: choose 'megabatch' or 'mnrl'")


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


def _trainer_class() -> type:
    """SentenceTransformerTrainer whose logged gradient norm also works with sparse embedding gradients.

    transformers' Trainer computes the norm with ``clip_grad_norm_`` at every step, which fails on sparse gradients
    (and costs a pass over every dense embedding table).
    """
    from sentence_transformers import SentenceTransformerTrainer

    class ParaNMTTrainer(SentenceTransformerTrainer):
        def _get_grad_norm(self, model: Any, grad_norm: Any = None) -> Any:
            if grad_norm is not None:
                return grad_norm
            return gradient_norm(model.parameters())

    return ParaNMTTrainer


def _loss_schedule_callback(loss: Any) -> Any:
    """A callback that sets the loss's mini-batch counter (annealing) to the trained step count at the start.

    A resumed run then continues the annealing schedule instead of restarting it.
    """
    from transformers import TrainerCallback

    class LossScheduleCallback(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            loss.steps = state.global_step * args.gradient_accumulation_steps

    return LossScheduleCallback()


SPARSE_AUTO_MIN_PARAMETERS = 8_000_000
"""With ``optimizer="auto"``, embedding tables at least this large train with sparse gradients and LazyAdam (a dense
Adam step over e.g. 50K x 1024 rows costs more than the rest of the step); smaller ones with dense Adam."""


def _check_optimizer(recipe: Recipe, model: Any) -> bool:
    """Whether the recipe trains with LazyAdam (sparse embedding gradients)."""
    if recipe.optimizer not in ("auto", "lazy_adam", "adam"):
        raise ValueError(f"optimizer must be 'auto', 'lazy_adam' or 'adam', got {recipe.optimizer!r}")
    largest = max(encoder.embedding.weight.numel() for encoder in model.encoders)
    lazy = recipe.optimizer == "lazy_adam" or (recipe.optimizer == "auto" and largest >= SPARSE_AUTO_MIN_PARAMETERS)
    if lazy and recipe.max_grad_norm > 0:
        raise ValueError("gradient clipping (max_grad_norm > 0) needs optimizer='adam' (dense gradients)")
    return lazy


def set_sparse_embeddings(model: Any, sparse: bool) -> None:
    """Switch the embedding tables of a ParaNMTModel to sparse (or dense) gradients, config included."""
    model.config.sparse_embeddings = sparse
    for encoder in model.encoders:
        encoder.embedding.sparse = sparse


def _latest_checkpoint(directory: Path) -> str | None:
    checkpoints = sorted(directory.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    return str(checkpoints[-1]) if checkpoints else None


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
    require("sentence_transformers", "st")
    from transformers import set_seed

    set_seed(seed)
    threads = training_threads(recipe)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _train(
            recipe,
            sources,
            Path(output_dir),
            seed,
            dev_evaluator,
            eval_steps,
            save_steps,
            resume,
            max_steps,
            logging_steps,
            show_progress,
        )
    finally:
        torch.set_num_threads(previous_threads)


def training_threads(recipe: Recipe) -> int:
    """Torch threads for training: the recipe's, else 1 for averaging encoders, else torch's default."""
    if recipe.num_threads:
        return recipe.num_threads
    from ..build import parse_kinds
    from ..modeling.configuration_paranmt import AVERAGING_KINDS

    return 1 if all(k in AVERAGING_KINDS for k in parse_kinds(recipe.kind)) else torch.get_num_threads()


def _train(
    recipe: Recipe,
    sources: Sequence[PairSource | str],
    out: Path,
    seed: int,
    dev_evaluator: Any,
    eval_steps: int | None,
    save_steps: int,
    resume: bool,
    max_steps: int,
    logging_steps: int,
    show_progress: bool,
) -> TrainResult:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import SentenceTransformerTrainingArguments as Args

    from ..encoder import ParaNMTEncoder
    from ..st import ParaNMTSentenceEncoder

    pairs = load_pairs(sources, recipe.max_pairs, seed)
    init_dir = out / INIT_DIR
    if resume and (init_dir / "config.json").is_file():
        encoder = ParaNMTEncoder.from_pretrained(init_dir)
    else:
        encoder = build_initial_encoder(recipe, vocab_corpus(pairs, recipe.vocab_sentences), seed)
        if is_main_process():
            encoder.save_pretrained(init_dir, sentence_transformers=False)
    lazy = _check_optimizer(recipe, encoder.model)
    set_sparse_embeddings(encoder.model, lazy)
    model = SentenceTransformer(modules=[ParaNMTSentenceEncoder.from_encoder(encoder)], device="cpu")
    loss = make_loss(recipe, model, has_bitext(sources))
    evaluating = dev_evaluator is not None
    args = Args(
        output_dir=str(out / CHECKPOINT_DIR),
        per_device_train_batch_size=recipe.batch_size,
        learning_rate=recipe.learning_rate,
        num_train_epochs=recipe.epochs,
        max_steps=max_steps,
        lr_scheduler_type=recipe.lr_scheduler,
        warmup_steps=0,
        weight_decay=0.0,
        optim="adamw_torch",
        max_grad_norm=recipe.max_grad_norm,
        seed=seed,
        data_seed=seed,
        use_cpu=True,
        report_to="none",
        save_strategy="steps",
        save_steps=save_steps,
        save_total_limit=2,
        eval_strategy="steps" if evaluating else "no",
        eval_steps=eval_steps or save_steps,
        logging_steps=logging_steps,
        disable_tqdm=not show_progress,
        dataloader_drop_last=False,
        ddp_backend="gloo" if world_size() > 1 else None,
    )
    optimizers = (LazyAdam(model.parameters(), lr=recipe.learning_rate), None) if lazy else (None, None)
    trainer = _trainer_class()(
        model=model, args=args, train_dataset=pairs, loss=loss, evaluator=dev_evaluator, optimizers=optimizers
    )
    if hasattr(loss, "steps"):
        trainer.add_callback(_loss_schedule_callback(loss))
    started = time.perf_counter()
    checkpoint = _latest_checkpoint(out / CHECKPOINT_DIR) if resume else None
    state = trainer.train(resume_from_checkpoint=checkpoint)
    seconds = time.perf_counter() - started
    dev = [
        {k: v for k, v in log.items() if k.startswith("eval_")}
        for log in trainer.state.log_history
        if any(k.startswith("eval_") for k in log)
    ]
    pool = getattr(loss, "pool", None)
    stats = {"pool_pairs": sum(len(entry) for entry in pool), "pool_minibatches": len(pool)} if pool else {}
    if hasattr(loss, "steps"):
        stats["minibatches_seen"] = loss.steps  # the annealing clock, continued across resumes
    result = TrainResult(
        output_dir=str(out),
        steps=state.global_step,
        seconds=seconds,
        train_pairs=len(pairs),
        world_size=world_size(),
        dev_scores=dev,
        loss_stats=stats,
        threads=torch.get_num_threads(),
    )
    if is_main_process():
        trained = model[0].to_encoder()
        set_sparse_embeddings(trained.model, False)  # saved models fine-tune with any optimizer
        trained.save_pretrained(out)
        summary = {
            "recipe": recipe.to_dict(),
            "sources": [str(PairSource.parse(s) if isinstance(s, str) else s) for s in sources],
            "seed": seed,
            **result.__dict__,
        }
        (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, default=str))
    return result

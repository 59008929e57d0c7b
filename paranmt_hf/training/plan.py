"""A recipe cut into the specs of the training steps: each step takes its own few fields, not the whole recipe.

:func:`plan_training` reads a :class:`~paranmt_hf.training.recipes.Recipe` once, at the top of
:func:`paranmt_hf.training.trainer.train`; the steps below it never see the recipe:

- :class:`ModelSpec`: the initial encoder (:mod:`.initial_model`);
- :class:`OptimizerSpec`: sparse gradients, LazyAdam, per-table rates (:mod:`.optim`);
- :class:`LossSpec`: the loss (:mod:`.loss`);
- :class:`Schedule`: the trainer's arguments and the resume check;
- :class:`FinishSpec`: the teacher's table after training (:mod:`.teacher`).

It also refuses a recipe that would train nothing or cannot train as asked (:func:`check_trainable`), before any
work. The whole recipe still defines the run's identity (:meth:`Recipe.to_dict` in the run record and summary).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from .initial_model import ModelSpec
from .loss import LossSpec
from .optim import OPTIMIZERS, OptimizerSpec, optimizer_conflict
from .recipes import Recipe, RecipeError, Schedule
from .teacher import Distillation, FinishSpec
from .tokenlearn import TokenlearnSpec


@dataclass(frozen=True)
class TrainingPlan:
    """The specs of a run's steps, read from its recipe by :func:`plan_training`.

    Attributes:
        threads: torch threads of the run (``None``: torch's default).
        max_pairs: the training pairs kept after shuffling (``None``: all).
        model: the initial encoder.
        optimizer: the optimizer and its per-table learning rates.
        loss: the training loss.
        schedule: the trainer's schedule.
        finish: the teacher's steps after training (``None``: the recipe has no teacher).
    """

    threads: int | None
    max_pairs: int | None
    model: ModelSpec
    optimizer: OptimizerSpec
    loss: LossSpec
    schedule: Schedule
    finish: FinishSpec | None


MODEL_SPEC_OWN = ("config", "distillation")
"""The :class:`ModelSpec` fields that are no recipe field (the others are the recipe's of the same names)."""


def distillation(recipe: Recipe) -> Distillation | None:
    """The teacher's distilled table of ``recipe`` (``None``: no teacher)."""
    if not recipe.teacher:
        return None
    return Distillation(recipe.teacher, recipe.teacher_pca_dims, recipe.teacher_sif_coefficient)


def model_spec(recipe: Recipe) -> ModelSpec:
    """What building the untrained encoder of ``recipe`` takes (``paranmt-hf build`` and ``train``)."""
    config = {
        "pooling": recipe.pooling,
        "scramble_rate": recipe.scramble_rate,
        "embedding_dropout": recipe.embedding_dropout,
        "bilstm_merge": recipe.bilstm_merge,
        "lstm_peepholes": recipe.lstm_peepholes,
        **recipe.extra,
    }
    if recipe.rnn_hidden_size:
        config["rnn_hidden_size"] = recipe.rnn_hidden_size
    same_names = {f.name: getattr(recipe, f.name) for f in fields(ModelSpec) if f.name not in MODEL_SPEC_OWN}
    return ModelSpec(**same_names, config=config,
                     distillation=distillation(recipe) if recipe.trains_teacher_table else None)


def check_trainable(recipe: Recipe) -> None:
    """Refuse a recipe whose training would update no parameter, or that asks for what its optimizer cannot do.

    A model's parameters are its components' (:mod:`.optim`): the ``subword`` tables distilled from a teacher train at
    ``teacher_learning_rate`` (``None``: ``learning_rate``; ``0``: frozen), every other component at
    ``learning_rate``. A frozen teacher table next to a trained component (e.g. ``trigram+subword``) is a normal run.

    Raises:
        RecipeError: a number that is not finite, a negative learning rate, no component that trains at a positive
            rate (naming the field and the ``paranmt-hf train`` flag that froze it), an unknown optimizer, or
            gradient clipping with LazyAdam.
    """
    for field in fields(recipe):
        value = getattr(recipe, field.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise RecipeError(f"{field.name} must be a finite number, got {value}")
    for name, flag in (("learning_rate", "--lr"), ("teacher_learning_rate", "--teacher-lr")):
        rate = getattr(recipe, name)
        if rate is not None and rate < 0:
            raise RecipeError(f"{name} (train {flag}) must be >= 0, got {rate}")
    conflict = optimizer_conflict(recipe.optimizer, recipe.max_grad_norm)
    if conflict == "unknown":
        raise RecipeError(f"optimizer (train --optimizer) must be one of {', '.join(OPTIMIZERS)}, got "
                          f"{recipe.optimizer!r}")
    if conflict == "clipping":
        raise RecipeError(f"max_grad_norm (train --max-grad-norm) {recipe.max_grad_norm} clips dense gradients, and "
                          "optimizer lazy_adam (train --optimizer) trains with sparse ones: choose --optimizer adam "
                          "or auto, or --max-grad-norm 0")
    table = recipe.trains_teacher_table
    table_rate = recipe.learning_rate if recipe.teacher_learning_rate is None else recipe.teacher_learning_rate
    others = [kind for kind in recipe.kinds if not (table and kind == "subword")]
    if (others and recipe.learning_rate > 0) or (table and table_rate > 0):
        return
    if recipe.learning_rate <= 0 and (not table or recipe.teacher_learning_rate is None):
        raise RecipeError(f"nothing to train: learning_rate (train --lr) is {recipe.learning_rate}, which freezes "
                          "every component; give it a positive rate (`paranmt-hf build` makes an untrained model)")
    if not others:
        raise RecipeError(f"nothing to train: kind {recipe.kind!r} has only the teacher's distilled subword "
                          "table(s), frozen by teacher_learning_rate=0 (train --teacher-lr 0); give them a positive "
                          "rate, or add a trained component (e.g. --kind trigram+subword)")
    raise RecipeError(f"nothing to train: the teacher's subword table(s) are frozen by teacher_learning_rate=0 (train "
                      f"--teacher-lr 0) and the other components of kind {recipe.kind!r} by learning_rate="
                      f"{recipe.learning_rate} (train --lr); give one of them a positive rate")


def plan_training(recipe: Recipe) -> TrainingPlan:
    """Cut ``recipe`` into the specs of the training steps (see the module's table).

    Raises:
        RecipeError: a recipe that would train nothing or cannot train as asked (:func:`check_trainable`).
    """
    check_trainable(recipe)
    trains_table = recipe.trains_teacher_table
    finish = None
    if recipe.teacher:
        tokenlearn = None
        if recipe.tokenlearn and not trains_table:
            tokenlearn = TokenlearnSpec(recipe.teacher, recipe.teacher_precision, recipe.tokenlearn_sentences,
                                        recipe.tokenlearn_epochs, recipe.tokenlearn_learning_rate)
        finish = FinishSpec(None if trains_table else distillation(recipe), tokenlearn, recipe.teacher_weight)
    table_rate = recipe.learning_rate if recipe.teacher_learning_rate is None else recipe.teacher_learning_rate
    return TrainingPlan(
        threads=recipe.num_threads or (1 if recipe.averaging else None),
        max_pairs=recipe.max_pairs,
        model=model_spec(recipe),
        optimizer=OptimizerSpec(recipe.optimizer, recipe.learning_rate, recipe.max_grad_norm,
                                table_rate if trains_table else None, recipe.keep_norms),
        loss=LossSpec(recipe.loss, recipe.margin, recipe.megabatch_size, recipe.anneal, recipe.sampling),
        schedule=Schedule(recipe.batch_size, recipe.learning_rate, recipe.epochs, recipe.lr_scheduler,
                          recipe.max_grad_norm),
        finish=finish,
    )

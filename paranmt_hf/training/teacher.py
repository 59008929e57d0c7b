"""Training with a teacher-initialised ``subword`` table: the initial encoder and the per-table learning rates.

A recipe with ``teacher`` set (e.g. the ``teacher`` preset) starts its ``subword`` components from model2vec's
distillation of that sentence-transformers teacher (:mod:`paranmt_hf.model.distill`) and trains them with their own
learning rate, ``teacher_learning_rate`` (0 keeps the distilled table frozen), next to the other components at
``learning_rate``. The distilled rows carry model2vec's Zipf/SIF token weights in their norms; ``keep_norms``
restores each updated row's initial norm after every step, so training changes directions only.

A recipe whose ``kind`` has no ``subword`` component (e.g. ``trigram``) but sets ``teacher`` trains as usual and is
then concatenated with the teacher's distilled table (:func:`paranmt_hf.model.build.combine_encoders`); with
``tokenlearn`` (the ``best`` recipe) that table is first fitted to the teacher's sentence embeddings of the training
sentences (:mod:`paranmt_hf.training.tokenlearn`). Either way
``teacher_weight`` finally rescales the subword tables so that their part of the sentence embedding weighs that much
relative to the rest (:func:`paranmt_hf.model.distill.balance_subword`, median norms over training sentences): trained
trigram averages grow a few times larger than the distilled table's, which would otherwise hardly count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .optim import LazyAdam
from .recipes import Recipe

BALANCE_SENTENCES = 5000
"""Training sentences (the first ones) whose embedding norms set ``teacher_weight``'s scale."""


def finish_teacher_model(
    recipe: Recipe, encoder: Any, anchors: list[str], others: list[str] = (), seed: int = 0,
    show_progress: bool = True, stats: dict[str, Any] | None = None,
) -> Any:
    """The model to save after training: combined with the teacher's table if needed, subword weight balanced.

    Args:
        recipe: the recipe (``teacher``, ``tokenlearn*``, ``teacher_weight``).
        encoder: the trained encoder.
        anchors: the training pairs' first sides (the first ``BALANCE_SENTENCES`` set ``teacher_weight``'s scale).
        others: their other sides (with ``anchors``, the sentences the table learns from with ``tokenlearn``).
        seed: the sample of ``tokenlearn_sentences`` and the regression's batch order.
        show_progress: progress bars of the teacher pass and the regression.
        stats: filled with what the teacher steps cost (see :func:`learn_table`).
    """
    from ..model.build import combine_encoders
    from ..model.distill import balance_subword, build_teacher_encoder
    from ..utils.paths import cache_dir

    if not recipe.trains_teacher_table:
        table = build_teacher_encoder(
            "subword",
            anchors[:1],
            teacher=recipe.teacher,
            pca_dims=recipe.teacher_pca_dims,
            sif_coefficient=recipe.teacher_sif_coefficient,
            cache_dir=cache_dir() / "distilled",
        )
        if recipe.tokenlearn:
            table = learn_table(recipe, table, [*anchors, *others], seed, show_progress, stats)
        encoder = combine_encoders([encoder, table])
    if recipe.teacher_weight is not None:
        balance_subword(encoder, anchors[:BALANCE_SENTENCES], recipe.teacher_weight)
    return encoder


def learn_table(
    recipe: Recipe, table: Any, texts: list[str], seed: int = 0, show_progress: bool = True,
    stats: dict[str, Any] | None = None,
) -> Any:
    """The distilled ``subword`` encoder ``table`` fitted to the teacher's sentence embeddings of ``texts``.

    The unique texts (at most ``tokenlearn_sentences``, a seeded sample) are embedded by the teacher on every core
    (cached: :mod:`paranmt_hf.training.teacher_embeddings`), then :func:`paranmt_hf.training.tokenlearn.fit_table`.
    ``stats`` gets ``tokenlearn_sentences``, ``teacher_pass`` (``cached``, ``seconds``, ``path``, ``engine``, ...)
    and ``tokenlearn_seconds``.
    """
    import time

    from .teacher_embeddings import teacher_embeddings
    from .tokenlearn import fit_table, unique_sentences

    sentences = unique_sentences(texts, recipe.tokenlearn_sentences, seed)
    teacher_pass: dict[str, Any] = {}
    targets = teacher_embeddings(sentences, recipe.teacher, recipe.teacher_precision, show_progress=show_progress,
                                 info=teacher_pass)
    started = time.perf_counter()
    learned = fit_table(table, sentences, targets, epochs=recipe.tokenlearn_epochs,
                        learning_rate=recipe.tokenlearn_learning_rate, seed=seed, show_progress=show_progress)
    if stats is not None:
        stats.update(tokenlearn_sentences=len(sentences), teacher_pass=teacher_pass,
                     tokenlearn_seconds=round(time.perf_counter() - started, 1))
    return learned


def teacher_builder(recipe: Recipe) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The builder of a teacher recipe's initial encoder and its teacher options (for ``build_initial_encoder``)."""
    from ..model.distill import build_teacher_encoder

    options = {
        "teacher": recipe.teacher,
        "pca_dims": recipe.teacher_pca_dims,
        "sif_coefficient": recipe.teacher_sif_coefficient,
    }
    return build_teacher_encoder, options


def teacher_tables(model: Any) -> list[torch.nn.Parameter]:
    """The embedding tables of the ``subword`` components of a ParaNMTModel."""
    return [c.embedding.weight for c in model.components if c.kind == "subword"]


def teacher_optimizer(recipe: Recipe, model: Any, parameters: Any = None) -> torch.optim.Optimizer:
    """Adam (``LazyAdam``: sparse or dense gradients) with the subword tables at ``recipe.teacher_learning_rate``.

    Args:
        recipe: the recipe (``teacher_learning_rate`` ``None``: ``learning_rate``; ``0``: the tables are frozen).
        model: the ParaNMTModel being trained.
        parameters: every trainable parameter (default: ``model.parameters()``), e.g. a SentenceTransformer's.
    """
    tables = teacher_tables(model)
    rate = recipe.learning_rate if recipe.teacher_learning_rate is None else recipe.teacher_learning_rate
    table_ids = {id(t) for t in tables}
    others = [p for p in (model.parameters() if parameters is None else parameters) if id(p) not in table_ids]
    groups: list[dict[str, Any]] = [{"params": others, "lr": recipe.learning_rate}]
    if rate > 0:
        groups.append({"params": tables, "lr": rate})
    else:
        for table in tables:
            table.requires_grad_(False)
    optimizer = LazyAdam(groups, lr=recipe.learning_rate)
    if recipe.keep_norms and rate > 0:
        norms = [t.detach().norm(dim=1, keepdim=True).clone() for t in tables]
        optimizer.register_step_post_hook(lambda *_: _restore_norms(tables, norms))
    return optimizer


@torch.no_grad()
def _restore_norms(tables: list[torch.nn.Parameter], norms: list[torch.Tensor]) -> None:
    for table, norm in zip(tables, norms, strict=True):
        table.mul_(norm / table.norm(dim=1, keepdim=True).clamp_min(1e-12))

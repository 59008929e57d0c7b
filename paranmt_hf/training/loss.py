"""The loss factory: a recipe's training loss on a SentenceTransformer model."""

from __future__ import annotations

from typing import Any

from .recipes import Recipe

LOSSES = ("megabatch", "mnrl")


def make_loss(recipe: Recipe, model: Any, bitext: bool, distributed: bool = False) -> Any:
    """The recipe's loss on a SentenceTransformer ``model``.

    Args:
        recipe: ``loss`` picks the papers' ``MegaBatchMarginLoss`` (``"megabatch"``) or sentence-transformers'
            ``MultipleNegativesRankingLoss`` (``"mnrl"``); the mega-batch fields configure the former.
        model: the SentenceTransformer being trained.
        bitext: the data holds X-English bitext (negatives then come from the other language).
        distributed: gather negatives across the processes of a ``torchrun`` run.
    """
    if recipe.loss == "megabatch":
        from ..losses import MegaBatchMarginLoss

        return MegaBatchMarginLoss(
            model,
            margin=recipe.margin,
            megabatch_size=recipe.megabatch_size,
            anneal=recipe.anneal,
            sampling=recipe.sampling,
            candidates="other_side" if bitext else "both",
            gather_across_devices=distributed,
        )
    if recipe.loss == "mnrl":
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

        return MultipleNegativesRankingLoss(model, gather_across_devices=distributed)
    raise ValueError(f"unknown loss {recipe.loss!r}: choose one of {LOSSES}")

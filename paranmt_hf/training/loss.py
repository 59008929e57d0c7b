"""The loss factory: the training loss a :class:`LossSpec` describes, on a SentenceTransformer model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LOSSES = ("megabatch", "mnrl")


@dataclass(frozen=True)
class LossSpec:
    """What the loss needs of a recipe (the recipe's fields of the same names).

    Attributes:
        loss: ``"megabatch"`` (the papers' ``MegaBatchMarginLoss``) or ``"mnrl"`` (sentence-transformers'
            ``MultipleNegativesRankingLoss``).
        margin, megabatch_size, anneal, sampling: the mega-batch loss's settings (unused by ``mnrl``).
    """

    loss: str = "megabatch"
    margin: float = 0.4
    megabatch_size: int = 1
    anneal: int | None = None
    sampling: str = "MAX"


def make_loss(spec: LossSpec, model: Any, bitext: bool, distributed: bool = False) -> Any:
    """The loss ``spec`` describes, on a SentenceTransformer ``model``.

    Args:
        spec: which loss, and the mega-batch settings.
        model: the SentenceTransformer being trained.
        bitext: the data holds X-English bitext (negatives then come from the other language).
        distributed: gather negatives across the processes of a ``torchrun`` run.
    """
    if spec.loss == "megabatch":
        from ..losses import MegaBatchMarginLoss

        return MegaBatchMarginLoss(
            model,
            margin=spec.margin,
            megabatch_size=spec.megabatch_size,
            anneal=spec.anneal,
            sampling=spec.sampling,
            candidates="other_side" if bitext else "both",
            gather_across_devices=distributed,
        )
    if spec.loss == "mnrl":
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

        return MultipleNegativesRankingLoss(model, gather_across_devices=distributed)
    raise ValueError(f"unknown loss {spec.loss!r}: choose one of {LOSSES}")

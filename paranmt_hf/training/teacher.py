"""A teacher's distilled ``subword`` table (:class:`Distillation`) and the steps after training (:class:`FinishSpec`).

A recipe with ``teacher`` set whose ``kind`` has a ``subword`` component starts those components from model2vec's
distillation of that teacher (:mod:`paranmt_hf.model.distill`, built by :mod:`paranmt_hf.training.initial_model`)
and trains them at ``teacher_learning_rate`` (0 keeps the distilled table frozen), the other components at
``learning_rate`` (:mod:`paranmt_hf.training.optim`). The distilled rows carry model2vec's Zipf/SIF token weights in
their norms; ``keep_norms`` restores each updated row's norm after every step, so training changes directions only.

A recipe with ``teacher`` but no ``subword`` component (e.g. ``trigram``) trains as usual and is then concatenated
with the teacher's distilled table (:func:`paranmt_hf.model.build.combine_encoders`); with ``tokenlearn`` (the
``best`` recipe) that table is first fitted to the teacher's sentence embeddings (:mod:`.tokenlearn`). Either way
``teacher_weight`` finally rescales the subword tables so that their part of the sentence embedding weighs that much
relative to the rest (:func:`paranmt_hf.model.distill.balance_subword`): trained trigram averages grow much larger
than the distilled table's, which would otherwise hardly count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .tokenlearn import TokenlearnSpec

BALANCE_SENTENCES = 5000
"""Training sentences (the first ones) whose embedding norms set ``teacher_weight``'s scale."""


@dataclass(frozen=True)
class Distillation:
    """The teacher's distilled table (the recipe's ``teacher``, ``teacher_pca_dims``, ``teacher_sif_coefficient``).

    Attributes:
        teacher: a sentence-transformers model (directory, Hub id or bundling package).
        pca_dims: PCA size of the distilled table (``None``: the teacher's size).
        sif_coefficient: model2vec's Zipf/SIF token weighting of the distilled rows (``None``: none).
    """

    teacher: str
    pca_dims: int | None = 256
    sif_coefficient: float | None = 1e-4

    def options(self) -> dict[str, Any]:
        """The keywords of :func:`paranmt_hf.model.distill.build_teacher_encoder` for this table."""
        return {"teacher": self.teacher, "pca_dims": self.pca_dims, "sif_coefficient": self.sif_coefficient}


@dataclass(frozen=True)
class FinishSpec:
    """What a teacher recipe does to the trained encoder (:func:`finish_teacher_model`).

    Attributes:
        table: the distilled table concatenated to the trained encoder (``None``: the encoder trained its own
            ``subword`` components from it).
        tokenlearn: fit that table to the teacher's sentence embeddings first (``None``: as distilled).
        weight: the recipe's ``teacher_weight`` (``None``: the subword tables as trained).
    """

    table: Distillation | None = None
    tokenlearn: TokenlearnSpec | None = None
    weight: float | None = None


def finish_teacher_model(
    spec: FinishSpec, encoder: Any, anchors: list[str], others: list[str] = (), seed: int = 0,
    show_progress: bool = True, stats: dict[str, Any] | None = None,
) -> Any:
    """The model to save after training: combined with the teacher's table if needed, subword weight balanced.

    Args:
        spec: the table to add, its tokenlearn fit and the subword weight.
        encoder: the trained encoder.
        anchors: the training pairs' first sides (the first ``BALANCE_SENTENCES`` set ``spec.weight``'s scale).
        others: their other sides (with ``anchors``, the sentences the table learns from with ``tokenlearn``).
        seed: the sample of ``tokenlearn.sentences`` and the regression's batch order.
        show_progress: progress bars of the teacher pass and the regression.
        stats: filled with what the teacher steps cost (see :func:`~paranmt_hf.training.tokenlearn.learn_table`).
    """
    from ..model.build import combine_encoders
    from ..model.distill import balance_subword, build_teacher_encoder
    from ..utils.paths import cache_dir

    if spec.table is not None:
        table = build_teacher_encoder("subword", anchors[:1], cache_dir=cache_dir() / "distilled",
                                      **spec.table.options())
        if spec.tokenlearn is not None:
            from .tokenlearn import learn_table

            table = learn_table(spec.tokenlearn, table, [*anchors, *others], seed, show_progress, stats)
        encoder = combine_encoders([encoder, table])
    if spec.weight is not None:
        balance_subword(encoder, anchors[:BALANCE_SENTENCES], spec.weight)
    return encoder

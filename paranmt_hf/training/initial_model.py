"""The recipe -> model mapping: the untrained encoder a :class:`~paranmt_hf.training.recipes.Recipe` describes.

Used by ``paranmt-hf train`` (its ``initial-model/``) and ``paranmt-hf build`` (an untrained model directory), so the
two commands build the same model from the same flags.
"""

from __future__ import annotations

from typing import Any

from .recipes import Recipe


def model_config(recipe: Recipe) -> dict[str, Any]:
    """The ``ParaNMTConfig`` fields a recipe sets beyond kind, sizes and vocabularies."""
    config: dict[str, Any] = {
        "pooling": recipe.pooling,
        "scramble_rate": recipe.scramble_rate,
        "embedding_dropout": recipe.embedding_dropout,
        "bilstm_merge": recipe.bilstm_merge,
        "lstm_peepholes": recipe.lstm_peepholes,
        **recipe.extra,
    }
    if recipe.rnn_hidden_size:
        config["rnn_hidden_size"] = recipe.rnn_hidden_size
    return config


def build_initial_encoder(recipe: Recipe, sentences: list[str], seed: int) -> Any:
    """The untrained ``ParaNMTEncoder`` of ``recipe`` with vocabularies built from ``sentences``.

    With ``word_vectors``, word embeddings take the vectors' width (GloVe 6B 50d: 50), whatever ``embedding_dim``
    says; ``embedding_dim`` sizes the other components.
    """
    from ..model.build import build_encoder

    build, teacher_options = build_encoder, {}
    if recipe.trains_teacher_table:  # tables distilled from a teacher (training.teacher)
        from .teacher import teacher_builder

        build, teacher_options = teacher_builder(recipe)
    return build(
        recipe.kind,
        sentences,
        vocab_size=recipe.vocab_size,
        embedding_dim=recipe.embedding_dim,
        token_type=recipe.token_type,
        min_count=recipe.min_count,
        lookup=recipe.lookup,
        word_vectors=recipe.word_vectors,
        vector_vocab_size=recipe.vector_vocab_size,
        combination=recipe.combination,
        seed=seed,
        **teacher_options,
        **model_config(recipe),
    )

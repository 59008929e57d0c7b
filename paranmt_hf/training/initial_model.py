"""The untrained encoder of a run: a :class:`ModelSpec` (the recipe's model fields) -> a ``ParaNMTEncoder``.

Used by ``paranmt-hf train`` (its ``initial-model/``) and ``paranmt-hf build`` (an untrained model directory), so the
two commands build the same model from the same flags; :func:`paranmt_hf.training.plan.model_spec` reads the spec
from a recipe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .distributed import is_main_process
from .teacher import Distillation

BUILD_OPTIONS = ("vocab_size", "embedding_dim", "token_type", "min_count", "lookup", "word_vectors",
                 "vector_vocab_size", "combination")
"""The :class:`ModelSpec` fields that are ``build_encoder``'s keywords of the same names."""


@dataclass(frozen=True)
class ModelSpec:
    """What building the untrained encoder takes (the recipe's fields of the same names).

    Attributes:
        kind, combination, embedding_dim, token_type, vocab_size, min_count, lookup, word_vectors,
            vector_vocab_size: :func:`paranmt_hf.model.build.build_encoder`'s arguments.
        vocab_sentences: build the vocabularies from the sentences of the first ``vocab_sentences / 2`` training
            pairs (``None``: all); see :func:`vocab_corpus`.
        config: the further ``ParaNMTConfig`` fields (pooling, scramble rate, dropout, LSTM options, ``extra``).
        distillation: the teacher whose distilled table initialises the ``subword`` components (``None``: none).
    """

    kind: str = "sp"
    combination: str = "concat"
    embedding_dim: int = 300
    token_type: str = "word"
    vocab_size: int | None = None
    min_count: int = 1
    lookup: str = "split"
    word_vectors: str | None = None
    vector_vocab_size: int = 0
    vocab_sentences: int | None = None
    config: dict[str, Any] = field(default_factory=dict)
    distillation: Distillation | None = None

    def build_options(self) -> dict[str, Any]:
        """The keywords of :func:`paranmt_hf.model.build.build_encoder` (after kind and sentences) this spec sets."""
        return {name: getattr(self, name) for name in BUILD_OPTIONS}


def build_initial_encoder(spec: ModelSpec, sentences: list[str], seed: int) -> Any:
    """The untrained ``ParaNMTEncoder`` of ``spec`` with vocabularies built from ``sentences``.

    With ``word_vectors``, word embeddings take the vectors' width (GloVe 6B 50d: 50), whatever ``embedding_dim``
    says; ``embedding_dim`` sizes the other components. With ``distillation`` the ``subword`` components start from
    the teacher's distilled table (:func:`paranmt_hf.model.distill.build_teacher_encoder`).
    """
    from ..model.build import build_encoder

    build, teacher_options = build_encoder, {}
    if spec.distillation is not None:  # tables distilled from a teacher
        from ..model.distill import build_teacher_encoder

        build, teacher_options = build_teacher_encoder, spec.distillation.options()
    return build(spec.kind, sentences, seed=seed, **spec.build_options(), **teacher_options, **spec.config)


def vocab_corpus(pairs: Any, limit: int | None = None) -> list[str]:
    """The sentences to build vocabularies from: both sides of the first ``ceil(limit / 2)`` pairs (all: ``None``).

    ``pairs`` (from :func:`~paranmt_hf.training.data.load_pairs`) is shuffled, so its first pairs are a uniform
    sample of the sources (with their repeats); ``limit`` caps the cost of building a vocabulary as sentencepiece's
    ``input_sentence_size`` does.
    """
    if limit is not None:
        if limit < 1:
            raise ValueError(f"vocab_sentences must be >= 1, got {limit}")
        pairs = pairs.select(range(min(len(pairs), -(-limit // 2))))
    return pairs["anchor"][:] + pairs["positive"][:]  # a column slice is a list at once; iterating it is 7x slower


def initial_encoder(spec: ModelSpec, pairs: Any, folder: Path, resume: bool, seed: int) -> Any:
    """The encoder a run starts from, kept in ``folder`` (the run's ``initial-model/``).

    A resumed run reloads the one its first start saved there; otherwise it is built from the training ``pairs``
    (:func:`build_initial_encoder`, vocabularies from :func:`vocab_corpus`) and saved there by the main
    process.
    """
    from ..model.encoder import ParaNMTEncoder

    if resume and (folder / "config.json").is_file():
        return ParaNMTEncoder.from_pretrained(folder)
    encoder = build_initial_encoder(spec, vocab_corpus(pairs, spec.vocab_sentences), seed)
    if is_main_process():
        encoder.save_pretrained(folder, sentence_transformers=False)
    return encoder

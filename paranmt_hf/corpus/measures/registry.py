"""The registry of per-pair measures: every column that annotates a pair and that a filter can threshold.

One :class:`MeasureSpec` per column in :data:`MEASURES`: its name, what it measures, its source, and
``compute(text_a, text_b, context) -> values`` over a batch (``text_a`` = the English reference, ``text_b`` = the
back-translation). ``corpus annotate`` and the filters compute columns through it. A measure needing a model takes
it from the :class:`MeasureContext`, which loads each model once, on first use. Columns only an earlier step gives
(``translation_cost``) are registered with ``compute=None`` and ``given_by``.

Choices where the papers are silent or differ (docs: "Make your own ParaNMT"):

* n-gram overlaps use ``nltk.word_tokenize`` of the lower-cased text, n-grams counted with repetition, shared /
  n-grams of the side with fewer; so ``trigram_overlap`` is exactly the ParaNMT/PRAS column.
* lengths are whitespace tokens, as the authors' scripts count them.
* BLEU is Nakov et al. (2012)'s smoothed sentence BLEU (:mod:`paranmt_hf.corpus.measures.bleu`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import option

Values = np.ndarray


@dataclass
class MeasureContext:
    """What some measures need, loaded once on first use (paths, Hub ids, or objects already loaded).

    Attributes:
        tokenizer: overlap / language-model tokenisation (:data:`~paranmt_hf.corpus.text.tokenizer_names.TOKENIZERS`):
            ``"nltk"`` (the papers'), ``"fast"`` or ``"whitespace"``.
        encoder: the model whose cosine is ``paraphrase_score`` (a paranmt_hf model folder or Hub id, or an object
            with ``encode(texts, batch_size=, normalize_embeddings=, show_progress_bar=)``).
        language_model: a KenLM model for ``lm_perplexity`` (folder from
            :func:`~paranmt_hf.corpus.measures.language_model.train_language_model`, ARPA / binary file, or a loaded
            :class:`~paranmt_hf.corpus.measures.language_model.NgramLanguageModel`).
        classifier: the reference classifier for ``reference_probability`` (folder or loaded
            :class:`~paranmt_hf.corpus.measures.reference_classifier.ReferenceClassifier`).
        langid_model: fastText language-ID model for ``english`` (default: the bundled lid.176.ftz).
        batch_size: encoder batch size.
        trust_remote_code: passed when loading the encoder.
    """

    tokenizer: str = "nltk"
    encoder: Any = None
    language_model: Any = None
    classifier: Any = None
    langid_model: str | os.PathLike[str] | None = None
    batch_size: int = 1024
    trust_remote_code: bool = False
    _loaded: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def get(self, name: str) -> Any:
        """The loaded model ``name`` (``encoder``, ``language_model``, ``classifier`` or ``langid``)."""
        if name in self._loaded:
            return self._loaded[name]
        loader = _LOADERS.get(name)
        if loader is None:
            raise ValueError(f"unknown context item {name!r}; choose one of {tuple(_LOADERS)}")
        self._loaded[name] = loaded = loader(self)
        return loaded

    def model_paths(self) -> list[Any]:
        """The models given by path (folders or files: what no output may replace)."""
        return [self.encoder, self.language_model, self.classifier, self.langid_model]

    def has(self, name: str) -> bool:
        """Whether ``name`` can be loaded (it was given, or has a default)."""
        return name == "langid" or getattr(self, name, None) is not None

    def __getstate__(self) -> dict[str, Any]:  # worker processes load their own models
        state = dict(self.__dict__)
        state["_loaded"] = {}
        return state


def _given_or_loaded(item: str, what: str, measure: str, flag: tuple[str, str],
                     load: Callable[[MeasureContext, str | os.PathLike[str]], Any]) -> Callable[[MeasureContext], Any]:
    """The loader of context item ``item``: the object given, or ``load(context, path)`` for a path."""

    def loader(context: MeasureContext) -> Any:
        given = getattr(context, item)
        if given is None:
            raise ValueError(f"{measure} needs {what}: give it ({option(*flag)})")
        if not isinstance(given, (str, os.PathLike)):  # a loaded object (a str has an ``encode`` too)
            return given
        return load(context, given)

    return loader


def _encoder_from(context: MeasureContext, path: str | os.PathLike[str]) -> Any:
    from ...model.encoder import ParaNMTEncoder

    return ParaNMTEncoder.from_pretrained(path, trust_remote_code=context.trust_remote_code)


def _language_model_from(context: MeasureContext, path: str | os.PathLike[str]) -> Any:
    from .language_model import NgramLanguageModel

    return NgramLanguageModel(path, tokenizer=context.tokenizer)


def _classifier_from(context: MeasureContext, path: str | os.PathLike[str]) -> Any:
    from .reference_classifier import ReferenceClassifier

    return ReferenceClassifier.load(path)


def _load_langid(context: MeasureContext) -> Any:
    from ..text.langid import LanguageIdentifier

    return LanguageIdentifier(context.langid_model)


_LOADERS: dict[str, Callable[[MeasureContext], Any]] = {
    "encoder": _given_or_loaded("encoder", "a model (the paraphrase score is its cosine)", "paraphrase_score",
                                ("--model in annotate, --score-model in filter, --scorer in make", "encoder="),
                                _encoder_from),
    "language_model": _given_or_loaded("language_model", "a KenLM language model", "lm_perplexity",
                                       ("--language-model", "language_model="), _language_model_from),
    "classifier": _given_or_loaded("classifier", "a reference classifier", "reference_probability",
                                   ("--classifier", "classifier="), _classifier_from),
    "langid": _load_langid}


# --- the computations ------------------------------------------------------------------------------------------------

def _word_counts(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter((len(t.split()) for t in texts), dtype=np.float64, count=len(texts))


def cosine_scores(encoder: Any, texts_a: Sequence[str], texts_b: Sequence[str], batch_size: int = 1024,
                  **encode_kwargs: Any) -> np.ndarray:
    """Row-wise cosine similarity of the embeddings of ``texts_a[i]`` and ``texts_b[i]`` (0 for a zero vector)."""
    if len(texts_a) != len(texts_b):
        raise ValueError(f"need as many first as second sides ({len(texts_a)} vs {len(texts_b)})")
    if not len(texts_a):
        return np.zeros(0, dtype=np.float32)
    emb_a = encoder.encode(list(texts_a), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False,
                           **encode_kwargs)
    emb_b = encoder.encode(list(texts_b), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False,
                           **encode_kwargs)
    return np.einsum("ij,ij->i", np.asarray(emb_a, np.float32), np.asarray(emb_b, np.float32))


def _paraphrase_score(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    encoder = context.get("encoder")
    extra = {"num_processes": 1} if _takes_num_processes(encoder) else {}
    return cosine_scores(encoder, a, b, context.batch_size, **extra).astype(np.float64)


def _takes_num_processes(encoder: Any) -> bool:
    import inspect

    try:
        return "num_processes" in inspect.signature(encoder.encode).parameters
    except (TypeError, ValueError):
        return False


def _overlap(n: int) -> Callable[[Sequence[str], Sequence[str], MeasureContext], Values]:
    def compute(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
        from .overlap import overlaps_many

        return np.asarray(overlaps_many(a, b, context.tokenizer, n), dtype=np.float64)

    return compute


def _bleu(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    from .bleu import sentence_bleu_many

    return sentence_bleu_many(a, b)


def _translation_length(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    return _word_counts(b)


def _reference_length(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    return _word_counts(a)


def _mean_length(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    return (_word_counts(a) + _word_counts(b)) / 2


def _max_length(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    return np.maximum(_word_counts(a), _word_counts(b))


def _lm_perplexity(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    return context.get("language_model").perplexity_many(b)


def _reference_probability(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    return context.get("classifier").reference_probability(b)


def _english(a: Sequence[str], b: Sequence[str], context: MeasureContext) -> Values:
    if not len(a):
        return np.zeros(0, dtype=np.float64)
    english = context.get("langid").is_english_many([*a, *b])
    return (english[: len(a)] & english[len(a) :]).astype(np.float64)


# --- the registry ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MeasureSpec:
    """One per-pair column.

    Attributes:
        name: the column name.
        description: what it measures, its range and direction (for ``--help``, cards and READMEs).
        source: where the definition comes from.
        reason: the short label a filter counts a pair under when this column drops it (``score``, ``length``,
            ``overlap``, ...).
        compute: ``(text_a, text_b, context) -> values`` (one float per pair); None for a column only an earlier
            step gives (see ``given_by``).
        needs: the :class:`MeasureContext` items it loads (``encoder``, ``language_model``, ``classifier``,
            ``langid``).
        cost: relative cost per pair (a filter computes cheap columns first and the costly ones only for the pairs
            still in).
        given_by: for ``compute=None``: the step that writes the column.
    """

    name: str
    description: str
    source: str
    reason: str
    compute: Callable[[Sequence[str], Sequence[str], MeasureContext], Values] | None
    needs: tuple[str, ...] = ()
    cost: int = 1
    given_by: str | None = None

    def __call__(self, text_a: Sequence[str], text_b: Sequence[str], context: MeasureContext | None = None) -> Values:
        """The column over a batch (float64 array)."""
        if len(text_a) != len(text_b):
            raise ValueError(f"need as many first as second sides ({len(text_a)} vs {len(text_b)})")
        if self.compute is None:
            raise ValueError(f"{self.name} cannot be computed from the texts: it comes from {self.given_by}")
        values = np.asarray(self.compute(text_a, text_b, context or MeasureContext()), dtype=np.float64)
        if values.shape != (len(text_a),):
            raise RuntimeError(f"{self.name} gave {values.shape} values for {len(text_a)} pairs")
        return values


MEASURES: dict[str, MeasureSpec] = {spec.name: spec for spec in (
    MeasureSpec("paraphrase_score", "cosine of the two sides' embeddings under a paranmt_hf model, in [-1, 1]; "
                "higher = closer in meaning", "ParaNMT-50M §3.1 (their model: PARAGRAM-PHRASE averaging)",
                "score", _paraphrase_score, ("encoder",), cost=50),
    MeasureSpec("translation_length", "whitespace tokens of the translation (second side)", "EMNLP 2017 §5.5",
                "length", _translation_length, cost=0),
    MeasureSpec("reference_length", "whitespace tokens of the reference (first side)", "-", "length",
                _reference_length, cost=0),
    MeasureSpec("mean_length", "mean whitespace tokens of the two sides", "PRAS extract_data.py (5-40)", "length",
                _mean_length, cost=0),
    MeasureSpec("max_length", "whitespace tokens of the longer side", "ParaNMT-50M §5.4 (both sides <= 30)", "length",
                _max_length, cost=0),
    MeasureSpec("unigram_overlap", "shared unigrams / unigrams of the side with fewer (tokens with repetition, "
                "lower-cased nltk tokens), in [0, 1]; higher = less diverse", "EMNLP 2017 §5.7", "overlap",
                _overlap(1), cost=5),
    MeasureSpec("bigram_overlap", "shared bigrams / bigrams of the side with fewer, as unigram_overlap",
                "EMNLP 2017 §5.7", "overlap", _overlap(2), cost=5),
    MeasureSpec("trigram_overlap", "shared trigrams / trigrams of the side with fewer, as unigram_overlap (the "
                "ParaNMT-50M and PRAS column)", "EMNLP 2017 §5.7; ParaNMT-50M §5.4; PRAS §5.1", "overlap",
                _overlap(3), cost=5),
    MeasureSpec("bleu", "smoothed sentence BLEU of the translation against the reference (Nakov et al. 2012: +1 on "
                "every n-gram precision, n = 1..4, and on the reference length; sacrebleu 13a tokens, lower-cased), "
                "in [0, 1]; higher = less diverse", "EMNLP 2017 §5.7", "bleu", _bleu, cost=20),
    MeasureSpec("translation_cost", "negative log-likelihood of the translation per target token under the NMT "
                "model; lower = more confident", "EMNLP 2017 §5.6", "cost", None,
                given_by="`paranmt-hf corpus backtranslate` (its cost column)"),
    MeasureSpec("lm_perplexity", "perplexity of the translation under an n-gram language model of English "
                "references (KenLM; </s> counted); lower = more fluent", "EMNLP 2017 §5.6", "perplexity",
                _lm_perplexity, ("language_model",), cost=10),
    MeasureSpec("reference_probability", "P(reference) of the translation under a reference-vs-translation "
                "classifier trained on the bitext, in [0, 1]; higher = more human-like", "EMNLP 2017 §5.6.1",
                "classifier", _reference_probability, ("classifier",), cost=10),
    MeasureSpec("english", "1 when fastText lid.176's top label of both sides is English, else 0",
                "PRAS do_all.sh (fastText language ID)", "language", _english, ("langid",), cost=30),
)}
"""The one registry of per-pair columns, read by ``corpus annotate``, the filters and the results scripts."""


def get_measure(name: str) -> MeasureSpec:
    """The :class:`MeasureSpec` called ``name`` (a ValueError naming the choices otherwise)."""
    try:
        return MEASURES[name]
    except KeyError:
        raise ValueError(f"unknown measure {name!r}; choose one of {tuple(MEASURES)}") from None


def compute_measures(names: Iterable[str], text_a: Sequence[str], text_b: Sequence[str],
                     context: MeasureContext | None = None,
                     given: Mapping[str, Sequence[float | None]] | None = None) -> dict[str, Values]:
    """The columns ``names`` for a batch; values in ``given`` are kept and only their None entries computed."""
    context = context or MeasureContext()
    out: dict[str, Values] = {}
    for name in names:
        spec = get_measure(name)
        have = None if given is None else given.get(name)
        if have is None:
            out[name] = spec(text_a, text_b, context)
            continue
        values = np.array([np.nan if v is None else v for v in have], dtype=np.float64)
        todo = [i for i, v in enumerate(have) if v is None]
        if todo:
            values[todo] = spec([text_a[i] for i in todo], [text_b[i] for i in todo], context)
        out[name] = values
    return out

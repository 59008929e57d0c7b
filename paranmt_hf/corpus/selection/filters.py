"""The training-data filters: thresholds on the per-pair columns.

A filter is a :class:`ThresholdFilter`: inclusive bounds ``(low, high)`` per column of
:data:`~paranmt_hf.corpus.measures.registry.MEASURES` (None = open), optionally followed by seeded sampling. The
papers' filters are presets: :class:`PRASFilter` (PRAS's ``extract_data.py``) and :class:`ACL2018Filter`
(ParaNMT-50M §5.4); EMNLP 2017's filters are bounds on their columns. :data:`FILTERS` names them for the
``filtered`` config, ``corpus filter`` and ``export``.

``select`` takes the columns of a batch and returns a :class:`Selection`: which pairs pass, the first test each
other pair fails (counted under its reason) and the columns computed on the way. Cheap tests run first, expensive
ones only on the pairs still in (a conjunction: the order changes no answer). Token lengths are whitespace tokens,
as ``extract_data.py`` counts them. Calling a filter on one ``full``-style example dict answers for that example.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import numpy as np

from ...data.configs import ConfigOptions
from ...data.reader import Opener
from ...data.records import FORMATS, iter_parsed
from ..errors import MissingScoreError
from ..measures.registry import MeasureContext, get_measure
from ..text.langid import LanguageIdentifier

KEPT, SAMPLED_OUT = "kept", "sampled out"
NO_SCORE_ADVICE = ("the filter needs a paraphrase score on every pair: add the scores with a model first (corpus "
                   "annotate), give the filter a score model, or choose a filter that needs no score (thresholds "
                   "on other columns)")
"""What to do when a filter needs the paraphrase score of pairs that have none (a :class:`MissingScoreError`)."""
# the labels of the papers' presets, in the order of their tests (a Selection's labels start with "kept")
REASONS = (KEPT, "score", "length", "overlap", "language", SAMPLED_OUT)
Bound = tuple[float | None, float | None]


@dataclass
class Selection:
    """The outcome of a filter on a batch.

    Attributes:
        keep: bool per pair.
        reason: per pair, an index into ``labels`` (0 = kept): the first test the pair failed.
        overlap: the trigram overlap of each pair where it was computed or given, else None.
        labels: the reason labels (``labels[0] == "kept"``).
        columns: every column the filter read or computed, one value per pair (None where not computed).
    """

    keep: np.ndarray
    reason: np.ndarray
    overlap: list[float | None]
    labels: tuple[str, ...] = REASONS
    columns: dict[str, list[float | None]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Pairs per reason (``kept`` included), reasons with no pair left out."""
        found = np.bincount(self.reason, minlength=len(self.labels))
        return {self.labels[i]: int(n) for i, n in enumerate(found) if n}


def _given_columns(scores: Sequence[float | None] | None, overlaps: Sequence[float | None] | None,
                   columns: Mapping[str, Sequence[float | None]] | None) -> dict[str, Sequence[float | None]]:
    given: dict[str, Sequence[float | None]] = dict(columns or {})
    if scores is not None:
        given.setdefault("paraphrase_score", scores)
    if overlaps is not None:
        given.setdefault("trigram_overlap", overlaps)
    return given


@dataclass
class ThresholdFilter:
    """Keep a pair when each column lies within its bounds: ``low <= value <= high`` (inclusive; None = open).

    A NaN value lies within no bounds, so the pair fails that column's test; a NaN bound is refused. Values the caller
    gives (``columns``, or ``scores`` / ``overlaps``) are used as they are; missing ones are computed through the
    registry with :attr:`context`, cheapest first, only for the pairs still in. With ``sample_rate`` < 1 each passing
    pair is then kept with that probability, a hash of ``seed`` and the pair (see :func:`sample_unit`).

    Example: E17's tuned length and unigram-overlap filters::

        ThresholdFilter({"translation_length": (0, 10)})
        ThresholdFilter({"unigram_overlap": (0.1, 0.7)})
    """

    bounds: dict[str, Bound]
    context: MeasureContext = field(default_factory=MeasureContext)
    sample_rate: float = 1.0
    seed: int = 1

    def __post_init__(self) -> None:
        for name, bound in self.bounds.items():
            get_measure(name)
            if len(bound) != 2:
                raise ValueError(f"the bounds of {name} must be (low, high), got {bound!r}")
            low, high = bound
            if any(side is not None and np.isnan(side) for side in bound):
                raise ValueError(f"the bounds of {name} must be numbers or None, got {bound!r}")
            if low is not None and high is not None and low > high:
                raise ValueError(f"the bounds of {name} are empty: {low} > {high}")
        if not 0.0 <= self.sample_rate <= 1.0:
            raise ValueError(f"sample_rate must be in [0, 1], got {self.sample_rate}")

    @property
    def labels(self) -> tuple[str, ...]:
        """The reason labels of this filter's :class:`Selection`."""
        reasons = dict.fromkeys(get_measure(name).reason for name in self.bounds)
        return (KEPT, *reasons, *((SAMPLED_OUT,) if self.sample_rate < 1.0 else ()))

    # what the corpus tools look at to warm a filter up before forking workers
    @property
    def tokenizer(self) -> str | None:
        """The overlap tokenizer, when an overlap column may be computed."""
        overlaps = {"unigram_overlap", "bigram_overlap", "trigram_overlap", "lm_perplexity"}
        return self.context.tokenizer if overlaps & set(self.bounds) else None

    @property
    def require_english(self) -> bool:
        """Whether the ``english`` column is tested."""
        return "english" in self.bounds

    @property
    def langid(self) -> LanguageIdentifier:
        """The language identifier (loaded on first use)."""
        return self.context.get("langid")

    def setup(self) -> None:
        """Load every model the bounds need (before forking workers, so that they share them)."""
        for name in self.bounds:
            for item in get_measure(name).needs:
                self.context.get(item)

    def order(self, given: Mapping[str, Sequence[float | None]]) -> list[str]:
        """The tests in the order they run: by cost (a column given in full costs nothing), then as listed."""
        position = {name: i for i, name in enumerate(self.bounds)}

        def key(name: str) -> tuple[int, int]:
            have = given.get(name)
            complete = have is not None and not any(v is None for v in have)
            return (0 if complete else get_measure(name).cost, position[name])

        return sorted(self.bounds, key=key)

    def select(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None] | None = None,
               overlaps: Sequence[float | None] | None = None,
               columns: Mapping[str, Sequence[float | None]] | None = None) -> Selection:
        """The filter on a batch.

        Args:
            text_a: the first sides (the references).
            text_b: the second sides (the back-translations).
            scores: the ``paraphrase_score`` column when the data has it.
            overlaps: the ``trigram_overlap`` column when the data has it.
            columns: any other columns the data has (None entries are computed when a bound needs them).
        """
        n = len(text_a)
        if len(text_b) != n:
            raise ValueError(f"need as many first as second sides ({n} vs {len(text_b)})")
        given = _given_columns(scores, overlaps, columns)
        labels = self.labels
        code = {label: i for i, label in enumerate(labels)}
        reason = np.zeros(n, dtype=np.int8)
        seen: dict[str, list[float | None]] = {}
        for name in self.order(given):
            rows = np.flatnonzero(reason == 0)
            have = given.get(name)
            values: list[float | None] = [None] * n if have is None else list(have)
            todo = [int(i) for i in rows if values[i] is None]
            if todo:
                spec = get_measure(name)
                if spec.compute is None:
                    raise ValueError(f"the filter needs {name} on every pair: it comes from {spec.given_by}")
                if name == "paraphrase_score" and not self.context.has("encoder"):
                    raise MissingScoreError(NO_SCORE_ADVICE)
                computed = spec([text_a[i] for i in todo], [text_b[i] for i in todo], self.context)
                for i, value in zip(todo, computed.tolist(), strict=True):
                    values[i] = value
            seen[name] = values
            if not len(rows):
                continue
            tested = np.array([values[i] for i in rows], dtype=np.float64)
            low, high = self.bounds[name]
            out = np.isnan(tested)  # a NaN lies within no bounds (comparisons with NaN are all false)
            if low is not None:
                out |= tested < low
            if high is not None:
                out |= tested > high
            reason[rows[out]] = code[get_measure(name).reason]
        if self.sample_rate < 1.0:
            score = seen.get("paraphrase_score") or given.get("paraphrase_score")
            for i in np.flatnonzero(reason == 0):
                value = None if score is None or score[i] is None else float(score[i])
                if sample_unit(self.seed, text_a[i], text_b[i], value) >= self.sample_rate:
                    reason[i] = code[SAMPLED_OUT]
        overlap = seen.get("trigram_overlap")
        if overlap is None:
            overlap = [None] * n if given.get("trigram_overlap") is None else list(given["trigram_overlap"])
        return Selection(reason == 0, reason, overlap, labels, seen)

    def __call__(self, example: dict[str, Any]) -> bool:
        """Whether one ``full``-style example passes (fills in ``trigram_overlap`` when it was computed)."""
        selection = self.select(*_example_columns(example))
        if selection.overlap[0] is not None:
            example["trigram_overlap"] = selection.overlap[0]
        return bool(selection.keep[0])


def _example_columns(example: dict[str, Any]) -> tuple[list[str], list[str], list[float], list[float | None]]:
    return ([example["reference"]], [example["paraphrase"]], [example["paraphrase_score"]],
            [example.get("trigram_overlap")])


class _Preset:
    """A paper's filter: named parameters that make a :class:`ThresholdFilter` (rebuilt when they change)."""

    def threshold_filter(self) -> ThresholdFilter:  # pragma: no cover - abstract
        """The equivalent :class:`ThresholdFilter`."""
        raise NotImplementedError

    def _filter(self) -> ThresholdFilter:
        key = tuple((f.name, getattr(self, f.name)) for f in fields(self) if f.init)  # type: ignore[arg-type]
        cached = self.__dict__.get("_cached")
        if cached is None or cached[0] != key:
            cached = (key, self.threshold_filter())
            self.__dict__["_cached"] = cached
        return cached[1]

    @property
    def labels(self) -> tuple[str, ...]:
        """The reason labels of this filter's :class:`Selection`."""
        return self._filter().labels

    def setup(self) -> None:
        """Load what the tests need."""
        self._filter().setup()

    def select(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None] | None = None,
               overlaps: Sequence[float | None] | None = None,
               columns: Mapping[str, Sequence[float | None]] | None = None) -> Selection:
        """The filter on a batch (see :meth:`ThresholdFilter.select`)."""
        return self._filter().select(text_a, text_b, scores, overlaps, columns)

    def __call__(self, example: dict[str, Any]) -> bool:
        """Whether one ``full``-style example passes (fills in ``trigram_overlap`` when it was computed)."""
        return self._filter()(example)


@dataclass
class PRASFilter(_Preset):
    """"Paraphrastic Representations at Scale" training filter (``extract_data.py`` of the PRAS code).

    Keeps a pair when ``sim_low <= paraphrase_score <= sim_high``, ``min_mean_tokens <= (len(ref.split()) +
    len(para.split())) / 2 <= max_mean_tokens``, ``trigram_overlap <= max_overlap`` and (``require_english``) the
    top fastText lid.176 label of both sides is English. Defaults: the released English model's data (0.4, 1.0, 0.7,
    5, 40). The PRAS README's script example uses ``sim_low=0.7, max_overlap=0.5``. It is the
    :class:`ThresholdFilter` of :meth:`threshold_filter`.
    """

    sim_low: float = 0.4
    sim_high: float = 1.0
    max_overlap: float = 0.7
    min_mean_tokens: float = 5.0
    max_mean_tokens: float = 40.0
    require_english: bool = True
    langid_model: str | None = None
    tokenizer: str = "nltk"

    def threshold_filter(self) -> ThresholdFilter:
        """The same filter as thresholds on columns."""
        bounds: dict[str, Bound] = {"paraphrase_score": (self.sim_low, self.sim_high),
                                    "mean_length": (self.min_mean_tokens, self.max_mean_tokens),
                                    "trigram_overlap": (None, self.max_overlap)}
        if self.require_english:
            bounds["english"] = (1.0, None)
        return ThresholdFilter(bounds, MeasureContext(tokenizer=self.tokenizer, langid_model=self.langid_model))

    @property
    def langid(self) -> LanguageIdentifier:
        """The language identifier (loaded on first use)."""
        return self._filter().langid


def sample_unit(seed: int, text_a: str, text_b: str, score: float | None = None) -> float:
    """A uniform number in [0, 1) fixed by the seed and the line's content (the same line always draws the same)."""
    key = f"{seed}\t{text_a}\t{text_b}\t{score!r}"
    digest = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=8)
    return int.from_bytes(digest.digest(), "little") / 2.0**64


@dataclass
class ACL2018Filter(_Preset):
    """ParaNMT-50M (ACL 2018) §5.4 training-set recipe: top paraphrase-score folds, both sides ≤ ``max_tokens``.

    The paper ranks all pairs by paraphrase score, splits them into ``num_folds`` tenths (fold 1 = lowest), and
    samples 5M pairs from the top two folds whose sentences both have at most 30 tokens. ``min_score`` /
    ``max_score`` are the score bounds of the selected folds: give them, or let :func:`fold_bounds` compute them
    from the corpus (a first pass over the scores). ``sample_rate`` keeps each selected pair with that probability,
    e.g. ``5e6 / selected`` to draw the paper's 5M; the draw is a hash of ``seed`` and the line (texts and score),
    so it does not depend on the order, the batching or the sharding of the corpus.
    """

    min_score: float | None = None
    max_score: float | None = None
    folds: tuple[int, ...] = (9, 10)
    num_folds: int = 10
    max_tokens: int = 30
    sample_rate: float = 1.0
    seed: int = 1

    def threshold_filter(self) -> ThresholdFilter:
        """The same recipe as thresholds on columns (needs ``min_score``)."""
        if self.min_score is None:
            raise ValueError("ACL2018Filter needs min_score (compute it with fold_bounds())")
        return ThresholdFilter({"paraphrase_score": (self.min_score, self.max_score),
                                "max_length": (None, self.max_tokens)}, sample_rate=self.sample_rate, seed=self.seed)


def fold_bounds(scores: np.ndarray, folds: Iterable[int] = (9, 10), num_folds: int = 10) -> tuple[float, float]:
    """``(min_score, max_score)`` spanning the given 1-based folds of the scores ranked ascending.

    Fold ``i`` holds ranks ``[(i-1)/k, i/k)`` of the sorted scores; the bounds are the scores at the first rank of
    the lowest selected fold and the last rank of the highest one.

    Raises:
        ValueError: no scores, a fold out of range, or a NaN score (NaN has no rank; the corpus readers skip such
            lines as bad ones).
    """
    folds = sorted(folds)
    if not folds or folds[0] < 1 or folds[-1] > num_folds:
        raise ValueError(f"folds must be within 1..{num_folds}, got {folds}")
    ordered = np.asarray(scores, dtype=np.float64).copy()
    ordered.sort()
    if ordered.size == 0:
        raise ValueError("no scores to compute fold bounds from")
    if np.isnan(ordered[-1]):  # NaN sorts last
        raise ValueError(f"{int(np.isnan(ordered).sum())} of the {ordered.size} scores are NaN: fold bounds rank "
                         "real scores only")
    n = ordered.size
    lo_rank = (folds[0] - 1) * n // num_folds
    hi_rank = max(folds[-1] * n // num_folds - 1, lo_rank)
    return float(ordered[lo_rank]), float(ordered[hi_rank])


def corpus_fold_bounds(
    paths: Iterable[str | os.PathLike[str]],
    folds: Iterable[int] = (9, 10),
    num_folds: int = 10,
    member_pattern: str | None = None,
    opener: Opener = open,
) -> tuple[float, float]:
    """:func:`fold_bounds` over the scores of ``para-nmt-50m.txt``-format files.

    Holds every score as float64: 8 bytes per line, about 0.4 GB for the 51.4M lines of ParaNMT-50M.
    """
    chunks = [np.asarray(parsed.score, dtype=np.float64)
              for parsed in iter_parsed(paths, FORMATS["paranmt"], member_pattern=member_pattern, opener=opener)]
    scores = np.concatenate(chunks) if chunks else np.zeros(0)
    del chunks
    return fold_bounds(scores, folds, num_folds)


class RowFilter(Protocol):
    """What every filter does: decide on a batch of pairs (:class:`Selection`), and on one example dict."""

    def select(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None] | None = None,
               overlaps: Sequence[float | None] | None = None,
               columns: Mapping[str, Sequence[float | None]] | None = None) -> Selection:
        """The filter on a batch of pairs."""

    def __call__(self, example: dict[str, Any]) -> bool:
        """Whether one example passes."""


def _pras(options: ConfigOptions, paths: Sequence[str | os.PathLike[str]], member_pattern: str | None,
          opener: Opener) -> PRASFilter:
    given = {f.name: getattr(options, f.name) for f in fields(PRASFilter) if f.init
             and getattr(options, f.name, None) is not None}
    return PRASFilter(**given)


def _acl2018(options: ConfigOptions, paths: Sequence[str | os.PathLike[str]], member_pattern: str | None,
             opener: Opener) -> ACL2018Filter:
    low, high = options.min_score, options.max_score
    if low is None:
        low, high_auto = corpus_fold_bounds(paths, options.folds, options.num_folds, member_pattern=member_pattern,
                                            opener=opener)
        high = high if high is not None else high_auto
    return ACL2018Filter(low, high, tuple(options.folds), options.num_folds, options.max_tokens, options.sample_rate,
                         options.seed)


def _thresholds(options: ConfigOptions, paths: Sequence[str | os.PathLike[str]], member_pattern: str | None,
                opener: Opener) -> ThresholdFilter:
    if not options.bounds:
        raise ValueError("the thresholds filter needs bounds, e.g. bounds=(('unigram_overlap', 0.1, 0.7),) "
                         "(--bound unigram_overlap=0.1:0.7)")
    context = MeasureContext(tokenizer=options.tokenizer, encoder=options.score_model,
                             language_model=options.language_model, classifier=options.classifier,
                             langid_model=options.langid_model)
    return ThresholdFilter({name: (low, high) for name, low, high in options.bounds}, context, options.sample_rate,
                           options.seed)


def parse_bound(text: str) -> tuple[str, float | None, float | None]:
    """``"NAME=LOW:HIGH"`` -> ``(NAME, LOW, HIGH)``; an empty side is open (``"lm_perplexity=:100"``)."""
    name, sep, rest = text.partition("=")
    low, colon, high = rest.partition(":")
    if not sep or not colon:
        raise ValueError(f"a bound is NAME=LOW:HIGH (a side may be empty), got {text!r}")
    name = name.strip()
    get_measure(name)
    try:
        bound = (float(low) if low.strip() else None, float(high) if high.strip() else None)
    except ValueError:
        raise ValueError(f"a bound is NAME=LOW:HIGH with numbers, got {text!r}") from None
    return name, *bound


@dataclass(frozen=True)
class FilterSpec:
    """One named filter of the registry: how to make it from :class:`~paranmt_hf.data.configs.ConfigOptions`.

    Attributes:
        name: the name (``ConfigOptions.filter``, ``corpus filter --filter``, the builder's ``filter=``).
        description: one line for ``--help`` and dataset cards.
        make: ``(options, paths, member_pattern, opener) -> filter`` (``paths``: the corpus, for filters that need
            a first pass over it, such as the ACL-2018 fold bounds).
        options: the :class:`ConfigOptions` fields it reads (``--help`` and the export record list them).
        needs_corpus_pass: whether ``make`` reads the corpus when some options are not given.
    """

    name: str
    description: str
    make: Callable[..., RowFilter]
    options: tuple[str, ...]
    needs_corpus_pass: Callable[[ConfigOptions], bool] = lambda options: False


FILTERS: dict[str, FilterSpec] = {spec.name: spec for spec in (
    FilterSpec("pras", "Paraphrastic Representations at Scale: score in [sim_low, sim_high], mean length in "
               "[min_mean_tokens, max_mean_tokens], trigram overlap <= max_overlap, both sides English (lid.176)",
               _pras, ("sim_low", "sim_high", "max_overlap", "min_mean_tokens", "max_mean_tokens", "require_english",
                       "langid_model", "tokenizer")),
    FilterSpec("acl2018", "ParaNMT-50M (ACL 2018) §5.4: the top score folds (bounds from a first pass unless given), "
               "both sides <= max_tokens, optional seeded sampling",
               _acl2018, ("folds", "num_folds", "min_score", "max_score", "max_tokens", "sample_rate", "seed"),
               needs_corpus_pass=lambda options: options.min_score is None),
    FilterSpec("thresholds", "any columns of the measure registry within bounds (e.g. EMNLP 2017's: "
               "translation_length 0:10, unigram_overlap 0.1:0.7, lm_perplexity :100, reference_probability 0.5:), "
               "optional seeded sampling",
               _thresholds, ("bounds", "tokenizer", "score_model", "language_model", "classifier", "langid_model",
                             "sample_rate", "seed")),
)}
"""The one registry of corpus filters, read by the ``filtered`` builder config, ``corpus filter`` / ``export`` and the
corpus pipeline."""


def get_filter_spec(name: str) -> FilterSpec:
    """The :class:`FilterSpec` called ``name`` (a ValueError naming the choices otherwise)."""
    try:
        return FILTERS[name]
    except KeyError:
        raise ValueError(f"unknown filter {name!r}; choose one of {tuple(FILTERS)}") from None


def make_filter(options: ConfigOptions, paths: Sequence[str | os.PathLike[str]] = (),
                member_pattern: str | None = None, opener: Opener = open) -> RowFilter:
    """The filter ``options.filter`` names, made from the options (reading ``paths`` when it needs a corpus pass)."""
    return get_filter_spec(options.filter).make(options, paths, member_pattern, opener)

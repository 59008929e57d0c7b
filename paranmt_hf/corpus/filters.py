"""The papers' training-data filters, applied to whole batches of pairs (and, for reference, to one example).

:meth:`PRASFilter.select` / :meth:`ACL2018Filter.select` take the columns of a batch (first sides, second sides,
scores, optional precomputed overlaps) and return a :class:`Selection`: which pairs pass, the first test each other
pair fails (score, length, overlap, language, sampling) and the trigram overlaps computed on the way. Cheap tests
run first and the expensive ones only on the pairs still in (every filter is a conjunction, so the order changes
no answer). Token lengths are whitespace tokens, as ``extract_data.py`` counts them.

Calling a filter on one ``full``-style example dict (``reference``, ``paraphrase``, ``paraphrase_score``,
``reference_length``, ``paraphrase_length``, optional ``trigram_overlap``) answers for that example and fills in
its overlap, as the original per-line scripts did.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import numpy as np

from ..data.configs import ConfigOptions
from ..data.reader import Opener
from ..data.records import FORMATS, iter_parsed
from .langid import LanguageIdentifier
from .overlap import overlaps_many

# why a pair was dropped (index = Selection.reason code; 0 = kept)
REASONS = ("kept", "score", "length", "overlap", "language", "sampled out")
KEPT, SCORE, LENGTH, OVERLAP, LANGUAGE, SAMPLED = range(len(REASONS))


@dataclass
class Selection:
    """The outcome of a filter on a batch.

    ``keep`` (bool per pair), ``reason`` (index into :data:`REASONS`) and ``overlap`` (the trigram overlap of each
    pair where it was computed or given, else None).
    """

    keep: np.ndarray
    reason: np.ndarray
    overlap: list[float | None]

    def counts(self) -> dict[str, int]:
        """Pairs per reason (``kept`` included), reasons with no pair left out."""
        found = np.bincount(self.reason, minlength=len(REASONS))
        return {REASONS[i]: int(n) for i, n in enumerate(found) if n}


def _lengths(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter((len(t.split()) for t in texts), dtype=np.int64, count=len(texts))


def _counts(words: Sequence[list[str]]) -> np.ndarray:
    return np.fromiter(map(len, words), dtype=np.int64, count=len(words))


def _scores(scores: Sequence[float | None]) -> np.ndarray:
    if any(s is None for s in scores):
        raise ValueError("the filter needs a paraphrase score on every pair (add them with `corpus annotate`)")
    return np.asarray(scores, dtype=np.float64)


def _fill_overlaps(text_a: Sequence[str], text_b: Sequence[str], given: Sequence[float | None] | None,
                   rows: np.ndarray, tokenizer: str) -> list[float | None]:
    """Overlaps of ``rows`` (given ones kept, missing ones computed); None elsewhere."""
    out: list[float | None] = [None] * len(text_a) if given is None else list(given)
    todo = [int(i) for i in rows if out[i] is None]
    if todo:
        for i, value in zip(todo, overlaps_many([text_a[i] for i in todo], [text_b[i] for i in todo], tokenizer),
                            strict=True):
            out[i] = value
    return out


def _example_columns(example: dict[str, Any]) -> tuple[list[str], list[str], list[float], list[float | None]]:
    return ([example["reference"]], [example["paraphrase"]], [example["paraphrase_score"]],
            [example.get("trigram_overlap")])


@dataclass
class PRASFilter:
    """"Paraphrastic Representations at Scale" training filter (``extract_data.py`` of the PRAS code).

    Keeps a pair when ``sim_low <= paraphrase_score <= sim_high``, ``min_mean_tokens <= (len(ref.split()) +
    len(para.split())) / 2 <= max_mean_tokens``, ``trigram_overlap <= max_overlap`` and (``require_english``) the
    top fastText lid.176 label of both sides is English. Defaults: the released English model's data (0.4, 1.0, 0.7,
    5, 40). The PRAS README's script example uses ``sim_low=0.7, max_overlap=0.5``.
    """

    sim_low: float = 0.4
    sim_high: float = 1.0
    max_overlap: float = 0.7
    min_mean_tokens: float = 5.0
    max_mean_tokens: float = 40.0
    require_english: bool = True
    langid_model: str | None = None
    tokenizer: str = "nltk"
    _langid: LanguageIdentifier | None = field(default=None, init=False, repr=False)

    @property
    def langid(self) -> LanguageIdentifier:
        """The language identifier (loaded on first use)."""
        if self._langid is None:
            self._langid = LanguageIdentifier(self.langid_model)
        return self._langid

    def select(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None],
               overlaps: Sequence[float | None] | None = None) -> Selection:
        """The filter on a batch (``overlaps``: precomputed values, None entries are computed)."""
        n = len(text_a)
        score = _scores(scores)
        reason = np.zeros(n, dtype=np.int8)
        reason[~((self.sim_low <= score) & (score <= self.sim_high))] = SCORE
        rows = np.flatnonzero(reason == 0)
        words_a, words_b = [text_a[i].split() for i in rows], [text_b[i].split() for i in rows]  # (language test too)
        mean = (_counts(words_a) + _counts(words_b)) / 2
        reason[rows[(mean < self.min_mean_tokens) | (mean > self.max_mean_tokens)]] = LENGTH
        position = np.full(n, -1, dtype=np.int64)  # row -> its index in words_a / words_b
        position[rows] = np.arange(len(rows))
        rows = np.flatnonzero(reason == 0)
        overlap = _fill_overlaps(text_a, text_b, overlaps, rows, self.tokenizer)
        values = np.array([overlap[i] for i in rows], dtype=np.float64)
        reason[rows[values > self.max_overlap]] = OVERLAP
        if self.require_english:
            rows = np.flatnonzero(reason == 0)
            if len(rows):
                english = self.langid.is_english_many(
                    [text_a[i] for i in rows] + [text_b[i] for i in rows],
                    [words_a[j] for j in position[rows]] + [words_b[j] for j in position[rows]])
                reason[rows[~(english[: len(rows)] & english[len(rows) :])]] = LANGUAGE
        return Selection(reason == 0, reason, overlap)

    def __call__(self, example: dict[str, Any]) -> bool:
        """Whether ``example`` passes (fills in ``trigram_overlap`` when it was needed)."""
        selection = self.select(*_example_columns(example))
        if selection.overlap[0] is not None:
            example["trigram_overlap"] = selection.overlap[0]
        return bool(selection.keep[0])


def sample_unit(seed: int, text_a: str, text_b: str, score: float | None = None) -> float:
    """A uniform number in [0, 1) fixed by the seed and the line's content (the same line always draws the same)."""
    key = f"{seed}\t{text_a}\t{text_b}\t{score!r}"
    digest = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=8)
    return int.from_bytes(digest.digest(), "little") / 2.0**64


@dataclass
class ACL2018Filter:
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

    def select(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None],
               overlaps: Sequence[float | None] | None = None) -> Selection:
        """The recipe on a batch (needs ``min_score``; ``overlaps`` are passed through)."""
        if self.min_score is None:
            raise ValueError("ACL2018Filter needs min_score (compute it with fold_bounds())")
        score = _scores(scores)
        reason = np.zeros(len(text_a), dtype=np.int8)
        out = score < self.min_score
        if self.max_score is not None:
            out |= score > self.max_score
        reason[out] = SCORE
        long = (_lengths(text_a) > self.max_tokens) | (_lengths(text_b) > self.max_tokens)
        reason[(reason == 0) & long] = LENGTH
        if self.sample_rate < 1.0:
            for i in np.flatnonzero(reason == 0):
                if sample_unit(self.seed, text_a[i], text_b[i], float(score[i])) >= self.sample_rate:
                    reason[i] = SAMPLED
        given = [None] * len(text_a) if overlaps is None else list(overlaps)
        return Selection(reason == 0, reason, given)

    def __call__(self, example: dict[str, Any]) -> bool:
        """Whether ``example`` passes; needs ``min_score`` (see :func:`fold_bounds`)."""
        if self.min_score is None:
            raise ValueError("ACL2018Filter needs min_score (compute it with fold_bounds())")
        return bool(self.select(*_example_columns(example)).keep[0])


def fold_bounds(scores: np.ndarray, folds: Iterable[int] = (9, 10), num_folds: int = 10) -> tuple[float, float]:
    """``(min_score, max_score)`` spanning the given 1-based folds of the scores ranked ascending.

    Fold ``i`` holds ranks ``[(i-1)/k, i/k)`` of the sorted scores; the bounds are the scores at the first rank of
    the lowest selected fold and the last rank of the highest one.
    """
    folds = sorted(folds)
    if not folds or folds[0] < 1 or folds[-1] > num_folds:
        raise ValueError(f"folds must be within 1..{num_folds}, got {folds}")
    ordered = np.asarray(scores, dtype=np.float64).copy()
    ordered.sort()
    if ordered.size == 0:
        raise ValueError("no scores to compute fold bounds from")
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

    def select(self, text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None],
               overlaps: Sequence[float | None] | None = None) -> Selection:
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

"""The registry of the ParaNMT builder's configs: the one place that names them and says what each holds.

Every other module (the ``datasets`` builder, :func:`~paranmt_hf.load_paranmt`, the training sources, the
corpus tools' ``--config`` choices and the dataset card) reads :data:`CONFIGS`. :func:`bitext_sides` is the one rule
for recognising an X-English bitext file name (``en-xx`` / ``xx-en``, with ``-`` or ``_``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields
from typing import Any

from ..utils.imports import require


@dataclass(frozen=True)
class ConfigSpec:
    """One builder config.

    Attributes:
        name: config name.
        line_format: name of its line format in :data:`paranmt_hf.data.records.FORMATS`.
        columns: ``(column, dtype)`` of its rows (``datasets.Value`` dtypes).
        anchor / positive: the columns a training pair is made of.
        description: one line for the dataset card.
        default_member: glob of the zip member read by default (None: every member).
        default_source: whether the public ParaNMT-50M zip is read when no paths are given.
    """

    name: str
    line_format: str
    columns: tuple[tuple[str, str], ...]
    anchor: str
    positive: str
    description: str
    default_member: str | None = None
    default_source: bool = False

    def features(self) -> Any:
        """``datasets.Features`` of the rows."""
        datasets = require("datasets", "data")
        return datasets.Features({name: datasets.Value(dtype) for name, dtype in self.columns})

    @property
    def column_names(self) -> list[str]:
        """Column names, in order."""
        return [name for name, _ in self.columns]


_FULL_COLUMNS = (("reference", "string"), ("paraphrase", "string"), ("paraphrase_score", "float32"),
                 ("trigram_overlap", "float32"), ("reference_length", "int32"), ("paraphrase_length", "int32"))

CONFIGS: dict[str, ConfigSpec] = {spec.name: spec for spec in (
    ConfigSpec("full", "paranmt", _FULL_COLUMNS, "reference", "paraphrase",
               "all of para-nmt-50m.txt, with trigram overlap and token lengths", "*para-nmt-50m.txt", True),
    ConfigSpec("filtered", "paranmt", _FULL_COLUMNS, "reference", "paraphrase",
               "the training filter (see below)", "*para-nmt-50m.txt", True),
    ConfigSpec("processed-5m", "processed", (("reference", "string"), ("paraphrase", "string")),
               "reference", "paraphrase", "the filtered, tokenised 5M release (no score)",
               "*para-nmt-5m-processed.txt"),
    ConfigSpec("pairs", "pairs", (("text_a", "string"), ("text_b", "string"), ("score", "float32"),
                                  ("trigram_overlap", "float32")), "text_a", "text_b", "generic sentence pairs"),
    ConfigSpec("bitext", "bitext", (("english", "string"), ("foreign", "string"), ("lang", "string")),
               "english", "foreign", "X-English sentence pairs"),
)}
CONFIG_NAMES = tuple(CONFIGS)


def get_config(name: str) -> ConfigSpec:
    """The :class:`ConfigSpec` called ``name`` (ValueError naming the choices otherwise)."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise ValueError(f"unknown config {name!r}; choose one of {CONFIG_NAMES}") from None


_ENGLISH_FIRST = re.compile(r"(?:^|[^a-z])en[-_]([a-z]{2,3})(?:[^a-z]|$)")
_ENGLISH_SECOND = re.compile(r"(?:^|[^a-z])([a-z]{2,3})[-_]en(?:[^a-z]|$)")


def bitext_sides(path: str | os.PathLike[str]) -> tuple[bool, str] | None:
    """``(English is the first column, other language)`` from an ``en-xx`` / ``xx-en`` file name (``-`` or ``_``).

    None when the name says neither. ``tatoeba-en-es.tsv.gz`` -> ``(True, "es")``; ``de_en.txt`` -> ``(False, "de")``.
    """
    name = os.path.basename(os.fspath(path)).lower()
    first = _ENGLISH_FIRST.search(name)
    if first:
        return True, first.group(1)
    second = _ENGLISH_SECOND.search(name)
    if second:
        return False, second.group(1)
    return None


@dataclass
class ConfigOptions:
    """Parameters of the builder configs (all optional), shared by the builder and the corpus tools.

    Attributes:
        paths: file(s) or URL(s) to read (default: the ParaNMT-50M zip for ``full``/``filtered``).
        member_pattern: glob of the zip member(s) to read (default per config).
        strict: raise on the first bad line (``file:line``) instead of skipping and counting bad lines.
        tokenizer: tokenizer for trigram overlap, ``"nltk"`` (original) or ``"whitespace"``.
        filter: ``filtered`` only: a name in :data:`paranmt_hf.corpus.selection.filters.FILTERS`.
        sim_low, sim_high, max_overlap, min_mean_tokens, max_mean_tokens, require_english, langid_model: PRAS filter.
        folds, num_folds, min_score, max_score, max_tokens, sample_rate, seed: ACL-2018 recipe (and ``thresholds``).
        bounds: ``thresholds`` filter: ``((column, low, high), ...)`` (inclusive; None = open).
        score_model, language_model, classifier: ``thresholds`` filter: the models of columns the data lacks.
        compute_overlap: ``pairs`` only: compute trigram overlap when the file has no overlap column.
        lang, english_first: ``bitext`` only: the other language's code and whether English is the first column.
        signature: the local files' path, size and sha256, part of the cache key (set by ``load_paranmt``).
    """

    paths: str | list[str] | tuple[str, ...] | None = None
    member_pattern: str | None = None
    strict: bool = False
    tokenizer: str = "nltk"
    filter: str = "pras"
    sim_low: float | None = None
    sim_high: float | None = None
    max_overlap: float | None = None
    min_mean_tokens: float | None = None
    max_mean_tokens: float | None = None
    require_english: bool | None = None
    langid_model: str | None = None
    folds: tuple[int, ...] = (9, 10)
    num_folds: int = 10
    min_score: float | None = None
    max_score: float | None = None
    max_tokens: int = 30
    sample_rate: float = 1.0
    seed: int = 1
    bounds: tuple[tuple[str, float | None, float | None], ...] = ()
    score_model: str | None = None
    language_model: str | None = None
    classifier: str | None = None
    compute_overlap: bool = False
    lang: str | None = None
    english_first: bool | None = None
    signature: tuple[tuple[str, int, str], ...] = ()

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_object(cls, source: Any) -> ConfigOptions:
        """The options of any object with these attributes (e.g. the builder's config)."""
        return cls(**{name: getattr(source, name) for name in cls.names() if hasattr(source, name)})

"""Clean a bitext before it is back-translated: what a later filter would drop is never decoded.

Decoding is the expensive part, so :class:`SourceCleanStep` runs first and drops, counting each reason, lines
whose reference has too few or too many whitespace tokens, whose reference fastText does not label English, or
(optionally) whose source it does not label ``source_language``.

:meth:`SourceCleaning.for_filter` derives the bounds from the filter a command applies later (PRAS, ACL 2018,
``thresholds`` bounds on lengths and ``english``), so that exactly the lines it would drop whatever their
translations are dropped before decoding: the output is the same. Exact duplicate sources are decoded once in
the whole run (:mod:`paranmt_hf.corpus.translation.source_dedup`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ...data.configs import ConfigOptions, bitext_sides
from ..errors import CorpusError, option
from ..pipeline.steps import CorpusStep


@dataclass(frozen=True)
class SourceCleaning:
    """What is removed from a bitext before decoding (see the module docstring).

    Attributes:
        dedup: decode each distinct source of the run once (every reference still gets its candidates).
        min_reference_tokens / max_reference_tokens: bounds on the reference's whitespace tokens (None: open).
        reference_english: drop lines whose reference is not labelled English (fastText lid.176).
        source_language: the fastText code (``cs``, ``de``...) every source must be labelled with (None: no check).
        langid_model: a fastText language-ID model (default: the bundled lid.176.ftz).
    """

    dedup: bool = True
    min_reference_tokens: int | None = None
    max_reference_tokens: int | None = None
    reference_english: bool = False
    source_language: str | None = None
    langid_model: str | None = None

    def __post_init__(self) -> None:
        for name in ("min_reference_tokens", "max_reference_tokens"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")

    @property
    def drops_lines(self) -> bool:
        """Whether any line can be dropped (else the step passes every batch on untouched)."""
        return (self.min_reference_tokens is not None or self.max_reference_tokens is not None
                or self.reference_english or self.source_language is not None)

    @classmethod
    def off(cls) -> SourceCleaning:
        """Nothing removed, every source decoded (the behaviour before cleaning existed)."""
        return cls(dedup=False)

    @classmethod
    def for_filter(cls, options: ConfigOptions | None, **given: Any) -> SourceCleaning:
        """The cleaning that drops what the filter ``options`` describes would drop later whatever the translation.

        ``options`` None: no filter, nothing to drop (duplicates are still decoded once). ``given``: fields that
        override the derived ones (None values are ignored).
        """
        derived = cls() if options is None else _derive(options)
        return replace(derived, **{k: v for k, v in given.items() if v is not None})


def source_side(path: str, source_column: int | None) -> bool:
    """Whether the source (non-English) side is the first column of ``path``'s lines.

    Raises:
        CorpusError: neither ``source_column`` (1 or 2) nor an ``en-xx`` / ``xx-en`` file name says it.
    """
    if source_column is not None:
        if source_column not in (1, 2):
            raise CorpusError(f"{option('--source-column', 'source_column')} must be 1 or 2 (a bitext has two "
                              f"columns), got {source_column}")
        return source_column == 1
    sides = bitext_sides(path.split("::")[0])
    if sides is None:
        raise CorpusError(f"cannot tell which column of {path} is the non-English source: pass "
                          f"{option('--source-column 1|2', 'source_column=1|2')} (or name the file en-xx / xx-en)")
    return not sides[0]


def batch_sources(batch: Any, source_column: int | None) -> tuple[list[str], list[str]]:
    """``(sources, references)`` of a bitext batch."""
    parsed = batch.parsed
    if source_side(batch.source, source_column):
        return parsed.text_a, parsed.text_b
    return parsed.text_b, parsed.text_a


def _floor(value: float | None) -> int | None:
    return None if value is None else math.floor(value)


def _tighter(a: int | None, b: int | None, pick: Any) -> int | None:
    return b if a is None else a if b is None else pick(a, b)


def _derive(options: ConfigOptions) -> SourceCleaning:
    from ..selection.filters import PRASFilter

    lows: list[int] = []
    highs: list[int | None] = []
    english = False
    if options.filter == "pras":
        mean = options.max_mean_tokens if options.max_mean_tokens is not None else PRASFilter.max_mean_tokens
        highs.append(_floor(2 * mean - 1))  # the paraphrase has at least one token
        english = options.require_english if options.require_english is not None else PRASFilter.require_english
    elif options.filter == "acl2018":
        highs.append(options.max_tokens)
    elif options.filter == "thresholds":
        for name, low, high in options.bounds:
            if name == "reference_length":
                if low is not None:
                    lows.append(math.ceil(low))
                highs.append(_floor(high))
            elif name == "max_length":
                highs.append(_floor(high))
            elif name == "mean_length" and high is not None:
                highs.append(_floor(2 * high - 1))
            elif name == "english" and low is not None and low > 0:
                english = True
    high: int | None = None
    for value in highs:
        high = _tighter(high, value, min)
    return SourceCleaning(min_reference_tokens=max(lows) if lows else None, max_reference_tokens=high,
                          reference_english=bool(english),
                          langid_model=options.langid_model if english else None)


def default_cleaning() -> SourceCleaning:
    """The cleaning of ``corpus backtranslate``, whose pairs are filtered later by another command.

    The reference bound of the default filter of ``corpus filter`` (PRAS: a reference of more than
    ``2 * max_mean_tokens - 1`` tokens is dropped whatever its paraphrase); no language check (PRAS's English test
    is made on the pairs, where a mislabelled short reference can be seen).
    """
    return replace(SourceCleaning.for_filter(ConfigOptions(filter="pras")), reference_english=False,
                   langid_model=None)


def resolve_cleaning(cleaning: SourceCleaning | Mapping[str, Any] | bool | None,
                     default: SourceCleaning) -> SourceCleaning:
    """The cleaning a command runs, from its ``cleaning`` argument and its ``default``.

    None or True: the ``default``; False: nothing removed (:meth:`SourceCleaning.off`); a mapping of
    :class:`SourceCleaning` fields: the ``default`` with those fields changed (None values ignored; ``langid_model``
    alone only changes the model of the checks the cleaning makes); a :class:`SourceCleaning`: as given.

    Raises:
        ValueError: a mapping key that is not a :class:`SourceCleaning` field.
    """
    if cleaning is None or cleaning is True:
        return default
    if cleaning is False:
        return SourceCleaning.off()
    if isinstance(cleaning, SourceCleaning):
        return cleaning
    known = {f.name for f in fields(SourceCleaning)}
    if not isinstance(cleaning, Mapping):
        raise ValueError(f"cleaning must be a SourceCleaning, a mapping of its fields ({', '.join(sorted(known))}), "
                         f"True, False or None, got {cleaning!r}")
    unknown = sorted(set(cleaning) - known)
    if unknown:
        raise ValueError(f"unknown source cleaning setting(s) {unknown}; choose from {sorted(known)}")
    out = replace(default, **{k: v for k, v in cleaning.items() if v is not None})
    if not (out.reference_english or out.source_language):  # no language check: the model is not part of the run
        out = replace(out, langid_model=None)
    return out


class SourceCleanStep(CorpusStep):
    """Drop the bitext lines :class:`SourceCleaning` removes, before the back-translation step (counted).

    Args:
        cleaning: what to remove.
        source_column: 1 or 2, the non-English column (None: from the file names, as the back-translation).
        counted: add the counts to the task's statistics (False in the stages that read the bitext again).
    """

    name = "clean sources"
    type = "🧹 - CLEAN"

    def __init__(self, cleaning: SourceCleaning, source_column: int | None = None, counted: bool = True) -> None:
        super().__init__()
        self.cleaning, self.source_column, self.counted = cleaning, source_column, counted

    def setup(self, rank: int, world_size: int) -> None:
        """Load the language identifier when a check needs one."""
        c = self.cleaning
        self._langid = None
        if c.reference_english or c.source_language is not None:
            from ..text.langid import LanguageIdentifier

            self._langid = LanguageIdentifier(c.langid_model)

    def process(self, batch: Any) -> Any:
        """The batch without the removed lines."""
        c = self.cleaning
        if not c.drops_lines or not len(batch):
            return batch
        sources, references = batch_sources(batch, self.source_column)
        keep = list(range(len(sources)))
        counts: dict[str, int] = {}

        def drop(reason: str, bad: set[int]) -> None:
            nonlocal keep
            if bad:
                counts[reason] = counts.get(reason, 0) + len(bad)
                keep = [i for i in keep if i not in bad]

        if c.min_reference_tokens is not None or c.max_reference_tokens is not None:
            low, high = c.min_reference_tokens, c.max_reference_tokens
            lengths = {i: len(references[i].split()) for i in keep}
            drop(f"references under {low} tokens (not decoded)",
                 {i for i, n in lengths.items() if low is not None and n < low})
            drop(f"references over {high} tokens (not decoded)",
                 {i for i, n in lengths.items() if high is not None and n > high})
        if c.reference_english and keep:
            english = self._langid.is_english_many([references[i] for i in keep])
            drop("references not English (not decoded)", {i for i, ok in zip(keep, english, strict=True) if not ok})
        if c.source_language is not None and keep:
            labels = self._langid.labels_many([sources[i] for i in keep])
            drop(f"sources not {c.source_language} (not decoded)",
                 {i for i, label in zip(keep, labels, strict=True) if label != c.source_language})
        if len(keep) < len(sources):
            batch.keep(keep)
        if self.counted:
            self.count(counts)
        return batch

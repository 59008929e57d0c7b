"""English-English paraphrase pairs pivoted through bitext: English translations of one foreign sentence.

Tatoeba-style bitext often holds several English translations of one foreign sentence ("I am fine." / "I'm doing
well." for one Spanish sentence). Every two of them that differ (case- and whitespace-insensitively) make a paraphrase
pair, emitted once however many languages pivot it. This is pivoting (Bannard & Callison-Burch, 2005) at the
sentence level, a cheap cousin of the back-translation that built ParaNMT-50M.

Groups are kept in memory (one entry per distinct foreign sentence: fine for bitext of a few million lines).
Output order is deterministic: groups in first-seen order, pairs in the order their sentences were first seen.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


def _key(text: str) -> str:
    return " ".join(text.split()).lower()


@dataclass
class PivotStats:
    """Counts of a pivoting run."""

    bitext_pairs: int = 0
    groups: int = 0  # foreign sentences with at least two distinct English translations
    pairs: int = 0
    capped_groups: int = 0  # groups larger than ``max_group`` (only their first ``max_group`` sentences pair up)
    duplicates: int = 0  # pairs already emitted through another foreign sentence (skipped)


def pivot_groups(
    bitext: Iterable[tuple[str, str, str]], max_group: int = 10, stats: PivotStats | None = None
) -> Iterator[tuple[str, str]]:
    """English paraphrase pairs from ``(language, english, foreign)`` triples.

    Args:
        bitext: translation pairs with their language code; a foreign sentence groups only with its own language.
        max_group: pair at most this many distinct English sentences per foreign sentence (k sentences give
            k(k-1)/2 pairs), keeping the first seen.
        stats: filled with counts when given.
    """
    if max_group < 2:
        raise ValueError(f"max_group must be >= 2, got {max_group}")
    stats = stats if stats is not None else PivotStats()
    groups: dict[tuple[str, str], dict[str, str]] = {}
    for lang, english, foreign in bitext:
        stats.bitext_pairs += 1
        if not english.strip() or not foreign.strip():
            continue
        members = groups.setdefault((lang, _key(foreign)), {})
        members.setdefault(_key(english), english.strip())
    seen: set[tuple[str, str]] = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        stats.groups += 1
        keys = list(members)
        if len(keys) > max_group:
            stats.capped_groups += 1
            keys = keys[:max_group]
        for a, b in itertools.combinations(keys, 2):
            pair = (a, b) if a < b else (b, a)
            if pair in seen:  # the same two sentences pivoted through another language
                stats.duplicates += 1
                continue
            seen.add(pair)
            stats.pairs += 1
            yield members[a], members[b]


def pivot_files(
    paths: Iterable[str | os.PathLike[str]],
    max_group: int = 10,
    stats: PivotStats | None = None,
    progress: bool = False,
    **bitext_options: Any,
) -> Iterator[tuple[str, str]]:
    """:func:`pivot_groups` over X-English bitext files read as the ``bitext`` builder config reads them.

    One language per file; which side is English comes from the ``en-xx`` / ``xx-en`` file name or
    ``english_first=``. ``progress`` shows a bar per file.
    """
    from ...data.configs import ConfigOptions
    from ...data.reader import input_bytes
    from ...data.records import iter_parsed
    from ..pipeline.progress import Progress
    from .rows import RowMaker

    def triples() -> Iterator[tuple[str, str, str]]:
        for index, path in enumerate(paths):
            rows = RowMaker("bitext", ConfigOptions(**bitext_options), [os.fspath(path)])
            bar = Progress(input_bytes([path]), f"pivot {os.path.basename(os.fspath(path))}", progress)
            try:
                for parsed in iter_parsed([path], "bitext"):
                    columns = rows.columns(parsed)
                    lang = f"{index}:{rows.lang}"
                    for english, foreign in zip(columns["english"], columns["foreign"], strict=True):
                        yield lang, english, foreign
                    bar.update(len(parsed) + parsed.report.total_bad, parsed.position)
            finally:
                bar.close()

    return pivot_groups(triples(), max_group=max_group, stats=stats)

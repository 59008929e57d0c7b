"""Parse tab-separated pair lines, skipping (and counting) or rejecting bad lines.

A line is bad when it is not valid UTF-8, has the wrong number of columns, has an empty (or all-whitespace) text
side, or has a score that is not a finite number. Everything else is valid and is yielded unchanged (only the line
ending is removed). By default bad lines are skipped, counted by reason, and summarised in one warning when the file
has been read; with ``strict=True`` the first bad line raises :class:`BadLineError` naming ``file:line``.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .reader import Opener, iter_raw_lines

logger = logging.getLogger("paranmt_hf.corpus")


class BadLineError(ValueError):
    """A malformed line in strict mode; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class LineFormat:
    """Column layout of a pair file.

    Attributes:
        name: format name.
        min_columns / max_columns: allowed number of tab-separated columns.
        score_column: 0-based index of the optional numeric score column (required when < min_columns).
        overlap_column: 0-based index of an optional numeric trigram-overlap column.
    """

    name: str
    min_columns: int
    max_columns: int
    score_column: int | None = None
    overlap_column: int | None = None


FORMATS: dict[str, LineFormat] = {
    # para-nmt-50m.txt: reference \t back-translation \t paraphrase score
    "paranmt": LineFormat("paranmt", 3, 3, score_column=2),
    # para-nmt-5m-processed.txt: reference \t back-translation (tokenised, lower-cased)
    "processed": LineFormat("processed", 2, 2),
    # any pair file: text_a \t text_b [\t score [\t trigram_overlap]]
    "pairs": LineFormat("pairs", 2, 4, score_column=2, overlap_column=3),
    # X-English bitext: two sides, one of them English
    "bitext": LineFormat("bitext", 2, 2),
}


@dataclass
class BadLineReport:
    """Counts of good and bad lines, bad ones by reason, with the first few ``file:line: reason`` examples."""

    good: int = 0
    bad: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    max_examples: int = 5

    @property
    def total_bad(self) -> int:
        """Number of bad lines."""
        return sum(self.bad.values())

    def record(self, location: str, reason: str, detail: str = "") -> None:
        """Count one bad line."""
        self.bad[reason] += 1
        if len(self.examples) < self.max_examples:
            self.examples.append(f"{location}: {reason}" + (f" ({detail})" if detail else ""))

    def summary(self) -> str:
        """One-line summary of the bad lines."""
        reasons = ", ".join(f"{count} {reason}" for reason, count in self.bad.most_common())
        return (
            f"skipped {self.total_bad} bad line(s) of {self.good + self.total_bad} ({reasons}); first: "
            + "; ".join(self.examples)
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly counts."""
        return {"good": self.good, "bad": self.total_bad, "by_reason": dict(self.bad), "examples": self.examples}


def _number(text: str, what: str) -> float | tuple[str, str]:
    try:
        value = float(text)
    except ValueError:
        return f"non-numeric {what}", repr(text[:40])
    if not math.isfinite(value):
        return f"NaN or infinite {what}", repr(text)
    return value


def parse_line(raw: bytes, fmt: LineFormat) -> dict[str, Any] | tuple[str, str]:
    """Parse one raw line into ``{text_a, text_b, score, overlap}``, or return ``(reason, detail)`` when it is bad."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return "invalid UTF-8", f"byte {err.start}"
    line = line.rstrip("\n")
    if line.endswith("\r"):
        line = line[:-1]
    fields = line.split("\t")
    if not (fmt.min_columns <= len(fields) <= fmt.max_columns):
        if not line.strip():
            return "empty line", ""
        expected = f"{fmt.min_columns}" + (f"-{fmt.max_columns}" if fmt.max_columns != fmt.min_columns else "")
        reason = "missing column" if len(fields) < fmt.min_columns else "extra column"
        return reason, f"{len(fields)} column(s), expected {expected}"
    if not fields[0].strip() or not fields[1].strip():
        return "empty side", "column 1" if not fields[0].strip() else "column 2"
    record: dict[str, Any] = {"text_a": fields[0], "text_b": fields[1], "score": None, "overlap": None}
    for key, column in (("score", fmt.score_column), ("overlap", fmt.overlap_column)):
        if column is not None and column < len(fields):
            value = _number(fields[column], key)
            if isinstance(value, tuple):
                return value
            record[key] = value
    return record


def iter_records(
    paths: Iterable[str | os.PathLike[str]],
    fmt: LineFormat | str,
    strict: bool = False,
    member_pattern: str | None = None,
    opener: Opener = open,
    report: BadLineReport | None = None,
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Yield ``(source, line_number, record)`` for every valid line of ``paths``.

    Args:
        paths: files (plain, .gz or .zip) read in order.
        fmt: a :class:`LineFormat` or a name in :data:`FORMATS`.
        strict: raise :class:`BadLineError` at the first bad line instead of skipping it.
        member_pattern: glob selecting zip members.
        opener: binary ``open`` (datasets passes its streaming-aware one).
        report: collects the counts (a new one if None); a summary warning is logged at the end when lines were bad.
    """
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    report = report if report is not None else BadLineReport()
    for path in paths:
        for source, number, raw in iter_raw_lines(path, member_pattern=member_pattern, opener=opener):
            parsed = parse_line(raw, fmt)
            if isinstance(parsed, tuple):
                reason, detail = parsed
                if strict:
                    raise BadLineError(f"{source}:{number}: {reason}" + (f" ({detail})" if detail else ""))
                report.record(f"{source}:{number}", reason, detail)
                continue
            report.good += 1
            yield source, number, parsed
    if report.total_bad:
        logger.warning("%s", report.summary())

"""Parse tab-separated pair lines, skipping (and counting) or rejecting bad lines.

A line is bad when it is not valid UTF-8, holds a NUL byte, is longer than the reader's bound (``line too long``:
the reader never holds it, :data:`~paranmt_hf.data.reader.MAX_LINE_BYTES`), has the wrong number of columns, has
an empty (or all-whitespace) text side, or has a score that is not a finite number. Everything else is valid and is
kept unchanged (only the line ending is removed). By default bad lines are skipped, counted by reason, and
summarised in one warning when the file has been read; with ``strict=True`` the first bad line raises
:class:`BadLineError` naming ``file:line``.

:func:`parse_block` parses a whole :class:`~paranmt_hf.data.reader.Block` into columns (the fast path every reader
uses); :func:`iter_records` yields one record dict per valid line.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ParamSpec

from .reader import LONG_LINE_MARKER, Block, Opener, Shard, iter_blocks

P = ParamSpec("P")

logger = logging.getLogger("paranmt_hf.data")

_SURROGATE = re.compile("[\udc80-\udcff]")


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


def line_format(fmt: LineFormat | str) -> LineFormat:
    """A :class:`LineFormat` from itself or its name."""
    if isinstance(fmt, LineFormat):
        return fmt
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown line format {fmt!r}; choose one of {sorted(FORMATS)}") from None


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

    def merge(self, other: BadLineReport) -> None:
        """Add another report's counts (and examples, up to ``max_examples``)."""
        self.good += other.good
        self.bad.update(other.bad)
        self.examples.extend(other.examples[: max(self.max_examples - len(self.examples), 0)])

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


@dataclass
class ParsedBlock:
    """The valid lines of a block as columns (``score``/``overlap`` entries are None where the file has none).

    ``lines`` holds each valid line's text (without its line ending) and ``numbers`` its 1-based line number;
    ``position`` is the block's :attr:`~paranmt_hf.data.reader.Block.position` (for progress bars).
    """

    source: str
    text_a: list[str] = field(default_factory=list)
    text_b: list[str] = field(default_factory=list)
    score: list[float | None] = field(default_factory=list)
    overlap: list[float | None] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    report: BadLineReport = field(default_factory=BadLineReport)
    position: int = 0

    def __len__(self) -> int:
        return len(self.text_a)

    def records(self) -> Iterator[dict[str, Any]]:
        """One ``{text_a, text_b, score, overlap}`` dict per valid line."""
        for a, b, s, o in zip(self.text_a, self.text_b, self.score, self.overlap, strict=True):
            yield {"text_a": a, "text_b": b, "score": s, "overlap": o}


def _encoding_problem(line: str) -> tuple[str, str] | None:
    """``(reason, detail)`` when the line is not valid UTF-8, holds a NUL byte, or stands for a line too long."""
    if line.startswith(LONG_LINE_MARKER):
        return "line too long", line[len(LONG_LINE_MARKER) :]
    if _SURROGATE.search(line):
        return "invalid UTF-8", _bad_utf8_detail(line)
    if "\x00" in line:
        return "NUL byte", f"column {line[: line.index(chr(0))].count(chr(9)) + 1}"
    return None


def _column_problem(line: str, n: int, lo: int, hi: int) -> tuple[str, str]:
    """``(reason, detail)`` of a line with the wrong number of columns."""
    if not line.strip():
        return "empty line", ""
    expected = f"{lo}" + (f"-{hi}" if hi != lo else "")
    return ("missing column" if n < lo else "extra column"), f"{n} column(s), expected {expected}"


def _bad_utf8_detail(line: str) -> str:
    raw = line.encode("utf-8", "surrogateescape")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"byte {err.start}"
    return ""


def parse_block(block: Block, fmt: LineFormat | str, strict: bool = False) -> ParsedBlock:
    """Parse every line of ``block``; bad lines are counted in the result's report (``strict``: raise)."""
    fmt = line_format(fmt)
    text = block.data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    lines.pop()  # the block ends with a newline
    out = ParsedBlock(block.source, position=block.position)
    check_utf8 = _SURROGATE.search(text) is not None
    check_nul = "\x00" in text
    lo, hi = fmt.min_columns, fmt.max_columns
    score_col, overlap_col = fmt.score_column, fmt.overlap_column
    text_a, text_b, scores, overlaps = out.text_a, out.text_b, out.score, out.overlap
    kept, numbers = out.lines, out.numbers
    report = out.report

    def bad(index: int, reason: str, detail: str = "") -> None:
        location = f"{block.source}:{block.first_line + index}"
        if strict:
            raise BadLineError(f"{location}: {reason}" + (f" ({detail})" if detail else ""))
        report.record(location, reason, detail)

    strip_cr = "\r" in text
    first = block.first_line
    for index, line in enumerate(lines):
        if strip_cr and line and line[-1] == "\r":
            line = line[:-1]
        if (check_utf8 or check_nul) and (problem := _encoding_problem(line)):
            bad(index, *problem)
            continue
        fields = line.split("\t")
        n = len(fields)
        if n < lo or n > hi:
            bad(index, *_column_problem(line, n, lo, hi))
            continue
        a, b = fields[0], fields[1]
        if a.isspace() or b.isspace() or not a or not b:
            bad(index, "empty side", "column 1" if not a.strip() else "column 2")
            continue
        score = overlap = None
        if score_col is not None and score_col < n:
            try:
                score = float(fields[score_col])
            except ValueError:
                bad(index, "non-numeric score", repr(fields[score_col][:40]))
                continue
            if score - score != 0.0:  # NaN or infinite
                bad(index, "NaN or infinite score", repr(fields[score_col][:40]))
                continue
        if overlap_col is not None and overlap_col < n:
            try:
                overlap = float(fields[overlap_col])
            except ValueError:
                bad(index, "non-numeric overlap", repr(fields[overlap_col][:40]))
                continue
            if overlap - overlap != 0.0:
                bad(index, "NaN or infinite overlap", repr(fields[overlap_col][:40]))
                continue
        text_a.append(a)
        text_b.append(b)
        scores.append(score)
        overlaps.append(overlap)
        kept.append(line)
        numbers.append(first + index)
    report.good += len(text_a)
    return out


def iter_parsed(
    paths: Iterable[str | os.PathLike[str]],
    fmt: LineFormat | str,
    strict: bool = False,
    member_pattern: str | None = None,
    opener: Opener = open,
    report: BadLineReport | None = None,
    shard: Shard | None = None,
) -> Iterator[ParsedBlock]:
    """Parsed blocks of ``paths``; bad lines are counted in ``report`` and summarised in one warning at the end."""
    fmt = line_format(fmt)
    report = report if report is not None else BadLineReport()
    for block in iter_blocks(list(paths), member_pattern, opener, shard=shard):
        parsed = parse_block(block, fmt, strict)
        report.merge(parsed.report)
        yield parsed
    if report.total_bad:
        logger.warning("%s", report.summary())


def _each_record(
    read: Callable[P, Iterator[ParsedBlock]],
) -> Callable[P, Iterator[tuple[str, int, dict[str, Any]]]]:
    """A reader of parsed blocks turned into a reader of records, with the same arguments."""

    def records(*args: P.args, **kwargs: P.kwargs) -> Iterator[tuple[str, int, dict[str, Any]]]:
        for parsed in read(*args, **kwargs):
            for number, record in zip(parsed.numbers, parsed.records(), strict=True):
                yield parsed.source, number, record

    records.__signature__ = inspect.signature(read).replace(  # type: ignore[attr-defined]
        return_annotation="Iterator[tuple[str, int, dict[str, Any]]]")
    return records


iter_records = _each_record(iter_parsed)
iter_records.__name__ = iter_records.__qualname__ = "iter_records"
iter_records.__doc__ = """Yield ``(source, line_number, record)`` for every valid line of ``paths``.

Takes :func:`iter_parsed`'s arguments:
    paths: files (plain, .gz or .zip) read in order.
    fmt: a :class:`LineFormat` or a name in :data:`FORMATS`.
    strict: raise :class:`BadLineError` at the first bad line instead of skipping it.
    member_pattern: glob selecting zip members.
    opener: binary ``open`` (datasets passes its streaming-aware one).
    report: collects the counts (a new one if None); a summary warning is logged at the end when lines were bad.
    shard: read only this shard of the files' bytes.
"""

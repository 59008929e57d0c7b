r"""Pair files with named columns: a header line naming them, read and written by the corpus tools.

The para-nmt-50m.txt layout (``reference \\t paraphrase [\\t score [\\t overlap]]``) has no header: its columns are
known by position. Files with more columns (the back-translation output with its ``translation_cost``, an annotation
with the measures of :data:`paranmt_hf.corpus.measures.registry.MEASURES`) start with a header line naming every
column, e.g. ``reference\\tparaphrase\\ttranslation_cost\\tsource``. A header is recognised when its first two fields
are ``reference`` and ``paraphrase`` (or ``text_a`` and ``text_b``) and every other field is a known column name, so no
sentence pair is ever taken for one. :func:`parse_named` parses a block of such a file: the two texts, the
``paraphrase_score`` / ``trigram_overlap`` columns as the pair format's score and overlap, every other numeric column
as a float and ``source`` as text; a line whose number does not parse is a bad line, counted, as in
:mod:`paranmt_hf.data.records`.
"""

from __future__ import annotations

import gzip
import math
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...data.reader import Block, zip_members
from ...data.records import BadLineError, LineFormat, ParsedBlock, parse_block

TEXT_COLUMNS = (("reference", "paraphrase"), ("text_a", "text_b"))
TEXT_EXTRA = ("source",)
"""Text columns besides the pair (the source sentence of a back-translation)."""
SCORE_NAMES = ("paraphrase_score", "score")
OVERLAP_NAMES = ("trigram_overlap", "overlap")


def known_numeric() -> tuple[str, ...]:
    """Numeric column names a header may hold: the measures' and the pair format's."""
    from .registry import MEASURES

    return (*MEASURES, *SCORE_NAMES, *OVERLAP_NAMES)


@dataclass(frozen=True)
class Header:
    """The columns a header names (in order)."""

    columns: tuple[str, ...]

    @property
    def line(self) -> str:
        """The header line (without its newline)."""
        return "\t".join(self.columns)

    @property
    def score_index(self) -> int | None:
        """Index of the paraphrase score column."""
        return next((i for i, c in enumerate(self.columns) if c in SCORE_NAMES), None)

    @property
    def overlap_index(self) -> int | None:
        """Index of the trigram overlap column."""
        return next((i for i, c in enumerate(self.columns) if c in OVERLAP_NAMES), None)

    def line_format(self) -> LineFormat:
        """The line format of the data lines (every column present)."""
        n = len(self.columns)
        return LineFormat("named", n, n, score_column=self.score_index, overlap_column=self.overlap_index)


def parse_header(line: str) -> Header | None:
    """The header a line is, or None when it is a data line."""
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) < 3 or tuple(fields[:2]) not in TEXT_COLUMNS:
        return None
    known = set(known_numeric()) | set(TEXT_EXTRA)
    if any(f not in known for f in fields[2:]) or len(set(fields)) != len(fields):
        return None
    return Header(tuple(fields))


def header_of(columns: Sequence[str]) -> Header:
    """A header for ``reference, paraphrase`` and the given extra columns."""
    return Header(("reference", "paraphrase", *columns))


def parse_named(block: Block, header: Header, strict: bool = False) -> tuple[ParsedBlock, dict[str, list]]:
    """Parse a block of a named-column file: the pair columns and every other column by name.

    Returns the parsed block (texts, score, overlap, raw lines, line numbers, bad-line report) and the other
    columns (floats; ``source`` as text), one value per valid line.
    """
    parsed = parse_block(block, header.line_format(), strict)
    skip = {0, 1, header.score_index, header.overlap_index}
    names = [(i, c) for i, c in enumerate(header.columns) if i not in skip]
    columns: dict[str, list] = {c: [] for _, c in names}
    if not names:
        return parsed, columns
    keep: list[int] = []
    for row, line in enumerate(parsed.lines):
        fields = line.split("\t")
        values = []
        for i, name in names:
            if name in TEXT_EXTRA:
                values.append(fields[i])
                continue
            try:
                value = float(fields[i])
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                location = f"{block.source}:{parsed.numbers[row]}"
                reason = f"bad {name}"
                if strict:
                    raise BadLineError(f"{location}: {reason} ({fields[i][:40]!r})")
                parsed.report.record(location, reason, repr(fields[i][:40]))
                parsed.report.good -= 1
                break
            values.append(value)
        else:
            keep.append(row)
            for (_, name), value in zip(names, values, strict=True):
                columns[name].append(value)
    if len(keep) != len(parsed.lines):
        for attribute in ("text_a", "text_b", "score", "overlap", "lines", "numbers"):
            values = getattr(parsed, attribute)
            setattr(parsed, attribute, [values[i] for i in keep])
    return parsed, columns


def _first_line(stream: Any) -> str:
    head = stream.readline(1 << 16)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return head.decode("utf-8", "replace")


def file_headers(paths: Sequence[str | os.PathLike[str]],
                 member_pattern: str | None = None) -> dict[str, Header | None]:
    """The header of every source of ``paths`` (a file, or each zip member read), None where it has none.

    Keys are the sources as the reader names them (``path`` or ``path::member``).
    """
    from ...data.reader import check_input_files

    check_input_files(paths)
    out: dict[str, Header | None] = {}
    for path in map(os.fspath, paths):
        with open(path, "rb") as handle:
            magic = handle.read(4)
            handle.seek(0)
            if magic.startswith(b"PK\x03\x04"):
                with zipfile.ZipFile(handle) as archive:
                    for member in zip_members(archive, member_pattern):
                        with archive.open(member) as stream:
                            out[f"{path}::{member}"] = parse_header(_first_line(stream))
            elif magic.startswith(b"\x1f\x8b"):
                with gzip.GzipFile(fileobj=handle) as stream:
                    try:
                        out[path] = parse_header(_first_line(stream))
                    except (OSError, EOFError):
                        out[path] = None
            else:
                out[path] = parse_header(_first_line(handle))
    return out


def common_header(paths: Sequence[str | os.PathLike[str]], member_pattern: str | None = None) -> Header | None:
    """The header all inputs share (None: none has one).

    Raises:
        CorpusError: some inputs have a header and others not, or different ones.
    """
    from ..errors import CorpusError

    headers = file_headers(paths, member_pattern)
    found = set(headers.values())
    if len(found) > 1:
        described = "; ".join(f"{source}: {h.line.replace(chr(9), ' ') if h else 'no header'}"
                              for source, h in headers.items())
        raise CorpusError(f"the inputs do not share their columns ({described}): process them separately")
    return next(iter(found), None)


def read_columns(paths: Sequence[str | os.PathLike[str]], columns: Sequence[int],
                 member_pattern: str | None = None) -> list[list[str]]:
    """The given 1-based columns of text / TSV files (plain, .gz or .zip), one list per column.

    A first line that is a header (:func:`parse_header`, or a bare ``reference``/``paraphrase`` or
    ``text_a``/``text_b`` pair) is not data; blank lines are skipped.

    Raises:
        BadLineError: a line with fewer columns than asked, or one over the reader's length bound (``file:line``).
        InputError / FileNotFoundError: a file that cannot be read as UTF-8 text lines.
    """
    from ...data.reader import LONG_LINE_MARKER, iter_raw_lines

    wanted = max(columns)
    out: list[list[str]] = [[] for _ in columns]
    for path in paths:
        for source, number, raw in iter_raw_lines(path, member_pattern):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            fields = line.split("\t")
            if number == 1 and (parse_header(line) is not None or tuple(fields) in TEXT_COLUMNS):
                continue
            if not line.strip():
                continue
            if line.startswith(LONG_LINE_MARKER):
                raise BadLineError(f"{source}:{number}: line too long")
            if len(fields) < wanted:
                raise BadLineError(f"{source}:{number}: {len(fields)} column(s), column {wanted} asked")
            for values, column in zip(out, columns, strict=True):
                values.append(fields[column - 1])
    return out

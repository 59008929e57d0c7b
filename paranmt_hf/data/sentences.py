"""Sentences of a corpus for building tokenizers and vocabularies: plain text (one per line) or TSV, gzip'd or not.

Every line must be UTF-8 (a UTF-8 byte-order mark is skipped); a line that is not, a folder given as a file, a
column spec that is not a list of column numbers, or a line without an asked column is one sentence
(:class:`~paranmt_hf.data.reader.InputError`) naming the file and line, and so are inputs that give no sentence at
all: a vocabulary built from nothing is never a silent result.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .reader import InputError, check_input_files


def parse_columns(columns: str) -> list[int] | None:
    """``"all"`` -> None (every column); ``"0,2"`` -> ``[0, 2]`` (column numbers count from 0).

    Raises:
        InputError: anything else (not a comma-separated list of column numbers >= 0).
    """
    if columns.strip() == "all":
        return None
    parts = [c.strip() for c in columns.split(",")]
    if not all(p.isdigit() for p in parts):  # isdigit: no sign, so no negative column
        raise InputError(f"columns {columns!r} is not 'all' or a comma-separated list of column numbers counted "
                         "from 0 (e.g. 0,1)")
    return [int(p) for p in parts]


def decoded_lines(handle: IO[bytes], name: str, error: type[Exception] = InputError) -> Iterator[str]:
    r"""The lines of an open binary file as UTF-8 text, without ``\n`` / ``\r\n`` (a leading BOM removed).

    Raises:
        error: a line that is not valid UTF-8 (``name:line``, byte offset in the line).
    """
    for number, raw in enumerate(handle, start=1):
        raw = raw[:-1] if raw.endswith(b"\n") else raw
        raw = raw[:-1] if raw.endswith(b"\r") else raw
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"{name}:{number}: not valid UTF-8 (byte {err.start} of the line: "
                        f"{raw[max(0, err.start - 20):err.start + 20]!r}); convert the file to UTF-8 first") from None
        yield line[1:] if number == 1 and line.startswith("\ufeff") else line


def iter_lines(path: str | Path) -> Iterator[str]:
    r"""The lines of a UTF-8 text file (gzip'd when named ``*.gz``), without their ``\n`` / ``\r\n``.

    Raises:
        FileNotFoundError: no such file.
        InputError: a folder, a line that is not UTF-8 (``file:line``), or a damaged gzip stream.
    """
    check_input_files([path])
    name = os.fspath(path)
    read = 0
    try:
        with gzip.open(name, "rb") if name.endswith(".gz") else open(name, "rb") as f:
            for line in decoded_lines(f, name):
                read += 1
                yield line
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise InputError(f"{name}: truncated or corrupt gzip data after line {read:,} ({err})") from None


def iter_sentences(paths: list[str], columns: str = "all", limit: int | None = None) -> Iterator[str]:
    """Sentences from text/TSV files: every tab-separated column (``columns="all"``) or listed ones (``"0,1"``).

    Empty lines and fields are skipped. ``limit`` caps the number of lines read per file.

    Raises:
        FileNotFoundError: a file does not exist.
        InputError: a folder, a line that is not UTF-8, a bad ``columns``, a non-empty line without an asked column
            (``file:line``), or no sentence in the inputs at all.
        ValueError: ``limit`` below 1.
    """
    wanted = parse_columns(columns)
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1 (lines per file), got {limit}")
    check_input_files(paths)
    found = False
    for path in paths:
        for number, line in enumerate(iter_lines(path), start=1):
            if limit is not None and number > limit:
                break
            if not line.strip():
                continue
            fields = line.split("\t")
            if wanted is not None and max(wanted) >= len(fields):
                raise InputError(f"{path}:{number}: the line has {len(fields)} column(s), columns={columns} asks "
                                 f"for column {max(wanted)} (columns count from 0)")
            for text in fields if wanted is None else (fields[c] for c in wanted):
                if text.strip():
                    found = True
                    yield text
    if not found:
        read = f"the first {limit:,} line(s) of " if limit is not None else ""
        where = f"columns {columns} of " if wanted is not None else ""
        raise InputError(f"no sentence in {where}{read}{', '.join(map(str, paths)) or 'no input'}: every line read "
                         "is empty; give a corpus with text")


def read_sentences(path: str | Path) -> tuple[list[str], int]:
    """The non-empty lines of a UTF-8 text file (gzip'd or not), one sentence each, and how many empty ones it has."""
    lines = list(iter_lines(path))
    texts = [t for t in lines if t.strip()]
    return texts, len(lines) - len(texts)

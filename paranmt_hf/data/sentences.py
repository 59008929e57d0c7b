"""Sentences of a corpus for building tokenizers and vocabularies: plain text (one per line) or TSV, gzip'd or not."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path


def open_text(path: str | Path) -> io.TextIOBase:
    """Open a UTF-8 text file, transparently gunzipping ``*.gz``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


def iter_sentences(paths: list[str], columns: str = "all", limit: int | None = None) -> Iterator[str]:
    """Sentences from text/TSV files: every tab-separated column (``columns="all"``) or listed ones (``"0,1"``).

    Empty fields are skipped. ``limit`` caps the number of lines read per file.
    """
    wanted = None if columns == "all" else [int(c) for c in columns.split(",")]
    for path in paths:
        with open_text(path) as f:
            for line_no, line in enumerate(f):
                if limit is not None and line_no >= limit:
                    break
                fields = line.rstrip("\n").split("\t")
                picked = fields if wanted is None else [fields[c] for c in wanted if c < len(fields)]
                yield from (s for s in picked if s.strip())


def read_sentences(path: str | Path) -> tuple[list[str], int]:
    """The non-empty lines of a UTF-8 text file (gzip'd or not), one sentence each, and how many empty ones it has."""
    with open_text(path) as f:
        lines = [line.rstrip("\r\n") for line in f]
    texts = [t for t in lines if t.strip()]
    return texts, len(lines) - len(texts)

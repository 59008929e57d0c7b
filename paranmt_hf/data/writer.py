"""Write pair records as TSV (gzip'd when the name ends with ``.gz``), the format the readers accept."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterable, Mapping
from typing import Any


def format_number(value: float) -> str:
    """Shortest text that reads back to the same float (``repr``)."""
    return repr(float(value))


def format_numbers(values: Iterable[float]) -> list[str]:
    """:func:`format_number` of many values (one C-level pass, no Python call per value)."""
    return list(map(repr, map(float, values)))


def write_pairs(
    records: Iterable[Mapping[str, Any]],
    path: str | os.PathLike[str],
    columns: tuple[str, ...] = ("text_a", "text_b", "score", "overlap"),
) -> int:
    """Write ``records`` as tab-separated lines of ``columns``; trailing columns that are None are omitted.

    Returns the number of lines written. Raises ValueError when a None is followed by a value (the column
    positions would shift).
    """
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    count = 0
    with opener(path, "wt", encoding="utf-8", newline="\n") as out:
        for record in records:
            values = [record.get(c) for c in columns]
            while values and values[-1] is None:
                values.pop()
            if any(v is None for v in values):
                raise ValueError(f"record has a missing {columns[values.index(None)]!r} before later columns")
            out.write("\t".join(v if isinstance(v, str) else format_number(v) for v in values) + "\n")
            count += 1
    return count

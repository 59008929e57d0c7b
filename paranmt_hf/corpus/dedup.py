"""De-duplicate pair corpora with 64-bit hashes.

``keep="first"`` keeps the first copy of every duplicate in one streaming pass. ``keep="none"`` reproduces the
original PRAS pipeline's ``sort | uniq -u``, which drops *every* copy of a duplicated line (two passes). Memory grows
with the number of distinct pairs, not their length: :class:`HashSet64` keeps 8 bytes per distinct pair in a sorted
NumPy array plus a bounded Python-set buffer of about 100 MB (measured: ~11 bytes per distinct pair beyond the
buffer, about 0.65 GB extrapolated to the 51.4M lines of ParaNMT-50M, more while a merge copies the array; see
results/corpus_streaming/dedup_memory.json). The false-duplicate probability of 64-bit hashes is
about n²/2^65 (~7e-5 for 51M pairs).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

KEYS = ("pair", "line")
KEEP = ("first", "none")


def pair_hash(record: Mapping[str, Any], key: str = "pair") -> int:
    """64-bit hash of a record: its two texts (``key="pair"``) or texts and score (``key="line"``)."""
    text = record["text_a"] + "\t" + record["text_b"]
    if key == "line":
        text += "\t" + repr(record.get("score"))
    elif key != "pair":
        raise ValueError(f"unknown key {key!r}; choose one of {KEYS}")
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


class HashSet64:
    """A set of 64-bit hashes: a sorted ``uint64`` array (8 bytes each) plus a bounded Python-set buffer.

    Lookups are vectorised per chunk (:meth:`add_many`, :meth:`contains_many`); the buffer is merged into the
    array (an O(n) insert) when it reaches ``buffer_size``.
    """

    def __init__(self, buffer_size: int = 1 << 20) -> None:
        self._sorted = np.zeros(0, dtype=np.uint64)
        self._buffer: set[int] = set()
        self._buffer_size = buffer_size

    def __len__(self) -> int:
        return len(self._sorted) + len(self._buffer)

    def _in_sorted(self, arr: np.ndarray) -> np.ndarray:
        if not len(self._sorted):
            return np.zeros(len(arr), dtype=bool)
        idx = np.minimum(np.searchsorted(self._sorted, arr), len(self._sorted) - 1)
        return self._sorted[idx] == arr

    def contains_many(self, values: list[int]) -> list[bool]:
        """Membership of each value."""
        found = self._in_sorted(np.array(values, dtype=np.uint64)).tolist()
        return [f or v in self._buffer for v, f in zip(values, found, strict=True)]

    def add_many(self, values: list[int]) -> list[bool]:
        """Add the values in order; returns, for each, whether it was new (a repeat within ``values`` is not)."""
        found = self._in_sorted(np.array(values, dtype=np.uint64)).tolist()
        new = []
        for value, in_sorted in zip(values, found, strict=True):
            fresh = not in_sorted and value not in self._buffer
            if fresh:
                self._buffer.add(value)
            new.append(fresh)
        if len(self._buffer) >= self._buffer_size:
            self._merge()
        return new

    def _merge(self) -> None:
        added = np.sort(np.fromiter(self._buffer, dtype=np.uint64, count=len(self._buffer)))
        self._sorted = np.insert(self._sorted, np.searchsorted(self._sorted, added), added)
        self._buffer = set()


def _chunks(records: Iterable[Mapping[str, Any]], size: int = 8192) -> Iterator[list[Mapping[str, Any]]]:
    iterator = iter(records)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


@dataclass
class DedupStats:
    """Lines read and kept."""

    read: int = 0
    kept: int = 0

    @property
    def removed(self) -> int:
        """Lines dropped as duplicates."""
        return self.read - self.kept


def dedup_records(
    records: Callable[[], Iterable[Mapping[str, Any]]] | Iterable[Mapping[str, Any]],
    keep: str = "first",
    key: str = "pair",
    stats: DedupStats | None = None,
) -> Iterator[Mapping[str, Any]]:
    """Yield the records without duplicates.

    Args:
        records: the records; for ``keep="none"`` a zero-argument callable returning a fresh iterable (read twice).
        keep: ``"first"`` (one copy of each) or ``"none"`` (drop all copies: the original ``uniq -u``).
        key: what makes two records equal: ``"pair"`` (both texts) or ``"line"`` (texts and score, as ``uniq``).
        stats: filled with read/kept counts.
    """
    stats = stats if stats is not None else DedupStats()
    if keep not in KEEP:
        raise ValueError(f"unknown keep {keep!r}; choose one of {KEEP}")
    if keep == "first":
        seen = HashSet64()
        for chunk in _chunks(records() if callable(records) else records):
            stats.read += len(chunk)
            for record, new in zip(chunk, seen.add_many([pair_hash(r, key) for r in chunk]), strict=True):
                if new:
                    stats.kept += 1
                    yield record
        return
    if not callable(records):
        raise TypeError('keep="none" reads the records twice: pass a callable returning a fresh iterable')
    once, more = HashSet64(), HashSet64()
    for chunk in _chunks(records()):
        hashes = [pair_hash(r, key) for r in chunk]
        more.add_many([h for h, new in zip(hashes, once.add_many(hashes), strict=True) if not new])
    del once
    for chunk in _chunks(records()):
        stats.read += len(chunk)
        for record, dup in zip(chunk, more.contains_many([pair_hash(r, key) for r in chunk]), strict=True):
            if not dup:
                stats.kept += 1
                yield record

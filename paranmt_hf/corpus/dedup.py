"""De-duplicate pair corpora with 64-bit hashes: files at bounded memory (:func:`dedup_files`), or any iterable.

``keep="first"`` keeps the first copy of every duplicate. ``keep="none"`` reproduces the original PRAS pipeline's
``sort | uniq -u``, which drops *every* copy of a duplicated line. The false-duplicate probability of 64-bit hashes
is about n²/2^65 (~7e-5 for 51M pairs).

:func:`dedup_files` (``paranmt-hf corpus dedup``) is an external hash sort: a first parallel pass hashes every valid
line and spills ``(hash, line number)`` pairs to 256 bucket files on disk by the hash's top byte; each bucket is
then sorted in memory on its own and every line to drop is marked in a one-byte-per-input-line mask; a second
parallel pass writes the lines not marked, in input order. Memory: one byte per input line (the mask: 51 MB for
ParaNMT-50M's 51.4M lines) + one bucket (16 bytes per line / 256, sorted: ~10 MB for ParaNMT-50M) + fixed buffers
(a few blocks of 4 MB and the bucket write buffers, ~50 MB); temporary disk: 16 bytes per valid line (0.8 GB).
With shards (``Shard(i, n)``) the lines are split by hash, each shard keeps the lines whose hash falls in its part,
so the shards' outputs together are the one-machine output (each shard in input order).

:func:`dedup_records` de-duplicates any iterable in one pass with :class:`HashSet64` (8 bytes per distinct pair in a
sorted NumPy array plus a bounded set buffer: ~11 bytes per distinct pair measured, see
results/corpus_streaming/dedup_memory.json).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..data.reader import Block, Shard, iter_blocks
from ..data.records import parse_block
from .output import compress_block
from .pipeline import BlockResult, BlockTask, RunSettings, Summary, run_blocks

KEYS = ("pair", "line")
KEEP = ("first", "none")


def _key_text(text_a: str, text_b: str, score: float | None, key: str) -> str:
    text = text_a + "\t" + text_b
    if key == "line":
        return text + "\t" + repr(score)
    if key != "pair":
        raise ValueError(f"unknown key {key!r}; choose one of {KEYS}")
    return text


def pair_hash(record: Mapping[str, Any], key: str = "pair") -> int:
    """64-bit hash of a record: its two texts (``key="pair"``) or texts and score (``key="line"``)."""
    text = _key_text(record["text_a"], record["text_b"], record.get("score"), key)
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


# ---- files at bounded memory: external hash sort ------------------------------------------------------------------
BUCKETS = 256
_BUCKET_BUFFER = 1 << 13  # entries buffered per bucket before they go to disk (256 x 8192 x 16 bytes = 32 MB)


@dataclass
class HashTask(BlockTask):
    """Pass 1: the 64-bit key hash of every valid line and its index in the block."""

    fmt: str = "pairs"
    key: str = "pair"
    strict: bool = False

    def __call__(self, block: Block) -> BlockResult:
        """The result of one block."""
        parsed = parse_block(block, self.fmt, self.strict)
        blake = hashlib.blake2b
        hashes = np.fromiter(
            (int.from_bytes(blake(_key_text(a, b, s, self.key).encode("utf-8"), digest_size=8).digest(), "little")
             for a, b, s in zip(parsed.text_a, parsed.text_b, parsed.score, strict=True)),
            dtype=np.uint64, count=len(parsed))
        index = np.asarray(parsed.numbers, dtype=np.int64) - block.first_line
        return BlockResult((hashes, index), block.lines, report=parsed.report)


KEPT, DUPLICATE, OTHER_SHARD = 0, 1, 2  # values of the line mask
_MASK_NAMES = {KEPT: "kept", DUPLICATE: "duplicate", OTHER_SHARD: "other shards"}


@dataclass
class WriteTask(BlockTask):
    """Pass 2: the valid lines of a block that its mask (``block.extra``: :data:`KEPT`...) keeps."""

    fmt: str = "pairs"
    compress: bool = False

    def __call__(self, block: Block) -> BlockResult:
        """The result of one block."""
        parsed = parse_block(block, self.fmt)
        mask = block.extra[np.asarray(parsed.numbers, dtype=np.int64) - block.first_line]
        lines = [parsed.lines[i] for i in np.flatnonzero(mask == KEPT).tolist()]
        data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        counts = Counter({_MASK_NAMES[k]: int(n) for k, n in enumerate(np.bincount(mask, minlength=3)) if n})
        return BlockResult(compress_block(data) if self.compress else data, block.lines, counts)


class _Buckets:
    """``(hash, line)`` pairs spilled to bucket files by the hash's top byte."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.buffers: list[list[np.ndarray]] = [[] for _ in range(BUCKETS)]
        self.sizes = [0] * BUCKETS

    def path(self, bucket: int) -> Path:
        return self.directory / f"bucket-{bucket:03d}.bin"

    def add(self, hashes: np.ndarray, lines: np.ndarray) -> None:
        pairs = np.empty((len(hashes), 2), dtype=np.uint64)
        pairs[:, 0], pairs[:, 1] = hashes, lines
        top = (hashes >> np.uint64(56)).astype(np.int64)
        order = np.argsort(top, kind="stable")
        bounds = np.searchsorted(top[order], np.arange(BUCKETS + 1))
        for bucket in np.flatnonzero(np.diff(bounds)):
            part = pairs[order[bounds[bucket] : bounds[bucket + 1]]]
            self.buffers[bucket].append(part)
            self.sizes[bucket] += len(part)
            if self.sizes[bucket] >= _BUCKET_BUFFER:
                self.flush(bucket)

    def flush(self, bucket: int) -> None:
        if self.buffers[bucket]:
            with open(self.path(bucket), "ab") as handle:
                for part in self.buffers[bucket]:
                    handle.write(part.tobytes())
            self.buffers[bucket], self.sizes[bucket] = [], 0

    def load(self, bucket: int) -> np.ndarray:
        self.flush(bucket)
        path = self.path(bucket)
        if not path.exists():
            return np.zeros((0, 2), dtype=np.uint64)
        data = np.fromfile(path, dtype=np.uint64).reshape(-1, 2)
        path.unlink()
        return data


def _mark_duplicates(pairs: np.ndarray, keep: str, mask: np.ndarray) -> None:
    """Mark in ``mask`` the lines of ``pairs`` (hash, line) that ``keep`` removes."""
    if not len(pairs):
        return
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    hashes, lines = pairs[order, 0], pairs[order, 1].astype(np.int64)
    first = np.ones(len(hashes), dtype=bool)
    first[1:] = hashes[1:] != hashes[:-1]
    if keep == "first":
        mask[lines[~first]] = DUPLICATE
        return
    group = np.cumsum(first) - 1
    mask[lines[np.bincount(group)[group] > 1]] = DUPLICATE


def dedup_files(
    inputs: Sequence[str | os.PathLike[str]],
    write: Callable[[bytes], Any],
    settings: RunSettings | None = None,
    *,
    fmt: str = "pairs",
    keep: str = "first",
    key: str = "pair",
    strict: bool = False,
    compress: bool = False,
    member_pattern: str | None = None,
    temp_dir: str | os.PathLike[str] | None = None,
) -> Summary:
    """De-duplicate the valid lines of ``inputs`` at bounded memory (see the module docstring), in input order.

    Args:
        inputs: pair files.
        write: called with the output bytes of each block, in input order.
        fmt: line format.
        keep: ``"first"`` or ``"none"``.
        key: ``"pair"`` (both texts) or ``"line"`` (texts and score).
        strict: fail on the first bad line.
        settings: processes, block size, progress; its shard keeps the lines whose hash falls in that shard's part.
        compress: the bytes given to ``write`` are gzip members.
        member_pattern: zip member glob.
        temp_dir: where the bucket files go (default: the system's temporary folder).

    Returns:
        the second pass's summary (``kept`` / ``duplicate`` counts; bad lines from the first pass).
    """
    if keep not in KEEP:
        raise ValueError(f"unknown keep {keep!r}; choose one of {KEEP}")
    _key_text("", "", None, key)
    settings = settings or RunSettings()
    shard, every = settings.shard, replace(settings, shard=Shard())  # every shard hashes every line
    sizes: list[int] = []
    mask = np.zeros(1 << 20, dtype=np.uint8)  # per input line: KEPT, DUPLICATE or OTHER_SHARD (grows by doubling)
    with tempfile.TemporaryDirectory(prefix="paranmt-dedup-", dir=temp_dir) as tmp:
        buckets = _Buckets(Path(tmp))
        offset = 0

        def spill(result: BlockResult) -> None:
            nonlocal offset, mask
            hashes, index = result.payload
            lines = index + offset
            while offset + result.lines > len(mask):
                mask = np.concatenate([mask, np.zeros(len(mask), dtype=np.uint8)])
            if not shard.whole:
                mine = hashes % np.uint64(shard.count) == np.uint64(shard.index)
                mask[lines[~mine]] = OTHER_SHARD
                hashes, lines = hashes[mine], lines[mine]
            buckets.add(hashes, lines.astype(np.uint64))
            sizes.append(result.lines)
            offset += result.lines

        first = run_blocks(inputs, HashTask(fmt, key, strict), spill, every, member_pattern=member_pattern,
                           desc="dedup: hashing")
        for bucket in range(BUCKETS):
            _mark_duplicates(buckets.load(bucket), keep, mask)

    def masked() -> Iterator[Block]:
        start = 0
        for block, lines in zip(iter_blocks(list(inputs), member_pattern, block_bytes=every.block_bytes), sizes,
                                strict=True):
            block.extra = mask[start : start + lines]
            start += lines
            yield block

    second = run_blocks(inputs, WriteTask(fmt, compress), lambda r: write(r.payload), every, desc="dedup: writing",
                        blocks=masked())
    second.shard = shard
    second.report = first.report
    second.seconds += first.seconds
    return second

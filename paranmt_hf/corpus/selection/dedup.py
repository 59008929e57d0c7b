"""De-duplicate pair corpora with 64-bit hashes: files at bounded memory (:func:`dedup_files`), or any iterable.

``keep="first"`` keeps the first copy of every duplicate; ``keep="none"`` reproduces the PRAS pipeline's
``sort | uniq -u``, which drops every copy. The false-duplicate probability of 64-bit hashes is about n²/2^65.

:func:`dedup_files` (``paranmt-hf corpus dedup``) is an external hash sort in three datatrove stages, exact across
any number of tasks: every task spills ``(hash, position)`` pairs to 256 bucket files; one task per bucket group
sorts each bucket and marks the lines to drop (the first copy in input order is kept); every task writes its
other lines in input order, so the joined output is the one-task output.

:func:`dedup_records` de-duplicates any iterable in one pass with :class:`HashSet64` (memory: benchmarks/memory/).
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.atomic import attempt_temp
from ..pipeline.steps import CorpusStep
from ..pipeline.task_process import publish, write_file

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


# ---- files at bounded memory, over any number of tasks: external hash sort --------------------------------------
# Why not datatrove's own exact de-duplication (ExactDedupSignature -> ExactFindDedups -> ExactDedupFilter), whose
# three-stage shape this follows: (1) it always keeps one copy of a duplicate, so keep="none" (PRAS's `uniq -u`,
# every copy dropped) cannot be expressed; (2) it takes one Document per pair, and its signature step keeps every
# signature of a task in a Python list until the task ends. Measured on 200,000 ParaNMT pairs (CPU time, one core):
# Documents + its signatures 0.23M pairs/s against 1.0M pairs/s for line_hashes over a batch's columns, and 136
# bytes per pair held in memory against 16 bytes per pair spilled to bucket files here (bounded write buffers).
BUCKETS = 256
_BUCKET_BUFFER = 1 << 13  # entries buffered per bucket before they go to disk (256 x 8192 x 16 bytes = 32 MB)
INDEX_BITS = 40  # a line's key: task rank << 40 | its index among the task's valid lines (global input order)


def _line_keys(batch: Any) -> list[Any]:
    """What ``key="line"`` adds to the texts: the score, or every column of the line after the texts."""
    parsed = batch.parsed
    if not batch.columns:
        return parsed.score
    return [line.split("\t", 2)[2] if line.count("\t") >= 2 else None for line in parsed.lines]


def line_hashes(text_a: Sequence[str], text_b: Sequence[str], scores: Sequence[float | None],
                key: str = "pair") -> np.ndarray:
    """The 64-bit key hash of each line (blake2b of both texts, and the score for ``key="line"``)."""
    blake = hashlib.blake2b
    return np.fromiter(
        (int.from_bytes(blake(_key_text(a, b, s, key).encode("utf-8"), digest_size=8).digest(), "little")
         for a, b, s in zip(text_a, text_b, scores, strict=True)),
        dtype=np.uint64, count=len(text_a))


class _Buckets:
    """``(hash, key)`` pairs spilled to ``folder/<bucket>/<rank>.bin`` by the hash's top byte."""

    def __init__(self, folder: Path, rank: int) -> None:
        self.folder, self.rank = folder, rank
        self.buffers: list[list[np.ndarray]] = [[] for _ in range(BUCKETS)]
        self.sizes = [0] * BUCKETS
        self.temps: dict[int, Path] = {}  # this attempt's own files, renamed to path(bucket) by publish()

    def path(self, bucket: int) -> Path:
        return self.folder / f"{bucket:03d}" / f"{self.rank:05d}.bin"

    def publish(self) -> None:
        """Rename this attempt's files into place (when the task's run is still alive)."""
        for bucket, temp in sorted(self.temps.items()):
            publish(temp, self.path(bucket))

    def add(self, hashes: np.ndarray, keys: np.ndarray) -> None:
        pairs = np.empty((len(hashes), 2), dtype=np.uint64)
        pairs[:, 0], pairs[:, 1] = hashes, keys
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
            temp = self.temps.setdefault(bucket, attempt_temp(self.path(bucket)))
            with open(temp, "ab") as handle:
                for part in self.buffers[bucket]:
                    handle.write(part.tobytes())
            self.buffers[bucket], self.sizes[bucket] = [], 0


class HashStep(CorpusStep):
    """Stage 1: the key hash of every pair of the task, spilled to bucket files (``(hash, key)`` pairs).

    A pair's key is the task's rank and the pair's position among the task's pairs, so the write stage must see the
    same pairs in the same order (the task's input again, or what this stage wrote: ``passthrough``).
    """

    name = "dedup: hashing"

    def __init__(self, folder: str | os.PathLike[str], key: str = "pair", passthrough: bool = False) -> None:
        super().__init__()
        _key_text("", "", None, key)
        self.folder, self.key, self.passthrough = os.fspath(folder), key, passthrough

    def hashes(self, batch: Any) -> np.ndarray:
        """The 64-bit key hash of each pair of ``batch`` (a subclass may hash something else of its lines)."""
        parsed = batch.parsed
        return line_hashes(parsed.text_a, parsed.text_b, _line_keys(batch), self.key)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Spill the task's hashes; pass the batches on when ``passthrough``."""
        folder = Path(self.folder)
        for bucket in range(BUCKETS):
            path = folder / f"{bucket:03d}" / f"{rank:05d}.bin"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)  # a rerun of the task starts its files afresh
        buckets = _Buckets(folder, rank)
        seen = 0
        for batch in data or ():
            parsed = batch.parsed
            with self.track_time(unit="batch"):
                hashes = self.hashes(batch)
                keys = (np.uint64(rank) << np.uint64(INDEX_BITS)) + np.arange(seen, seen + len(parsed),
                                                                              dtype=np.uint64)
                buckets.add(hashes, keys)
                seen += len(parsed)
            if self.passthrough:
                yield batch
        for bucket in range(BUCKETS):
            buckets.flush(bucket)
        buckets.publish()


def read_bucket(folder: str | os.PathLike[str], bucket: int) -> np.ndarray:
    """The ``(hash, key)`` pairs every task of stage 1 spilled to ``bucket`` (an ``(n, 2)`` ``uint64`` array)."""
    files = sorted((Path(folder) / f"{bucket:03d}").glob("*.bin"))
    if not files:
        return np.zeros((0, 2), dtype=np.uint64)
    return np.concatenate([np.fromfile(f, dtype=np.uint64).reshape(-1, 2) for f in files])


def hash_groups(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``pairs`` (hash, key) sorted by hash, then key: ``(hashes, keys, first, size)``.

    ``first``: whether the line is the first (smallest key) of its hash; ``size``: how many lines have its hash.
    """
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    hashes, keys = pairs[order, 0], pairs[order, 1]
    first = np.ones(len(hashes), dtype=bool)
    first[1:] = hashes[1:] != hashes[:-1]
    group = np.cumsum(first) - 1
    return hashes, keys, first, np.bincount(group)[group] if len(group) else np.zeros(0, dtype=np.int64)


def duplicate_keys(pairs: np.ndarray, keep: str) -> np.ndarray:
    """The keys of ``pairs`` (hash, key) that ``keep`` removes.

    ``keep="first"``: all but the first (smallest key) of each hash; ``"none"``: every line of a hash seen twice.
    """
    if not len(pairs):
        return np.zeros(0, dtype=np.uint64)
    _, keys, first, size = hash_groups(pairs)
    return keys[~first] if keep == "first" else keys[size > 1]


class FindStep(CorpusStep):
    """Stage 2: for each of its buckets, the lines to drop, written per task that owns them (``drops/<rank>/``)."""

    name = "dedup: finding duplicates"
    type = "🫂 - DEDUP"

    def __init__(self, hashes: str, drops: str, keep: str = "first") -> None:
        if keep not in KEEP:
            raise ValueError(f"unknown keep {keep!r}; choose one of {KEEP}")
        super().__init__()
        self.hashes, self.drops, self.keep = hashes, drops, keep

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Process buckets ``rank, rank + world_size, ...``; pass nothing on."""
        mask = np.uint64((1 << INDEX_BITS) - 1)
        for bucket in range(rank, BUCKETS, world_size):
            pairs = read_bucket(self.hashes, bucket)
            dropped = np.sort(duplicate_keys(pairs, self.keep))
            owners = (dropped >> np.uint64(INDEX_BITS)).astype(np.int64)
            for owner in np.unique(owners):
                target = Path(self.drops) / f"{owner:05d}" / f"{bucket:03d}.npy"
                target.parent.mkdir(parents=True, exist_ok=True)
                buffer = io.BytesIO()
                np.save(buffer, (dropped[owners == owner] & mask).astype(np.int64))
                write_file(target, buffer.getvalue())
        return iter(())


class DedupWriteStep(CorpusStep):
    """Stage 3: the task's valid lines not marked by stage 2, unchanged, in input order."""

    name = "dedup: writing"

    def __init__(self, drops: str | os.PathLike[str], kept_name: str = "kept") -> None:
        super().__init__()
        self.drops, self.kept_name = os.fspath(drops), kept_name

    def setup(self, rank: int, world_size: int) -> None:
        """Load the task's lines to drop (8 bytes each)."""
        files = sorted((Path(self.drops) / f"{rank:05d}").glob("*.npy"))
        self._drop = np.unique(np.concatenate([np.load(f) for f in files])) if files else np.zeros(0, np.int64)

    def process(self, batch: Any) -> Any:
        """The batch holding its pairs not marked (the steps after this one see those only)."""
        parsed = batch.parsed
        lo, hi = np.searchsorted(self._drop, [batch.index, batch.index + len(parsed)])
        drop = np.zeros(len(parsed), dtype=bool)
        drop[self._drop[lo:hi] - batch.index] = True
        self.count({self.kept_name: int((~drop).sum()), "duplicate": int(drop.sum())})
        if drop.any():
            batch.keep(np.flatnonzero(~drop).tolist())
        return batch


def dedup_stages(spec: Any, reader: Any, writer_steps: Sequence[Any], keep: str, key: str,
                 source_stage: Any) -> list[Any]:
    """The three de-duplication stages: hash (every task), find (per bucket), write (every task).

    ``reader`` makes the batches of a stage (called with the stage's name; the hash and the write stages read the
    same lines in the same order); ``writer_steps`` follow the write step.
    """
    from ..pipeline.runner import Stage

    hashes, drops = spec.parts_dir("hashes"), spec.parts_dir("drops")
    return [Stage("hash", [*source_stage("hash"), HashStep(hashes, key)], counts=False),
            Stage("find", [FindStep(str(hashes), str(drops), keep)], tasks=min(BUCKETS, spec.tasks), counts=False,
                  reads_input=False),
            Stage("main", [*reader("main"), DedupWriteStep(drops), *writer_steps])]


def dedup_files(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    run: Any = None,
    *,
    fmt: str = "pairs",
    keep: str = "first",
    key: str = "pair",
    strict: bool = False,
    member_pattern: str | None = None,
    overwrite: bool = False,
) -> Any:
    """De-duplicate the valid lines of ``inputs`` into ``output`` at bounded memory, in input order, over any tasks.

    Args:
        inputs: pair files.
        output: TSV(.gz) output (atomic; never an input; an existing one only with ``overwrite``).
        run: tasks, workers, executor, progress (:class:`~paranmt_hf.corpus.pipeline.runner.RunOptions`).
        fmt: line format.
        keep: ``"first"`` or ``"none"``.
        key: ``"pair"`` (both texts) or ``"line"`` (texts and score).
        strict: fail on the first bad line.
        member_pattern: zip member glob.
        overwrite: replace an existing output.

    Returns:
        the run's :class:`~paranmt_hf.corpus.pipeline.runner.Summary` (``kept`` / ``duplicate`` counts).
    """
    from ..pipeline.parts import TsvPartWriter, merge_tsv, part_suffix
    from ..pipeline.runner import JobOptions, RunOptions, execute, make_spec, merge_stage

    if keep not in KEEP:
        raise ValueError(f"unknown keep {keep!r}; choose one of {KEEP}")
    _key_text("", "", None, key)
    run = run or RunOptions()
    suffix = part_suffix(output)
    settings = {"format": fmt, "keep": keep, "key": key, "member": member_pattern, "strict": strict}
    spec, workers = make_spec("dedup", inputs, output, run, overwrite,
                              JobOptions(settings, part_suffix=suffix))

    def read(stage: str) -> list[Any]:
        return [spec.reader(stage, fmt, strict, member_pattern)]

    stages = dedup_stages(spec, read, [TsvPartWriter(spec.parts_dir(), suffix)], keep, key, read)
    stages.append(merge_stage(merge_tsv, spec))
    return execute(spec, stages, run, workers)

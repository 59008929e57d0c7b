"""Each distinct source of a run decoded once, across every chunk and task; every reference keeps its candidates.

The duplicates are found before decoding, with the external hash sort of :mod:`paranmt_hf.corpus.selection.dedup`:

1. **index** (:class:`SourceHashStep`): each kept line's source hash and position, spilled to 256 bucket files;
2. **duplicates** (:class:`SourceFindStep`): for every repeated source, its first position and later ones, for
   the task owning each (:func:`load_duplicates`);
3. **translate** (``BacktranslateStep``, ``mode="decode"``): later occurrences are not decoded; first occurrences
   of repeated sources go to the task's side file (:class:`ExportWriter`);
4. **fill** (``mode="fill"``): a later line gets its first occurrence's candidates (:func:`load_exports`).

The first occurrence, and each chunk's set of decoded sources, is the same for any ``--tasks`` / ``--workers`` /
resume, so the output (samples included) does not depend on how the run was split.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..pipeline.steps import CorpusStep
from ..pipeline.task_process import write_file
from ..selection.dedup import BUCKETS, INDEX_BITS, HashStep, hash_groups, read_bucket
from .source_cleaning import batch_sources

LATER, FIRST = "later", "first"


def source_hashes(sources: Sequence[str]) -> np.ndarray:
    """The 64-bit hash (blake2b) of each source sentence."""
    blake = hashlib.blake2b
    return np.fromiter((int.from_bytes(blake(s.encode("utf-8"), digest_size=8).digest(), "little") for s in sources),
                       dtype=np.uint64, count=len(sources))


class SourceHashStep(HashStep):
    """Stage 1: the hash of every kept line's source, with the line's position, spilled to bucket files."""

    name = "source dedup: hashing"

    def __init__(self, folder: str | os.PathLike[str], source_column: int | None = None) -> None:
        super().__init__(folder)
        self.source_column = source_column

    def hashes(self, batch: Any) -> np.ndarray:
        """The hash of each line's source."""
        return source_hashes(batch_sources(batch, self.source_column)[0])


class SourceFindStep(CorpusStep):
    """Stage 2: for its buckets, the first and the later positions of every duplicated source, per owning task.

    Writes ``table/<rank>/<bucket>-later.npy`` and ``-first.npy``: ``(index, hash)`` rows (``uint64``).
    """

    name = "source dedup: finding duplicates"
    type = "🫂 - DEDUP"

    def __init__(self, hashes: str | os.PathLike[str], table: str | os.PathLike[str]) -> None:
        super().__init__()
        self.hashes, self.table = os.fspath(hashes), os.fspath(table)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Process buckets ``rank, rank + world_size, ...``; pass nothing on."""
        mask = np.uint64((1 << INDEX_BITS) - 1)
        for bucket in range(rank, BUCKETS, world_size):
            pairs = read_bucket(self.hashes, bucket)
            if not len(pairs):
                continue
            hashes, keys, first, size = hash_groups(pairs)
            for kind, chosen in ((LATER, ~first), (FIRST, first & (size > 1))):
                rows = np.stack([keys[chosen], hashes[chosen]], axis=1)
                owners = (rows[:, 0] >> np.uint64(INDEX_BITS)).astype(np.int64)
                for owner in np.unique(owners):
                    mine = rows[owners == owner]
                    mine[:, 0] &= mask
                    buffer = io.BytesIO()
                    np.save(buffer, mine)
                    target = Path(self.table) / f"{owner:05d}" / f"{bucket:03d}-{kind}.npy"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    write_file(target, buffer.getvalue())
        return iter(())


def load_duplicates(table: str | os.PathLike[str], rank: int) -> tuple[dict[int, int], dict[int, int]]:
    """Task ``rank``'s ``(later, first)``: index among its kept lines -> source hash, for its duplicated sources."""
    found: dict[str, dict[int, int]] = {LATER: {}, FIRST: {}}
    for path in sorted((Path(table) / f"{rank:05d}").glob("*.npy")):
        kind = path.stem.rsplit("-", 1)[1]
        rows = np.load(path)
        found[kind].update(zip(rows[:, 0].tolist(), rows[:, 1].tolist(), strict=True))
    return found[LATER], found[FIRST]


def export_path(folder: str | os.PathLike[str], rank: int) -> Path:
    """A translate task's side file: the candidates of the first occurrences of its duplicated sources."""
    return Path(folder) / f"{rank:05d}.jsonl"


class ExportWriter:
    """Collect a translate task's exported candidates (``{hash: candidates}`` per chunk) and write them at its end.

    Resumed chunks give theirs back from their cache record, so the side file is whole after any resume.
    """

    def __init__(self, folder: str | os.PathLike[str], rank: int) -> None:
        self.path = export_path(folder, rank)
        self.lines: list[str] = []

    def add(self, exports: dict[str, Any]) -> None:
        """One chunk's exports (hash as a decimal string -> candidates)."""
        self.lines.extend(json.dumps({"hash": int(h), "candidates": c}) for h, c in exports.items())

    def close(self) -> None:
        """Write the side file (atomically)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_file(self.path, "".join(line + "\n" for line in self.lines))


def load_exports(folder: str | os.PathLike[str], needed: Iterable[int]) -> dict[int, Any]:
    """The candidates of the sources ``needed`` (hashes), from every translate task's side file."""
    wanted = set(needed)
    found: dict[int, Any] = {}
    if not wanted:
        return found
    for path in sorted(Path(folder).glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                if record["hash"] in wanted:
                    found[record["hash"]] = record["candidates"]
    return found

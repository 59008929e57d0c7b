"""Per-task outputs of a corpus pipeline and the one way they become the output: concatenation in task order.

Each task writes its part (``parts/00003.tsv.gz``) under a temporary name and renames it when the task ends; tasks
read their inputs in order (:mod:`paranmt_hf.corpus.batches`), so the parts joined in task order are the output of
a one-task run, byte for byte (gzip parts are gzip members, whose concatenation is one gzip file). Folder outputs
(``corpus export``) and JSON outputs (``corpus histogram``) are merged by their command
(:mod:`paranmt_hf.corpus.export`, :mod:`paranmt_hf.corpus.histogram`).
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..utils.atomic import atomic_output
from .steps import CorpusStep


def is_gzip_name(path: str | os.PathLike[str]) -> bool:
    """Whether an output is gzip'd (its name ends with ``.gz``)."""
    return os.fspath(path).endswith(".gz")


def compress_block(data: bytes) -> bytes:
    """One gzip member (level 6, no timestamp, so equal input gives equal bytes)."""
    return gzip.compress(data, compresslevel=6, mtime=0) if data else b""


def encode_lines(lines: Sequence[str], compress: bool) -> bytes:
    """TSV lines as bytes (one gzip member when ``compress``)."""
    data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    return compress_block(data) if compress else data


def part_path(folder: str | os.PathLike[str], rank: int, suffix: str) -> Path:
    """``folder/00003<suffix>``."""
    return Path(folder) / f"{rank:05d}{suffix}"


class TsvPartWriter(CorpusStep):
    """Write each batch's ``output`` bytes to this task's part file, then pass the batch on."""

    name = "tsv part writer"
    type = "💽 - WRITER"

    def __init__(self, folder: str | os.PathLike[str], suffix: str = ".tsv") -> None:
        super().__init__()
        self.folder = os.fspath(folder)
        self.suffix = suffix

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Write the part (atomically: it appears under its name when the task's input is exhausted)."""
        target = part_path(self.folder, rank, self.suffix)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        with open(tmp, "wb") as handle:
            for batch in data or ():
                if batch.output:
                    with self.track_time(unit="batch"):
                        handle.write(batch.output)
                yield batch
        os.replace(tmp, target)


def concatenate_parts(parts: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str],
                      inputs: Sequence[str | os.PathLike[str]], overwrite: bool, header: str | None = None) -> Path:
    """Join ``parts`` in order into ``output``, after the ``header`` line if any.

    Atomically; never over an input; over an existing output only with ``overwrite``.
    """
    with atomic_output(output, inputs=inputs, overwrite=overwrite) as tmp, open(tmp, "wb") as out:
        if header:
            out.write(encode_lines([header], is_gzip_name(output)))
        for path in parts:
            with open(path, "rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 22)
        if is_gzip_name(output) and out.tell() == 0:
            out.write(gzip.compress(b"", mtime=0))  # an empty but valid gzip file
    return Path(output)


def merge_tsv(spec: Any) -> None:
    """The merge of a TSV command: refuse an input without any valid line, then join the parts in task order."""
    from .runner import check_some_valid

    stage = spec.options.get("reading_stage", "main")
    check_some_valid(spec, stage, spec.output)
    suffix = spec.options["part_suffix"]
    parts = [part_path(spec.parts_dir(), rank, suffix) for rank in range(spec.tasks)]
    concatenate_parts(parts, spec.output, spec.inputs, spec.overwrite, spec.options.get("header"))


def part_suffix(output: str | os.PathLike[str]) -> str:
    """The parts' suffix for an output (``.tsv.gz`` parts for a ``.gz`` output)."""
    return ".tsv.gz" if is_gzip_name(output) else ".tsv"

"""Per-task outputs of a corpus pipeline and the one way they become the output: concatenation in task order.

Each task writes its part (``parts/00003.tsv.gz``) under a temporary name of its own (per process and attempt) and
renames it when the task ends, after recording the part's size, line count and sha256 next to it
(``00003.tsv.gz.part.json``, :func:`part_record`); the merge checks every part against its record while it joins them,
so a torn part, one from another attempt or a missing one stops the merge with one sentence, never an output. Tasks
read their inputs in order (:mod:`paranmt_hf.corpus.pipeline.batches`), so the parts joined in task order are the
output of a one-task run, byte for byte (gzip parts are gzip members, whose concatenation is one gzip file). Folder
outputs (``corpus export``) and JSON outputs (``corpus histogram``) are merged by their command
(:mod:`paranmt_hf.corpus.output.export`, :mod:`paranmt_hf.corpus.output.histogram`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ...utils.atomic import atomic_output, attempt_temp
from ..errors import RESTART, CorpusError, option
from .steps import CorpusStep
from .task_process import publish, write_file

RECORD_SUFFIX = ".part.json"
COPY_BLOCK = 1 << 22


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


def part_record(part: str | os.PathLike[str]) -> Path:
    """The record of a part: ``<part>.part.json`` (its ``bytes``, ``lines`` and ``sha256``)."""
    part = Path(part)
    return part.with_name(part.name + RECORD_SUFFIX)


class TsvPartWriter(CorpusStep):
    """Write each batch's lines (``batch.parsed.lines``, as the steps before made them) to this task's part file.

    The only step of a TSV pipeline that serialises: the lines as UTF-8, one gzip member per batch for a ``.gz``
    suffix. The batch is then passed on.
    """

    name = "tsv part writer"
    type = "💽 - WRITER"

    def __init__(self, folder: str | os.PathLike[str], suffix: str = ".tsv") -> None:
        super().__init__()
        self.folder = os.fspath(folder)
        self.suffix = suffix
        self.compress = is_gzip_name(suffix)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Write the part (atomically: it appears under its name when the task's input is exhausted) and its record."""
        target = part_path(self.folder, rank, self.suffix)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = attempt_temp(target)
        digest, size, lines = hashlib.sha256(), 0, 0
        try:
            with open(tmp, "wb") as handle:
                for batch in data or ():
                    if batch.parsed.lines:
                        with self.track_time(unit="batch"):
                            data_bytes = encode_lines(batch.parsed.lines, self.compress)
                            handle.write(data_bytes)
                            digest.update(data_bytes)
                            size += len(data_bytes)
                            lines += len(batch.parsed.lines)
                    yield batch
            record = {"bytes": size, "lines": lines, "sha256": digest.hexdigest()}
            write_file(part_record(target), json.dumps(record) + "\n")
            publish(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def check_parts(parts: Sequence[Path]) -> list[dict[str, Any]]:
    """The records of ``parts`` (raises :class:`CorpusError` for a part or record that is missing)."""
    records = []
    for path in parts:
        try:
            record = json.loads(part_record(path).read_text(encoding="utf-8"))
            size = path.stat().st_size
        except FileNotFoundError:
            raise CorpusError(f"the part {path} of this run or its record is missing: run the same command again to "
                              f"redo its task, or with {option(*RESTART)} to start afresh") from None
        except ValueError:
            raise CorpusError(f"the record of the part {path} is damaged: run the command again with "
                              f"{option(*RESTART)}") \
                from None
        if size != record.get("bytes"):
            raise CorpusError(f"the part {path} is torn or foreign ({size:,} bytes where its task wrote "
                              f"{record.get('bytes')}): run the command again with {option(*RESTART)}")
        records.append(record)
    return records


def concatenate_parts(parts: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str],
                      inputs: Sequence[str | os.PathLike[str]], overwrite: bool, header: str | None = None) -> Path:
    """Join ``parts`` in order into ``output``, after the ``header`` line if any.

    Every part is checked against the record its task wrote (size before anything is written, sha256 while it is
    copied): a part that differs stops the merge (:class:`CorpusError`) and ``output`` is not written. Atomically;
    never over an input; over an existing output only with ``overwrite``.
    """
    paths = [Path(p) for p in parts]
    records = check_parts(paths)
    with atomic_output(output, inputs=inputs, overwrite=overwrite) as tmp, open(tmp, "wb") as out:
        if header:
            out.write(encode_lines([header], is_gzip_name(output)))
        for path, record in zip(paths, records, strict=True):
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                while block := handle.read(COPY_BLOCK):
                    digest.update(block)
                    out.write(block)
            if digest.hexdigest() != record.get("sha256"):
                raise CorpusError(f"the part {path} is torn or foreign (its bytes differ from what its task "
                                  f"recorded): {output} was not written; run the command again with "
                                  f"{option(*RESTART)}")
        if is_gzip_name(output) and out.tell() == 0:
            out.write(gzip.compress(b"", mtime=0))  # an empty but valid gzip file
    return Path(output)


def merge_tsv(spec: Any) -> None:
    """The merge of a TSV command: refuse an input without any valid line, then join the parts in task order."""
    from .runner import check_some_valid

    check_some_valid(spec, spec.options.reading_stage, spec.output)
    parts = [part_path(spec.parts_dir(), rank, spec.options.part_suffix) for rank in range(spec.tasks)]
    concatenate_parts(parts, spec.output, spec.all_inputs, spec.overwrite, spec.options.header)


def part_suffix(output: str | os.PathLike[str]) -> str:
    """The parts' suffix for an output (``.tsv.gz`` parts for a ``.gz`` output)."""
    return ".tsv.gz" if is_gzip_name(output) else ".tsv"

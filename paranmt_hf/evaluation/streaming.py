r"""Streaming embed / score of files, as the papers' ``embed_sentences.py`` and ``score_sentence_pairs.py`` do.

Memory stays bounded: the input is read ``chunk_size`` lines at a time, and embeddings go straight into the output
file (a ``.npy`` header for the counted lines, then float32 rows; or raw float32 rows).

Rows line up with lines. A line is what ends with ``\n`` (a ``\r\n`` ending counts as one; a ``\r`` inside a line
is part of its text), exactly as :func:`count_lines` counts them, so row ``i`` of an output always belongs to line
``i + 1``. Bad input (invalid UTF-8, a pair line without a tab) stops the run with ``file:line`` and leaves no
output: outputs are written under a temporary name and renamed into place only when complete, never over an input,
and over an existing file only with ``overwrite``.
"""

from __future__ import annotations

import gzip
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from typing import IO

import numpy as np

from ..data.sentences import decoded_lines
from ..utils.atomic import atomic_output
from .encoders import SupportsEncode, encode
from .metrics import paired_cosine

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


class InputLineError(ValueError):
    """A line of an input file cannot be read (the message names ``file:line``)."""


def _open_binary(path: PathLike) -> IO[bytes]:
    return gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")  # noqa: SIM115 - caller closes


def count_lines(path: PathLike) -> int:
    """Number of lines (a last line without a newline counts), read in 1 MiB blocks; ``.gz`` is decompressed."""
    n, last = 0, b"\n"
    with _open_binary(path) as handle:
        while block := handle.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def iter_lines(path: PathLike) -> Iterator[str]:
    r"""The lines of a UTF-8 file, split on ``\n`` only (a ``\r`` before it and a leading BOM are removed).

    Raises:
        InputLineError: a line is not valid UTF-8 (``file:line``, byte offset in the line).
    """
    with _open_binary(path) as handle:
        yield from decoded_lines(handle, os.fspath(path), InputLineError)


def iter_chunks(path: PathLike, chunk_size: int) -> Iterator[list[str]]:
    """Lists of at most ``chunk_size`` lines of :func:`iter_lines`."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    lines = iter_lines(path)
    while chunk := list(islice(lines, chunk_size)):
        yield chunk


def _progress(total: int, unit: str) -> object:
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, desc="Embedding" if unit == "sent" else "Scoring", dynamic_ncols=True)


def _encode(encoder: SupportsEncode, texts: list[str], batch_size: int, normalize: bool) -> np.ndarray:
    emb = encode(encoder, texts, batch_size=batch_size)
    if normalize:
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        emb = np.divide(emb, norms, out=np.zeros_like(emb), where=norms > 0)
    return emb


def check_text_input(path: PathLike, what: str = "input") -> None:
    """Refuse an input that is a folder or does not exist, in one sentence, before a model is loaded for it.

    Raises:
        IsADirectoryError / FileNotFoundError: naming ``what`` (the command line passes its flag) and the path.
    """
    if os.path.isdir(path):
        raise IsADirectoryError(f"{what} {path} is a folder: give a text file (one line per sentence or pair)")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{what} {path} does not exist")


def embed_file(
    encoder: SupportsEncode,
    input_path: PathLike,
    output_path: PathLike,
    batch_size: int = 256,
    chunk_size: int = 10000,
    normalize: bool = False,
    raw: bool = False,
    overwrite: bool = False,
) -> tuple[int, int]:
    """Embed each line of ``input_path`` into ``output_path``; returns ``(lines, dim)``.

    ``raw=False`` writes a ``.npy`` (``np.load`` it, with ``mmap_mode="r"`` for big files); ``raw=True`` writes bare
    float32 rows (read with ``np.fromfile(path, dtype=np.float32).reshape(-1, dim)``). Row ``i`` is line ``i + 1``;
    empty lines get a row too. The output appears only when complete (atomic rename).

    Raises:
        InputLineError: invalid UTF-8 (``file:line``), or an empty input; nothing is written.
        OutputExistsError / OutputIsInputError: ``output_path`` exists (without ``overwrite``) or is the input.
    """
    total = count_lines(input_path)
    if total == 0:
        raise InputLineError(f"{input_path} is empty: no line to embed; nothing was written")
    row, dim = 0, 0
    with atomic_output(output_path, [input_path], overwrite) as tmp, open(tmp, "wb") as out:
        bar = _progress(total, "sent")
        try:
            for chunk in iter_chunks(input_path, chunk_size):
                emb = np.ascontiguousarray(_encode(encoder, chunk, batch_size, normalize), dtype=np.float32)
                if row == 0 and not raw:  # sequential writes after a .npy header: no memory map (RSS)
                    dim = int(emb.shape[1])
                    header = {"descr": "<f4", "fortran_order": False, "shape": (total, dim)}
                    np.lib.format.write_array_header_1_0(out, header)
                dim = int(emb.shape[1])
                out.write(emb.tobytes())
                row += len(chunk)
                bar.update(len(chunk))
        finally:
            bar.close()
        if row != total:  # the header promised ``total`` rows: never leave a file that lies
            raise RuntimeError(f"{input_path}: read {row} lines, counted {total}; nothing written")
    return row, dim


@dataclass
class ScoreReport:
    """What :func:`score_file` wrote: one row per input line; lines with an empty side are scored ``nan``."""

    rows: int = 0
    scored: int = 0
    empty_lines: list[int] = field(default_factory=list)

    def describe(self, path: PathLike, shown: int = 10) -> str:
        """One sentence for the user about the ``nan`` rows ('' when there are none)."""
        if not self.empty_lines:
            return ""
        lines = ", ".join(map(str, self.empty_lines[:shown])) + (" ..." if len(self.empty_lines) > shown else "")
        return (f"{len(self.empty_lines)} line(s) of {path} are empty or have an empty sentence: scored nan "
                f"(row kept so rows line up with lines): line(s) {lines}")


@contextmanager
def _open_out(path: PathLike, input_path: PathLike, overwrite: bool) -> Iterator[IO[str]]:
    if str(path) == "-":
        yield sys.stdout
        return
    with atomic_output(path, [input_path], overwrite) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as out:
        yield out


def score_file(
    encoder: SupportsEncode,
    input_path: PathLike,
    output_path: PathLike = "-",
    batch_size: int = 256,
    chunk_size: int = 10000,
    overwrite: bool = False,
) -> ScoreReport:
    """Write ``s1<TAB>s2<TAB>cosine`` for each ``s1<TAB>s2`` line of ``input_path`` (``"-"``: stdout).

    Every line gives one row, so row ``i`` is line ``i + 1``: a blank line, or a pair with an empty or whitespace-only
    side, gets cosine ``nan`` and is listed in the returned :class:`ScoreReport` (``report.describe(path)`` is the
    sentence to show; it is logged at INFO level only, so that it is said once). Columns after the second are
    ignored. A file output appears only when complete.

    Raises:
        ValueError: a non-blank line without a tab (``file:line``); invalid UTF-8 or an empty input
            (:class:`InputLineError`).
    """
    total = count_lines(input_path)
    if total == 0:
        raise InputLineError(f"{input_path} is empty: no pair to score; nothing was written")
    bar = _progress(total, "pair")
    report = ScoreReport()
    try:
        with _open_out(output_path, input_path, overwrite) as out:
            for chunk in iter_chunks(input_path, chunk_size):
                pairs, keep = [], []
                for number, line in enumerate(chunk, start=report.rows + 1):
                    cols = line.split("\t")
                    if len(cols) < 2 and line.strip():
                        raise ValueError(
                            f"{input_path}:{number}: expected 'sentence1<TAB>sentence2', got {line[:80]!r}"
                        )
                    s1, s2 = (cols[0], cols[1]) if len(cols) >= 2 else ("", "")
                    pairs.append((s1, s2))
                    if s1.strip() and s2.strip():
                        keep.append(len(pairs) - 1)
                    else:
                        report.empty_lines.append(number)
                scores = np.full(len(pairs), np.nan)
                if keep:
                    s1 = [pairs[i][0] for i in keep]
                    s2 = [pairs[i][1] for i in keep]
                    emb = _encode(encoder, s1 + s2, batch_size, False)
                    scores[keep] = paired_cosine(emb[: len(s1)], emb[len(s1) :])
                out.writelines(f"{a}\t{b}\t{c:.6f}\n" for (a, b), c in zip(pairs, scores, strict=True))
                report.rows += len(chunk)
                report.scored += len(keep)
                bar.update(len(chunk))
    finally:
        bar.close()
    if report.empty_lines:  # the caller says it once (``paranmt-hf score`` prints ``report.describe``)
        logger.info(report.describe(input_path))
    return report

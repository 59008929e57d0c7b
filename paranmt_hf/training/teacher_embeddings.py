"""Sentence embeddings of a sentence-transformers teacher, computed once per (data, teacher) and cached.

Learning a static table from a teacher's sentence embeddings (:mod:`paranmt_hf.training.tokenlearn`) needs the
teacher's embedding of every training sentence: for all-MiniLM-L6-v2 on one CPU core about 400-550 sentences a
second in bfloat16 (about 150-230 in float32), so minutes for the ~200K English sentences of the main job. The
embeddings are a function of the sentences, the teacher and the precision only, so they are kept in the user cache
(``$PARANMT_HF_CACHE/teacher_embeddings``, default ``~/.cache/paranmt_hf/teacher_embeddings``), keyed by those: a
second run with the same data and teacher reads them in a second.

    from paranmt_hf.training.teacher_embeddings import teacher_embeddings
    targets = teacher_embeddings(sentences, "sentence-transformers/all-MiniLM-L6-v2")   # [n, 384] float32

The cache stores float16 (the targets of a cosine regression need no more); each entry is written atomically with a
JSON record of how it was made (teacher, precision, sentences, seconds).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

PRECISIONS = ("bfloat16", "float32")
"""How the teacher runs on CPU: ``bfloat16`` autocast (about 2.5x faster; cosine ≥ 0.9999 to float32 on our
sentences) or ``float32``."""
CHUNK = 8192
"""Sentences per ``encode`` call (the progress bar's step)."""


def teacher_fingerprint(path: str) -> str:
    """What identifies a teacher: its resolved directory's weight files (name, size, first MiB) or its Hub id."""
    if not os.path.isdir(path):
        return path
    digest = hashlib.sha256()
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if name.endswith((".safetensors", ".bin", ".json")) and os.path.isfile(full):
            digest.update(f"{name}:{os.path.getsize(full)}:".encode())
            with open(full, "rb") as f:
                digest.update(f.read(1 << 20))
    return digest.hexdigest()


def cache_key(sentences: Sequence[str], teacher_id: str, precision: str, batch_size: int) -> str:
    """The cache entry name of these sentences embedded by this teacher at this precision (and batch size)."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"teacher": teacher_id, "precision": precision, "batch_size": batch_size}).encode())
    for sentence in sentences:
        digest.update(sentence.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:24]


def teacher_embeddings(
    sentences: Sequence[str],
    teacher: str = "sentence-transformers/all-MiniLM-L6-v2",
    precision: str = "bfloat16",
    batch_size: int = 128,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    show_progress: bool = True,
    info: dict[str, Any] | None = None,
) -> np.ndarray:
    """The teacher's sentence embeddings of ``sentences`` (float32 ``[n, dim]``), from the cache when there.

    Args:
        sentences: the texts (their order is the rows').
        teacher: a sentence-transformers model (directory, Hub id or bundling package, see
            :func:`paranmt_hf.model.distill.resolve_teacher`).
        precision: ``"bfloat16"`` (CPU autocast) or ``"float32"``.
        batch_size: the teacher's batch size.
        cache_dir: where entries are kept (default: the user cache's ``teacher_embeddings/``).
        use_cache: read and write the cache.
        show_progress: a tqdm bar over the sentences.
        info: filled with what happened: ``cached`` (read from the cache), ``seconds``, ``path`` (the entry).
    """
    from ..model.distill import resolve_teacher
    from ..utils.imports import require

    if precision not in PRECISIONS:
        raise ValueError(f"teacher precision must be one of {PRECISIONS}, got {precision!r}")
    path = resolve_teacher(teacher)
    target = None
    if use_cache:
        from ..utils.paths import cache_dir as user_cache

        folder = Path(cache_dir) if cache_dir is not None else user_cache() / "teacher_embeddings"
        target = folder / f"{cache_key(sentences, teacher_fingerprint(path), precision, batch_size)}.npy"
        if target.is_file():
            logger.info("teacher embeddings of %d sentences from the cache %s", len(sentences), target)
            if info is not None:
                info.update(cached=True, seconds=0.0, path=str(target))
            return np.load(target).astype(np.float32)
    require("sentence_transformers", "st")
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device="cpu")
    started = time.perf_counter()
    dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    out = np.empty((len(sentences), dimension()), dtype=np.float32)
    bar = None
    if show_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sentences), desc="Teacher embeddings", unit="sent")
    try:
        for start in range(0, len(sentences), CHUNK):
            part = list(sentences[start : start + CHUNK])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
                out[start : start + len(part)] = model.encode(part, batch_size=batch_size, convert_to_numpy=True)
            if bar is not None:
                bar.update(len(part))
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - started
    logger.info("teacher embeddings of %d sentences in %.0f s", len(sentences), seconds)
    if info is not None:
        info.update(cached=False, seconds=round(seconds, 1), path=str(target) if target is not None else None)
    if target is not None:
        _store(target, out, {"teacher": teacher, "resolved": path, "precision": precision, "batch_size": batch_size,
                             "sentences": len(sentences), "seconds": round(seconds, 1)})
    return out


def _store(target: Path, embeddings: np.ndarray, record: dict[str, Any]) -> None:
    """Write a cache entry and its JSON record atomically (a concurrent or killed run leaves no partial entry)."""
    from ..utils.atomic import atomic_output

    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(target, overwrite=True) as tmp, open(tmp, "wb") as f:
        np.save(f, embeddings.astype(np.float16))
    with atomic_output(target.with_suffix(".json"), overwrite=True) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


__all__ = ["PRECISIONS", "cache_key", "teacher_embeddings", "teacher_fingerprint"]

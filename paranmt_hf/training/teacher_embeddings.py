"""Sentence embeddings of a sentence-transformers teacher, computed once per (data, teacher) and cached.

Learning a static table from a teacher (:mod:`paranmt_hf.training.tokenlearn`) needs the teacher's embedding of every
training sentence. By default the teacher runs in ONNX Runtime float32 (:mod:`paranmt_hf.training.teacher_onnx`):
the same embeddings as PyTorch float32, faster (``benchmarks/quality``). The embeddings depend only on the
sentences, the teacher, the precision and the engine, so the user cache keeps them, keyed by those and the batch size
(``$PARANMT_HF_CACHE/teacher_embeddings``, default ``~/.cache/paranmt_hf/teacher_embeddings``)::

    from paranmt_hf.training.teacher_embeddings import teacher_embeddings
    targets = teacher_embeddings(sentences, "sentence-transformers/all-MiniLM-L6-v2")   # [n, 384] float32

The cache stores float16 (the targets of a cosine regression need no more); each entry is written atomically with a
JSON record of how it was made (teacher, precision, engine, sentences, seconds).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .teacher_onnx import BATCH_SIZE, teacher_fingerprint

logger = logging.getLogger(__name__)

PRECISIONS = ("float32", "int8", "bfloat16")
"""How the teacher runs on CPU: ``float32`` (its own arithmetic: ONNX Runtime when installed, else PyTorch),
``int8`` (ONNX Runtime, dynamically quantised weights) or ``bfloat16`` (PyTorch autocast)."""
ENGINES = ("auto", "onnxruntime", "torch")
"""What runs the teacher: ``onnxruntime`` (:mod:`paranmt_hf.training.teacher_onnx`: cached export, sorted length
buckets, one thread per core), ``torch`` (``SentenceTransformer.encode``) or ``auto`` (onnxruntime for ``float32``
and ``int8`` when installed, torch for ``bfloat16``)."""
CHUNK = 8192
"""Sentences per ``encode`` call of the torch engine (the progress bar's step)."""


def cache_key(sentences: Sequence[str], teacher_id: str, precision: str, batch_size: int,
              engine: str = "torch") -> str:
    """The cache entry name of these sentences embedded by this teacher at this precision, engine and batch size."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"teacher": teacher_id, "precision": precision, "batch_size": batch_size,
                              **({"engine": engine} if engine != "torch" else {})}).encode())
    for sentence in sentences:
        digest.update(sentence.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:24]


def resolve_engine(precision: str, engine: str = "auto") -> str:
    """The engine that runs ``precision`` (``auto``: onnxruntime where installed and able, else torch).

    Raises:
        ValueError: an unknown precision or engine, or a pair that does not go together (``int8`` needs
            onnxruntime, ``bfloat16`` torch).
        MissingExtraError: ``onnxruntime`` asked for (or ``int8``) but not installed.
    """
    from . import teacher_onnx

    if precision not in PRECISIONS:
        raise ValueError(f"teacher precision must be one of {PRECISIONS}, got {precision!r}")
    if engine not in ENGINES:
        raise ValueError(f"teacher engine must be one of {ENGINES}, got {engine!r}")
    if engine == "auto":
        engine = "torch" if precision == "bfloat16" or (precision == "float32" and not teacher_onnx.available()) \
            else "onnxruntime"
    if precision == "bfloat16" and engine != "torch":
        raise ValueError("the bfloat16 teacher runs in torch (engine 'torch'); onnxruntime runs float32 or int8")
    if precision == "int8" and engine != "onnxruntime":
        raise ValueError("the int8 teacher runs in onnxruntime (engine 'onnxruntime' or 'auto')")
    if engine == "onnxruntime" and not teacher_onnx.available():
        from ..utils.imports import require

        require("onnxruntime", "peers")
        require("onnx", "peers")
    return engine


def teacher_encoder(path: str, precision: str = "float32", engine: str = "auto", batch_size: int = BATCH_SIZE,
                    threads: int | None = None) -> Callable[..., np.ndarray]:
    """A function ``encode(sentences, show_progress=True) -> [n, dim] float32`` of the teacher at ``path``.

    Args:
        path: the teacher, resolved (:func:`paranmt_hf.model.distill.resolve_teacher`).
        precision: one of :data:`PRECISIONS`.
        engine: one of :data:`ENGINES`.
        batch_size: sentences per forward pass.
        threads: threads of the pass (``None``: one per core of this process); torch's thread count is restored
            after each call.
    """
    from . import teacher_onnx

    engine = resolve_engine(precision, engine)
    threads = threads or teacher_onnx.cores()
    if engine == "onnxruntime":
        onnx_teacher = teacher_onnx.OnnxTeacher(path, precision, threads=threads)

        def encode_onnx(sentences: Sequence[str], show_progress: bool = True) -> np.ndarray:
            return onnx_teacher.encode(sentences, batch_size=batch_size, show_progress=show_progress)

        return encode_onnx
    from ..utils.imports import require

    require("sentence_transformers", "st")
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device="cpu")
    dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension

    def encode_torch(sentences: Sequence[str], show_progress: bool = True) -> np.ndarray:
        out = np.empty((len(sentences), dimension()), dtype=np.float32)
        bar = None
        if show_progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(sentences), desc="Teacher embeddings", unit="sent")
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            for start in range(0, len(sentences), CHUNK):
                part = list(sentences[start : start + CHUNK])
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
                    out[start : start + len(part)] = model.encode(part, batch_size=batch_size,
                                                                  convert_to_numpy=True)
                if bar is not None:
                    bar.update(len(part))
        finally:
            torch.set_num_threads(previous)
            if bar is not None:
                bar.close()
        return out

    return encode_torch


def cache_entry(sentences: Sequence[str], teacher: str, precision: str, batch_size: int = BATCH_SIZE,
                engine: str = "auto", cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the cache keeps these sentences' embeddings by this teacher (whether or not it holds them yet)."""
    from ..model.distill import resolve_teacher
    from ..utils.paths import cache_dir as user_cache

    path = resolve_teacher(teacher)
    folder = Path(cache_dir) if cache_dir is not None else user_cache() / "teacher_embeddings"
    key = cache_key(sentences, teacher_fingerprint(path), precision, batch_size, resolve_engine(precision, engine))
    return folder / f"{key}.npy"


def teacher_embeddings(
    sentences: Sequence[str],
    teacher: str = "sentence-transformers/all-MiniLM-L6-v2",
    precision: str = "float32",
    batch_size: int = BATCH_SIZE,
    cache_dir: str | os.PathLike[str] | None = None,
    use_cache: bool = True,
    show_progress: bool = True,
    info: dict[str, Any] | None = None,
    engine: str = "auto",
    threads: int | None = None,
) -> np.ndarray:
    """The teacher's sentence embeddings of ``sentences`` (float32 ``[n, dim]``), from the cache when there.

    Args:
        sentences: the texts (their order is the rows').
        teacher: the sentence-transformers teacher, as :func:`~paranmt_hf.model.distill.resolve_teacher` accepts it.
        precision: one of :data:`PRECISIONS`.
        batch_size: the teacher's batch size.
        cache_dir: where entries are kept (default: the user cache's ``teacher_embeddings/``).
        use_cache: read and write the cache.
        show_progress: a tqdm bar over the sentences.
        info: filled with what happened: ``cached`` (read from the cache), ``seconds``, ``path`` (the entry),
            ``engine``, ``precision``, ``threads``, ``sentences_per_second``.
        engine: one of :data:`ENGINES`.
        threads: threads of the pass (``None``: one per core of this process).
    """
    from ..model.distill import resolve_teacher
    from .teacher_onnx import cores

    engine = resolve_engine(precision, engine)
    path = resolve_teacher(teacher)
    target = cache_entry(sentences, teacher, precision, batch_size, engine, cache_dir) if use_cache else None
    if target is not None and target.is_file():
        logger.info("teacher embeddings of %d sentences from the cache %s", len(sentences), target)
        if info is not None:
            info.update(cached=True, seconds=0.0, path=str(target), engine=engine, precision=precision)
        return np.load(target).astype(np.float32)
    threads = threads or cores()
    started = time.perf_counter()
    encode = teacher_encoder(path, precision, engine, batch_size, threads)
    loaded = time.perf_counter()
    out = encode(sentences, show_progress=show_progress)
    seconds = time.perf_counter() - started
    rate = len(sentences) / max(time.perf_counter() - loaded, 1e-9)
    logger.info("teacher embeddings of %d sentences in %.0f s (%s %s, %d threads)", len(sentences), seconds, engine,
                precision, threads)
    if info is not None:
        info.update(cached=False, seconds=round(seconds, 1), path=str(target) if target is not None else None,
                    engine=engine, precision=precision, threads=threads, sentences_per_second=round(rate, 1))
    if target is not None:
        _store(target, out, {"teacher": teacher, "resolved": path, "precision": precision, "engine": engine,
                             "batch_size": batch_size, "threads": threads, "sentences": len(sentences),
                             "seconds": round(seconds, 1)})
    return out


def _store(target: Path, embeddings: np.ndarray, record: dict[str, Any]) -> None:
    """Write a cache entry and its JSON record atomically (a concurrent or killed run leaves no partial entry)."""
    from ..utils.atomic import atomic_output

    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(target, overwrite=True) as tmp, open(tmp, "wb") as f:
        np.save(f, embeddings.astype(np.float16))
    with atomic_output(target.with_suffix(".json"), overwrite=True) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


__all__ = ["ENGINES", "PRECISIONS", "cache_entry", "cache_key", "resolve_engine", "teacher_embeddings",
           "teacher_encoder", "teacher_fingerprint"]

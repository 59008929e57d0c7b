"""Export a model to another form (ONNX fp32/int8, float16/int8 weight storage) and check it against PyTorch.

:func:`export_model` writes the export atomically into its output folder only after the exported model reproduced
the PyTorch model's embeddings (:func:`compare`); a failed check raises :class:`ExportCheckError` and writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .encoder import ParaNMTEncoder

FORMATS = ("onnx", "onnx-int8", "fp16", "int8", "static")
"""ONNX graph (fp32 / int8 weights), a model directory with float16 / int8 weight storage, or a stock
sentence-transformers ``StaticEmbedding`` model (loads in sentence-transformers and model2vec without custom code)."""

VERIFY_SENTENCES = [
    "A man is playing a guitar.",
    "Two dogs are running through a field of snow!",
    "I don't think it's 3.5 dollars, is it?",
    "",
]

MIN_COSINE = {"onnx": 0.99999, "fp16": 0.9999, "onnx-int8": 0.999, "int8": 0.999, "static": 0.99999}
"""Smallest cosine between an exported embedding and PyTorch's that the check accepts, per format."""
ZERO = 1e-6


class ExportCheckError(RuntimeError):
    """The exported model does not reproduce the PyTorch model."""


def compare(reference: Any, got: Any, fmt: str) -> tuple[float, float]:
    """``(max abs diff, min cosine)`` of exported vs PyTorch embeddings; raises if they disagree.

    A row that is zero in both (e.g. an empty sentence whose unknown-token row is zero) agrees (cosine 1); a row
    that is zero in one only disagrees (cosine 0).

    Raises:
        ExportCheckError: shapes differ, a value is not finite, or a cosine is below ``MIN_COSINE[fmt]``.
    """
    import numpy as np

    reference, got = np.asarray(reference, dtype=np.float64), np.asarray(got, dtype=np.float64)
    if reference.shape != got.shape:
        raise ExportCheckError(f"exported model gives shape {got.shape}, PyTorch {reference.shape}")
    if not np.isfinite(got).all():
        raise ExportCheckError("exported model gives non-finite embeddings")
    na, nb = np.linalg.norm(reference, axis=1), np.linalg.norm(got, axis=1)
    both_zero = (na <= ZERO) & (nb <= ZERO)
    cos = np.where(both_zero, 1.0, (reference * got).sum(1) / np.maximum(na * nb, 1e-300))
    cos = np.where(~both_zero & ((na <= ZERO) | (nb <= ZERO)), 0.0, cos)
    diff, worst = float(np.abs(got - reference).max(initial=0.0)), float(cos.min(initial=1.0))
    if worst < MIN_COSINE[fmt]:
        row = int(cos.argmin())
        raise ExportCheckError(f"exported model disagrees with PyTorch on {VERIFY_SENTENCES[row]!r}: cosine "
                               f"{worst:.6f} < {MIN_COSINE[fmt]} (max abs diff {diff:.2e})")
    return diff, worst


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_model` wrote: the exported file or folder, and the check (None when not verified)."""

    path: Path
    max_abs_diff: float | None = None
    min_cosine: float | None = None


def export_model(
    encoder: ParaNMTEncoder,
    output: str | os.PathLike[str],
    fmt: str,
    *,
    verify: bool = True,
    inputs: Sequence[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> ExportResult:
    """Export ``encoder`` to ``output`` as ``fmt`` (one of :data:`FORMATS`), checked against PyTorch.

    ``onnx`` / ``onnx-int8``: ``model.onnx`` / ``model_int8.onnx`` and the tokenizer files (averaging encoders and
    their combinations; :mod:`paranmt_hf.model.onnx`). ``fp16`` / ``int8``: a model directory with float16 or int8
    weights (:mod:`paranmt_hf.model.storage`). ``static``: a stock ``StaticEmbedding`` model
    (:func:`paranmt_hf.model.st_layout.write_static_embedding`: single averaging encoders whose unknown-token rows
    are zero; else ``ValueError``), checked through ``SentenceTransformer(output)``.

    Args:
        encoder: the model to export.
        output: the output folder (written atomically).
        fmt: the export format.
        verify: compare the exported model's embeddings with PyTorch's before anything is written.
        inputs: files the output must not replace (e.g. the model directory).
        overwrite: replace an existing ``output``.

    Raises:
        ExportCheckError: the exported model does not reproduce the PyTorch model (nothing is written).
    """
    from ..utils.atomic import atomic_output
    from .encoder import ParaNMTEncoder

    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {FORMATS}")
    reference = encoder.encode(VERIFY_SENTENCES) if verify else None
    with atomic_output(output, list(inputs), overwrite, directory=True) as tmp:
        if fmt in ("onnx", "onnx-int8"):
            from .onnx import OnnxEncoder, export_onnx

            path = export_onnx(encoder, tmp, int8=fmt == "onnx-int8")
            got = OnnxEncoder(path).encode(VERIFY_SENTENCES) if verify else None
        elif fmt == "static":
            from sentence_transformers import SentenceTransformer

            from .st_layout import write_static_embedding

            write_static_embedding(encoder.model, encoder.tokenizer, tmp)
            path = Path(tmp)
            got = SentenceTransformer(str(path), device="cpu").encode(VERIFY_SENTENCES) if verify else None
        else:
            encoder.save_pretrained(tmp, weight_dtype="float16" if fmt == "fp16" else "int8")
            path = Path(tmp)
            got = ParaNMTEncoder.from_pretrained(path).encode(VERIFY_SENTENCES) if verify else None
        check = None if got is None else compare(reference, got, fmt)
    final = Path(output) / Path(path).relative_to(tmp)
    if check is None:
        return ExportResult(final)
    return ExportResult(final, *check)

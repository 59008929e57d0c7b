"""``paranmt-hf export``: ONNX (fp32 / int8) export, or float16 / int8 weight storage, of a saved model."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .model_loading import add_trust_remote_code_flag, check_model_code

FORMATS = ("onnx", "onnx-int8", "fp16", "int8")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``export`` sub-command."""
    p = subparsers.add_parser(
        "export",
        help="export a model to ONNX (fp32/int8) or re-save it with float16/int8 weights",
        description="onnx / onnx-int8: write model.onnx / model_int8.onnx (inputs: flat input_ids + offsets; output: "
        "embeddings) and the tokenizer files, for averaging encoders and their combinations. fp16 / int8: a model "
        "directory with float16 weights (every loader) or int8 weights (paranmt_hf only), computed in float32 after "
        "loading. The export is checked against PyTorch unless --no-verify (a failed check exits non-zero and writes "
        "nothing), written atomically, and never replaces the input model, or an existing folder without --overwrite.",
    )
    p.add_argument("model_dir", help="model directory saved by paranmt_hf")
    p.add_argument("--format", choices=FORMATS, required=True)
    p.add_argument("--output", required=True, help="output directory")
    p.add_argument("--no-verify", action="store_true", help="skip the check against PyTorch on a few sentences")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output (never the input model)")
    add_trust_remote_code_flag(p)
    p.set_defaults(func=run)


VERIFY_SENTENCES = [
    "A man is playing a guitar.",
    "Two dogs are running through a field of snow!",
    "I don't think it's 3.5 dollars, is it?",
    "",
]

MIN_COSINE = {"onnx": 0.99999, "fp16": 0.9999, "onnx-int8": 0.999, "int8": 0.999}
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


def run(args: argparse.Namespace) -> int:
    """Export into a temporary folder, compare with the PyTorch model, then move it into place."""
    from ..encoder import ParaNMTEncoder
    from ..utils.atomic import OutputExistsError, OutputIsInputError, atomic_output, check_output

    try:
        check_output(args.output, [args.model_dir], args.overwrite)
    except (OutputExistsError, OutputIsInputError) as err:
        raise SystemExit(f"paranmt-hf export: {err}") from err
    check_model_code(args)
    encoder = ParaNMTEncoder.from_pretrained(args.model_dir, trust_remote_code=args.trust_remote_code)
    reference = encoder.encode(VERIFY_SENTENCES)
    try:
        with atomic_output(args.output, [args.model_dir], args.overwrite, directory=True) as tmp:
            if args.format in ("onnx", "onnx-int8"):
                from ..export.onnx import OnnxEncoder, export_onnx

                path = export_onnx(encoder, tmp, int8=args.format == "onnx-int8")
                got = None if args.no_verify else OnnxEncoder(path).encode(VERIFY_SENTENCES)
            else:
                from ..export.quantize import save_quantized

                path = save_quantized(encoder, tmp, "float16" if args.format == "fp16" else "int8")
                got = None if args.no_verify else ParaNMTEncoder.from_pretrained(path).encode(VERIFY_SENTENCES)
            check = None if got is None else compare(reference, got, args.format)
    except ExportCheckError as err:
        raise SystemExit(f"paranmt-hf export: check vs PyTorch failed, nothing written: {err}") from err
    print(f"wrote {Path(args.output) / Path(path).relative_to(tmp)}")  # noqa: T201 - the command's output
    if check is not None:
        print(f"check vs PyTorch: max abs diff {check[0]:.2e}, min cosine {check[1]:.6f}")  # noqa: T201
    return 0

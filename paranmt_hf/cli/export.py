"""``paranmt-hf export``: ONNX (fp32 / int8) export, or float16 / int8 weight storage, of a saved model."""

from __future__ import annotations

import argparse

FORMATS = ("onnx", "onnx-int8", "fp16", "int8")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``export`` sub-command."""
    p = subparsers.add_parser(
        "export",
        help="export a model to ONNX (fp32/int8) or re-save it with float16/int8 weights",
        description="onnx / onnx-int8: write model.onnx / model_int8.onnx (inputs: flat input_ids + offsets; output: "
        "embeddings) and the tokenizer files, for single averaging encoders (word, trigram, sp); checked against "
        "PyTorch unless --no-verify. fp16 / int8: a model directory with float16 weights (every loader) or int8 "
        "weights (paranmt_hf only), computed in float32 after loading.",
    )
    p.add_argument("model_dir", help="model directory saved by paranmt_hf")
    p.add_argument("--format", choices=FORMATS, required=True)
    p.add_argument("--output", required=True, help="output directory")
    p.add_argument("--no-verify", action="store_true", help="skip the check against PyTorch on a few sentences")
    p.set_defaults(func=run)


VERIFY_SENTENCES = [
    "A man is playing a guitar.",
    "Two dogs are running through a field of snow!",
    "I don't think it's 3.5 dollars, is it?",
    "",
]


def run(args: argparse.Namespace) -> int:
    """Export and, unless ``--no-verify``, compare with the PyTorch model."""
    import numpy as np

    from ..encoder import ParaNMTEncoder

    encoder = ParaNMTEncoder.from_pretrained(args.model_dir)
    reference = encoder.encode(VERIFY_SENTENCES)
    if args.format in ("onnx", "onnx-int8"):
        from ..export.onnx import OnnxEncoder, export_onnx

        path = export_onnx(encoder, args.output, int8=args.format == "onnx-int8")
        got = OnnxEncoder(path).encode(VERIFY_SENTENCES) if not args.no_verify else None
    else:
        from ..export.quantize import save_quantized

        path = save_quantized(encoder, args.output, "float16" if args.format == "fp16" else "int8")
        got = ParaNMTEncoder.from_pretrained(path).encode(VERIFY_SENTENCES) if not args.no_verify else None
    print(f"wrote {path}")  # noqa: T201 - the command's output
    if got is not None:
        cos = (got * reference).sum(1) / np.maximum(
            np.linalg.norm(got, axis=1) * np.linalg.norm(reference, axis=1), 1e-12
        )
        print(f"check vs PyTorch: max abs diff {np.abs(got - reference).max():.2e}, min cosine {cos.min():.6f}")  # noqa: T201
    return 0

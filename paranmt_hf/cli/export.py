"""``paranmt-hf export``: ONNX (fp32 / int8) export, or float16 / int8 weight storage, of a saved model."""

from __future__ import annotations

import argparse

from ..model.export import FORMATS
from .errors import UsageError
from .model_loading import add_model_argument, add_trust_remote_code_flag, check_model_code, locate
from .progress import add_progress_flag


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``export`` sub-command."""
    p = subparsers.add_parser(
        "export",
        help="export a model to ONNX (fp32/int8), re-save it with float16/int8 weights, or as a stock StaticEmbedding",
        description="onnx / onnx-int8: write model.onnx / model_int8.onnx (inputs: flat input_ids + offsets; output: "
        "embeddings) and the tokenizer files, for averaging encoders and their combinations. fp16 / int8: a model "
        "directory with float16 weights (every loader) or int8 weights (paranmt_hf only), computed in float32 after "
        "loading. static: a stock sentence-transformers StaticEmbedding folder (SentenceTransformer and model2vec "
        "load it without custom code; single averaging models whose unknown-token rows are zero). The export is "
        "checked against PyTorch unless --no-verify (a failed check exits non-zero and writes "
        "nothing), written atomically, and never replaces the input model, or an existing folder without --overwrite.",
    )
    add_model_argument(p, "model folder saved by paranmt_hf, or Hub id (org/name, or org/name@REVISION)")
    p.add_argument("--format", choices=FORMATS, required=True,
                   help="onnx: model.onnx, float32 (runs with onnxruntime, no torch); onnx-int8: model_int8.onnx, "
                   "int8 embedding rows; fp16: a model directory with float16 weights (every loader); int8: int8 "
                   "weights (paranmt_hf only)")
    p.add_argument("--output", required=True, help="output directory")
    p.add_argument("--no-verify", action="store_true", help="skip the check against PyTorch (every table row within "
                   "the format's rounding, and a sample of sentences)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output (never the input model)")
    add_progress_flag(p)
    add_trust_remote_code_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export, check against the PyTorch model, report."""
    from ..model.encoder import ParaNMTEncoder
    from ..model.export import VERIFY_SENTENCES, ExportCheckError, export_model, static_format_problem
    from ..utils.atomic import check_output
    from ..utils.content_hash import model_files
    from ..utils.imports import require_extras

    if args.format.startswith("onnx"):
        require_extras("onnx", feature="ONNX export")
    locate(args)  # a Hub id: its snapshot in the Hub's cache
    check_output(args.output, [args.model_dir, *model_files(args.model_dir)], args.overwrite, directory=True)
    if args.format == "static":  # from config.json, before the model is loaded
        problem = static_format_problem(args.model_dir)
        if problem:
            raise UsageError(problem)
    check_model_code(args)
    encoder = ParaNMTEncoder.from_pretrained(args.model_dir, trust_remote_code=args.trust_remote_code)
    try:
        result = export_model(encoder, args.output, args.format, verify=not args.no_verify,
                              inputs=[args.model_dir], overwrite=args.overwrite)
    except ExportCheckError as err:  # says what was checked and that nothing was written
        raise ExportCheckError(f"check vs PyTorch failed, nothing written: {err}") from err
    print(f"wrote {result.path}")  # noqa: T201 - the command's output
    if result.min_cosine is not None:
        print(f"check vs PyTorch: {result.rows_checked:,} table rows within the format's rounding; "  # noqa: T201
              f"{len(VERIFY_SENTENCES)} sentences: max abs diff {result.max_abs_diff:.2e}, min cosine "
              f"{result.min_cosine:.6f}")
    return 0

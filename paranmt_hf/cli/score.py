"""``paranmt-hf score``: cosine similarity of sentence pairs (``s1<TAB>s2`` per line), written as ``s1 s2 cos``."""

from __future__ import annotations

import argparse
from typing import Any

from .model_loading import add_trust_remote_code_flag, load_model
from .progress import add_progress_flag


def add_parser(subparsers: Any) -> None:
    """Register ``score``."""
    p = subparsers.add_parser(
        "score", help="cosine similarity of tab-separated sentence pairs",
        description="Read 'sentence1<TAB>sentence2[<TAB>...]' lines from --input and write "
        "'sentence1<TAB>sentence2<TAB>cosine' lines to --output (stdout by default), chunk by chunk. Row i is line "
        "i+1: a blank line or a pair with an empty sentence is scored nan (and reported). A file output appears only "
        "when complete and never replaces the input, a file of the model folder, or an existing file without "
        "--overwrite. An empty input is an error.",
    )
    p.add_argument("model_dir", help="model directory (ParaNMT, sentence-transformers or model2vec)")
    p.add_argument("--input", required=True, help="UTF-8 TSV file of sentence pairs")
    p.add_argument("--output", default="-", help="output TSV (default: stdout)")
    p.add_argument("--batch-size", type=int, default=256, help="sentences encoded per batch (default 256)")
    p.add_argument("--chunk-size", type=int, default=10000, help="pairs read and scored per chunk")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    add_progress_flag(p)
    add_trust_remote_code_flag(p)
    p.set_defaults(func=run, user_errors=(ValueError,))  # score_file's ValueError: a malformed input line


def run(args: argparse.Namespace) -> int:
    """Score every pair."""
    import sys

    from ..evaluation.streaming import score_file
    from ..utils.atomic import check_output
    from ..utils.content_hash import model_files

    if args.output != "-":
        check_output(args.output, [args.input, *model_files(args.model_dir)], args.overwrite)
    encoder = load_model(args)
    report = score_file(encoder, args.input, args.output, batch_size=args.batch_size,
                        chunk_size=args.chunk_size, overwrite=args.overwrite)
    if report.empty_lines:
        print(f"paranmt-hf score: {report.describe(args.input)}", file=sys.stderr)
    return 0

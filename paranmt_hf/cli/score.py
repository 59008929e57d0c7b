"""``paranmt-hf score``: cosine similarity of sentence pairs (``s1<TAB>s2`` per line), written as ``s1 s2 cos``."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(subparsers: Any) -> None:
    """Register ``score``."""
    p = subparsers.add_parser(
        "score", help="cosine similarity of tab-separated sentence pairs",
        description="Read 'sentence1<TAB>sentence2[<TAB>...]' lines from --input and write "
        "'sentence1<TAB>sentence2<TAB>cosine' lines to --output (stdout by default), chunk by chunk.",
    )
    p.add_argument("model_dir", help="model directory (ParaNMT, sentence-transformers or model2vec)")
    p.add_argument("--input", required=True, help="UTF-8 TSV file of sentence pairs")
    p.add_argument("--output", default="-", help="output TSV (default: stdout)")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--chunk-size", type=int, default=10000, help="pairs read and scored per chunk")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Score every pair."""
    from ..evaluation.encoders import load_encoder
    from ..evaluation.streaming import score_file

    encoder = load_encoder(args.model_dir)
    try:
        score_file(encoder, args.input, args.output, batch_size=args.batch_size, chunk_size=args.chunk_size)
    except ValueError as err:
        raise SystemExit(f"paranmt-hf score: {err}") from err
    return 0

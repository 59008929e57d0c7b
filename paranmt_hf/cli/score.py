"""``paranmt-hf score``: cosine similarity of sentence pairs (``s1<TAB>s2`` per line), written as ``s1 s2 cos``.

Read 'sentence1<TAB>sentence2[<TAB>...]' lines from --input and write 'sentence1<TAB>sentence2<TAB>cosine' lines to
--output (stdout by default), chunk by chunk. Row i is line i+1: a blank line or a pair with an empty sentence is
scored nan (and reported). A file output appears only when complete and never replaces the input, a file of the
model folder, or an existing file without --overwrite. An empty input is an error.
"""

from __future__ import annotations

import argparse
from typing import Any

from .model_loading import load_model, locate
from .parsers import add_file_io, command_parser

DESCRIPTION = (__doc__ or "").split("\n\n", 1)[-1]
"""The command's description: the module's docstring after its first line."""


def add_parser(subparsers: Any) -> None:
    """Register ``score``."""
    p = command_parser(subparsers, "score", "cosine similarity of tab-separated sentence pairs", DESCRIPTION,
                       fill=True)
    add_file_io(p, "UTF-8 TSV file of sentence pairs", "output TSV (default: stdout)", output_default="-",
                chunk_size="pairs")
    p.set_defaults(func=run, user_errors=(ValueError,))  # score_file's ValueError: a malformed input line


def run(args: argparse.Namespace) -> int:
    """Score every pair."""
    import sys

    from ..evaluation.streaming import check_text_input, score_file
    from ..utils.atomic import check_output
    from ..utils.content_hash import model_files

    check_text_input(args.input, "--input")  # before the model loads
    locate(args)  # a Hub id: its snapshot in the Hub's cache
    if args.output != "-":
        check_output(args.output, [args.input, *model_files(args.model_dir)], args.overwrite, directory=False)
    encoder = load_model(args)
    report = score_file(encoder, args.input, args.output, batch_size=args.batch_size,
                        chunk_size=args.chunk_size, overwrite=args.overwrite)
    if report.empty_lines:
        print(f"paranmt-hf score: {report.describe(args.input)}", file=sys.stderr)
    return 0

r"""``paranmt-hf embed``: embed a text file, one sentence per line, into a .npy file (streaming, bounded memory).

Embed every line of --input (empty lines included, so row i is line i+1; lines end at \n only) into --output. Reads
--chunk-size lines at a time and writes each chunk straight into the output file, so memory stays bounded whatever
the number of lines. One very long line is held and tokenised whole: it costs about 25 (word models) to 65
(trigram+word) times its size while it is encoded (a 10 MB line adds 0.3-0.7 GB to the ~0.5 GB of the model and
libraries); split such lines first. The output appears only when complete (invalid UTF-8 or an empty input stops
with a message and writes nothing) and never replaces the input, a file of the model folder, or an existing file
without --overwrite.
"""

from __future__ import annotations

import argparse
from typing import Any

from .model_loading import load_model, locate
from .parsers import add_file_io, command_parser

DESCRIPTION = (__doc__ or "").split("\n\n", 1)[-1]
"""The command's description: the module's docstring after its first line."""


def add_parser(subparsers: Any) -> None:
    """Register ``embed``."""
    p = command_parser(subparsers, "embed", "embed one sentence per line into .npy (streaming)", DESCRIPTION,
                       fill=True)
    add_file_io(p, "UTF-8 text file, one sentence per line", "output .npy file ([lines, dim] float32)")
    p.add_argument("--format", choices=["npy", "raw"], default="npy",
                   help="npy (default) or raw float32 rows with no header (the papers' / LASER's .tofile)")
    p.add_argument("--normalize", action="store_true", help="L2-normalise the embeddings")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Count lines, then encode and write chunk by chunk."""
    from ..evaluation.streaming import check_text_input, embed_file
    from ..utils.atomic import check_output
    from ..utils.content_hash import model_files

    check_text_input(args.input, "--input")  # before the model loads
    locate(args)  # a Hub id: its snapshot in the Hub's cache
    check_output(args.output, [args.input, *model_files(args.model_dir)], args.overwrite, directory=False)
    encoder = load_model(args)
    n, dim = embed_file(encoder, args.input, args.output, batch_size=args.batch_size, chunk_size=args.chunk_size,
                        normalize=args.normalize, raw=args.format == "raw", overwrite=args.overwrite)
    print(f"wrote {n} x {dim} float32 embeddings to {args.output}")  # noqa: T201 - the command's output
    return 0

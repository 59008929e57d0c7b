"""``paranmt-hf build``: build a new, untrained ParaNMT model (tokenizers + config + weights) from a corpus."""

from __future__ import annotations

import argparse

from .errors import UsageError
from .parsers import add_corpus_flags, command_parser
from .progress import add_progress_flag
from .recipe_flags import MODEL_FLAGS, add_recipe_flags, recipe_from_args, recipe_help

EPILOG = """examples:
  paranmt-hf build --recipe acl2018-trigram --input corpus.tsv.gz --output trigram/   # ParaNMT-50M §5.2
  paranmt-hf build --recipe pras-sp --input corpus.tsv.gz --output sp-1024/            # PRAS SP-1024
  paranmt-hf build --kind trigram+word --word-vectors glove-6b-50d --input corpus.txt --output m/"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``build`` sub-command."""
    p = command_parser(
        subparsers, "build", "build an untrained model directory from a corpus (any encoder kind or combination)",
        "Build tokenizer(s), config and randomly initialised (or word-vector initialised) weights and save a model "
        "directory that loads with paranmt_hf, AutoModel and sentence-transformers. The model flags are those of "
        "`paranmt-hf train`: `build --recipe R` writes the untrained model `train --recipe R` starts from.",
        EPILOG, fill=True)
    p.add_argument("--recipe", default=None, help=f"start from a preset's model fields; {recipe_help()}")
    p.add_argument("--input", nargs="+", required=True, help="text or TSV files (.gz ok)")
    add_corpus_flags(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random initial weights (default 0)")
    p.add_argument("--output", required=True, help="model directory to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    add_progress_flag(p)
    add_recipe_flags(p, MODEL_FLAGS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build and save the model."""
    from ..data.sentences import iter_sentences
    from ..training.initial_model import build_initial_encoder
    from ..training.plan import model_spec
    from ..training.recipes import model_extras
    from ..utils.atomic import check_output
    from ..utils.imports import require_extras

    if not args.recipe and args.kind is None:
        raise UsageError("give --kind (or --recipe)")
    recipe = recipe_from_args(args, MODEL_FLAGS)
    require_extras(*model_extras(recipe), feature="this model")
    check_output(args.output, args.input, args.overwrite)
    sentences = list(iter_sentences(args.input, args.columns, args.limit))
    encoder = build_initial_encoder(model_spec(recipe), sentences, args.seed)
    encoder.save_pretrained(args.output)
    print(f"saved {encoder!r} to {args.output}")
    return 0

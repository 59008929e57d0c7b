"""``paranmt-hf build``: build a new, untrained ParaNMT model (tokenizers + config + weights) from a corpus."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``build`` sub-command."""
    p = subparsers.add_parser(
        "build",
        help="build an untrained model directory from a corpus (any encoder kind or combination)",
        description="Build tokenizer(s), config and randomly initialised (or word-vector initialised) weights and "
        "save a model directory that loads with paranmt_hf, AutoModel and sentence-transformers.",
    )
    p.add_argument(
        "--kind",
        required=True,
        help="word, trigram, sp, subword, lstm, bilstm, gran, or a combination (trigram+word, trigram+subword)",
    )
    p.add_argument("--input", nargs="+", required=True, help="text or TSV files (.gz ok)")
    p.add_argument("--columns", default="all", help="TSV columns to read, e.g. '0,1'")
    p.add_argument("--limit", type=int, default=None, help="read at most this many lines per file")
    p.add_argument("--vocab-size", type=int, default=None, help="per-component vocabulary size")
    p.add_argument("--embedding-dim", type=int, default=300)
    p.add_argument("--rnn-hidden-size", type=int, default=None)
    p.add_argument("--token-type", choices=["word", "sp"], default="word", help="tokens of recurrent encoders")
    p.add_argument("--combination", choices=["concat", "add"], default="concat")
    p.add_argument("--pooling", choices=["mean", "max"], default="mean")
    p.add_argument("--word-vectors", default=None, help="e.g. glove-6b-50d or a GloVe text file")
    p.add_argument("--min-count", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--teacher",
        default=None,
        help="subword tables from model2vec's distillation of this sentence-transformers model (needs the peers "
        "extra), e.g. sentence-transformers/all-MiniLM-L6-v2; without it subword trains a WordPiece vocabulary",
    )
    p.add_argument("--teacher-pca-dims", type=int, default=256, help="PCA size of the distilled subword table")
    p.add_argument("--output", required=True, help="model directory to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build and save the model."""
    from ..training.recipes import Recipe
    from ..training.trainer import build_initial_encoder
    from .io import iter_sentences

    recipe = Recipe(
        kind=args.kind,
        vocab_size=args.vocab_size,
        embedding_dim=args.embedding_dim,
        rnn_hidden_size=args.rnn_hidden_size,
        token_type=args.token_type,
        min_count=args.min_count,
        word_vectors=args.word_vectors,
        combination=args.combination,
        pooling=args.pooling,
        teacher=args.teacher,
        teacher_pca_dims=args.teacher_pca_dims,
    )
    encoder = build_initial_encoder(recipe, list(iter_sentences(args.input, args.columns, args.limit)), args.seed)
    encoder.save_pretrained(args.output)
    print(f"saved {encoder!r} to {args.output}")
    return 0

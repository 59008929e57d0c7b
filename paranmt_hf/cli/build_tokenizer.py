"""``paranmt-hf build-tokenizer``: build a word, trigram, unigram (sentencepiece-style) or subword tokenizer."""

from __future__ import annotations

import argparse

from ..model.tokenization import MIN_VOCAB_SIZE, TOKENIZER_BUILDERS
from .parsers import add_corpus_flags, command_parser
from .progress import add_progress_flag
from .recipe_flags import NON_NEGATIVE, Range, checked_number

VOCAB_SIZE = Range(lambda v: v >= MIN_VOCAB_SIZE, f">= {MIN_VOCAB_SIZE} ([PAD], [UNK] and one token)")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``build-tokenizer`` sub-command."""
    p = command_parser(
        subparsers, "build-tokenizer",
        "build a " + " / ".join(TOKENIZER_BUILDERS) + " tokenizer from text or TSV files",
        "Build a tokenizer from a corpus and save it (tokenizer.json or paranmt_tokenizer.json), loadable with "
        "transformers' AutoTokenizer.", fill=True)
    p.add_argument("--kind", choices=list(TOKENIZER_BUILDERS), required=True,
                   help="; ".join(f"{kind}: {text}" for kind, (_, text) in TOKENIZER_BUILDERS.items()))
    p.add_argument("--input", nargs="+", default=None, help="text or TSV files (.gz ok)")
    p.add_argument("--from", dest="source", default=None,
                   help="subword: adapt this tokenizer (tokenizer.json, model directory or Hub id) instead of "
                        "training one")
    add_corpus_flags(p)
    p.add_argument("--vocab-size", type=checked_number(int, VOCAB_SIZE), default=None,
                   help="vocabulary size incl. [PAD]/[UNK] (sp: 50000)")
    p.add_argument("--min-count", type=checked_number(int, NON_NEGATIVE), default=1,
                   help="word/trigram: minimum frequency")
    p.add_argument("--output", required=True, help="directory to save the tokenizer to")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    add_progress_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build and save the tokenizer."""
    from ..data.sentences import iter_sentences
    from ..model.tokenization import build_tokenizer
    from ..utils.atomic import atomic_output, check_output
    from .errors import UsageError

    if args.source is not None and args.kind != "subword":
        raise UsageError("--from is for --kind subword")
    if args.input is None and args.source is None:
        raise UsageError("--input is required (or --from with --kind subword)")
    check_output(args.output, args.input or [], args.overwrite)
    corpus = iter_sentences(args.input, args.columns, args.limit) if args.input else None
    tok = build_tokenizer(args.kind, corpus, args.vocab_size, args.min_count, source=args.source)
    with atomic_output(args.output, args.input or [], args.overwrite, directory=True) as tmp:
        tok.save_pretrained(tmp)
    asked = args.vocab_size or (50_000 if args.kind == "sp" else None)
    short = f", fewer than the {asked} asked: the corpus has no more" if asked and len(tok) < asked else ""
    print(f"saved {args.kind} tokenizer ({len(tok)} tokens{short}) to {args.output}")
    return 0

"""``paranmt-hf paraphrase``: paraphrases of sentences (arguments or a file) with a trained generator."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .decoding_flags import add_decoding_flags, decoding_options
from .model_loading import add_trust_remote_code_flag
from .progress import add_progress_flag

EPILOG = """examples:
  paranmt-hf paraphrase gen/ "oh, that's a handsome women, that is."          # beam 4, the best candidate
  paranmt-hf paraphrase gen/ "overall, i think it's a decent buy." --num-beams 8 --num-return 4   # n-best
  paranmt-hf paraphrase gen/ --input sentences.txt --output paraphrases.tsv --do-sample --top-p 0.9 --num-return 5
                                                       # 5 independent samples per sentence (beam 1)

A file's output is TSV, one line per candidate: input TAB paraphrase (the n-best in order); empty lines are
skipped and counted; inputs longer than the model's limit are truncated and counted."""


def add_parser(subparsers: Any) -> None:
    """Register ``paraphrase``."""
    p = subparsers.add_parser("paraphrase", help="generate paraphrases with a trained generator (beam / sampling)",
                              description=__doc__, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_dir", help="generator folder (train-generator) or any seq2seq model / Hub id")
    p.add_argument("texts", nargs="*", help="sentences to paraphrase (or --input)")
    p.add_argument("--input", default=None, help="text file, one sentence per line")
    p.add_argument("--output", default=None, help="TSV to write (with --input; default: stdout)")
    add_decoding_flags(
        p, num_beams="beam width (1 = greedy; default 4, or 1 with --do-sample: independent samples)",
        num_return="candidates per input (n-best / samples)",
        do_sample="sample instead of beam search: --num-return independent samples (beam sampling with --num-beams)",
        max_new_tokens="most tokens generated per paraphrase, the end token included (default: the model's "
                       "generation config, capped at its positions)",
        seed="sampling seed")
    p.add_argument("--no-repeat-ngram-size", type=int, default=None,
                   help="forbid repeating n-grams of this size (0: off; default: the model's generation config)")
    p.add_argument("--batch-size", type=int, default=32, help="sentences per generation batch (default 32)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    add_progress_flag(p)
    add_trust_remote_code_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Generate: into --output, or printed (with the input before each candidate when it comes from --input)."""
    from ..paraphrase_generator.train import GeneratorError
    from ..utils.atomic import OutputExistsError
    from .errors import message_of

    if bool(args.texts) == bool(args.input):
        raise SystemExit("paranmt-hf paraphrase: give sentences or --input FILE (one of them)")
    try:
        return _paraphrase(args)
    except (GeneratorError, ValueError, OutputExistsError, FileNotFoundError) as err:
        raise SystemExit(f"paranmt-hf paraphrase: {message_of(err)}") from err


def _paraphrase(args: argparse.Namespace) -> int:
    from ..data.sentences import read_sentences
    from ..paraphrase_generator.generate import ParaphraseGenerator
    from ..utils.atomic import check_output

    settings = decoding_options(args)
    if args.input and args.output:
        check_output(args.output, [args.input], args.overwrite, directory=False)
    generator = ParaphraseGenerator.from_pretrained(args.model_dir, args.trust_remote_code)
    generator.translator(settings)  # the options checked against the model before any generation
    if args.input and args.output:
        return _to_file(args, generator, settings)
    texts, empty = read_sentences(args.input) if args.input else (list(args.texts), 0)
    if empty:
        print(f"paranmt-hf paraphrase: skipped {empty} empty line(s)", file=sys.stderr)
    candidates = generator.generate(texts, settings, args.batch_size, progress=not args.no_progress and
                                    bool(args.input))
    for text, outputs in zip(texts, candidates, strict=True):
        for output in outputs:
            print(f"{text}\t{output}" if args.input else output)
    if generator.report.truncated:
        print(f"paranmt-hf paraphrase: {generator.report.truncated} input(s) truncated to "
              f"{generator.max_input_tokens} tokens", file=sys.stderr)
    return 0


def _to_file(args: argparse.Namespace, generator: Any, settings: Any) -> int:
    from ..paraphrase_generator.generate import paraphrase_file

    counts = paraphrase_file(generator, args.input, args.output, settings, args.batch_size,
                             overwrite=args.overwrite, progress=not args.no_progress)
    print(f"paraphrased {counts['inputs']:,} lines -> {counts['output_lines']:,} candidates in {args.output}"
          + (f"; {counts['empty_skipped']:,} empty lines skipped" if counts["empty_skipped"] else "")
          + (f"; {counts['truncated']:,} inputs truncated" if counts["truncated"] else ""), file=sys.stderr)
    return 0

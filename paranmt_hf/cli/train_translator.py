"""``paranmt-hf train-translator``: a translation model into English, trained from scratch on a bitext."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .progress import add_progress_flag

EPILOG = """examples:
  # a small Marian (d_model 256, 3+3 layers, 8K unigram vocabulary built from the data), 1,000 steps on CPU
  paranmt-hf train-translator de-en.tsv.gz --source-lang de -o mt-de-en/
  # opus-mt's shape, longer, on a GPU; held-out pairs from a file
  paranmt-hf train-translator train.de-en.tsv --source-lang de --size base --vocab-size 32000 --max-steps 200000 \\
      --batch-size 128 --test test.de-en.tsv -o mt-de-en/
  # then back-translate with it (either engine)
  paranmt-hf corpus backtranslate bitext.de-en.tsv --model mt-de-en/ --engine ctranslate2 -o pairs.tsv

The source column comes from an en-xx / xx-en file name or --source-column. Exact duplicate pairs are dropped;
--held-out pairs (default 2%, at most 2,000) are drawn with --seed and translated with --num-beams for sacrebleu's
corpus BLEU. The folder holds the model, its tokenizer, generator_summary.json (the training) and
translator_metrics.json (languages, data counts, BLEU and its signature, examples)."""


def add_parser(subparsers: Any) -> None:
    """Register ``train-translator``."""
    from ..paraphrase_generator.build import SIZES

    p = subparsers.add_parser(
        "train-translator", help="train a translation model into English from scratch on a bitext (Marian, "
                                 "Seq2SeqTrainer, BLEU on held-out pairs), usable by `corpus backtranslate`",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bitext", nargs="+", help="bitext files: two tab-separated columns (TSV / TSV.gz / zip)")
    p.add_argument("--source-lang", required=True, help="code of the source language, e.g. de")
    p.add_argument("--target-lang", default="en", help="code of the target language (default en)")
    p.add_argument("-o", "--output", required=True, help="model folder to write")
    p.add_argument("--source-column", type=int, choices=[1, 2], default=None,
                   help="the source column (default: from en-xx / xx-en file names)")
    p.add_argument("--test", action="append", default=[], metavar="FILE",
                   help="held-out bitext (repeatable; default: --held-out pairs drawn from the bitext)")
    p.add_argument("--held-out", type=int, default=None,
                   help="pairs held out for BLEU when no --test (default 2%%, at most 2,000; 0: no BLEU)")
    p.add_argument("--size", default="small", choices=list(SIZES),
                   help="model size: " + "; ".join(f"{name}: d_model {s.d_model}, {s.layers}+{s.layers} layers"
                                                     for name, s in SIZES.items()) + " (default small)")
    p.add_argument("--vocab-size", type=int, default=8000, help="tokenizer vocabulary (default 8000)")
    p.add_argument("--epochs", type=float, default=10.0, help="passes over the pairs (default 10)")
    p.add_argument("--max-steps", type=int, default=1000,
                   help="stop after this many optimiser steps (default 1000; -1: --epochs only)")
    p.add_argument("--max-cpu-minutes", type=float, default=None, help="also stop after this much CPU time")
    p.add_argument("--batch-size", type=int, default=64, help="pairs per step (default 64)")
    p.add_argument("--learning-rate", type=float, default=5e-4, help="peak learning rate (default 5e-4)")
    p.add_argument("--warmup-steps", type=int, default=400,
                   help="linear warm-up steps before the inverse-square-root decay (default 400)")
    p.add_argument("--max-length", type=int, default=128,
                   help="longest source and translation in tokens (default 128; longer training pairs truncated)")
    p.add_argument("--num-beams", type=int, default=4, help="beam width of the held-out translations (default 4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the split, the initialisation and the data order")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
    add_progress_flag(p)
    p.set_defaults(func=run, user_errors=_user_errors())


def _user_errors() -> tuple[type[BaseException], ...]:
    from ..data.records import BadLineError
    from ..paraphrase_generator.train import GeneratorError

    return (GeneratorError, BadLineError)


def run(args: argparse.Namespace) -> int:
    """Train, measure BLEU, print where the model is."""
    from ..paraphrase_generator.train import Seq2SeqTrainingSettings
    from ..paraphrase_generator.translator_training import METRICS_NAME, train_translator
    from ..utils.imports import require_extras

    require_extras("generator", feature="train-translator")
    settings = Seq2SeqTrainingSettings(
        epochs=args.epochs, max_steps=args.max_steps, max_cpu_minutes=args.max_cpu_minutes,
        batch_size=args.batch_size, learning_rate=args.learning_rate, warmup_steps=args.warmup_steps,
        max_length=args.max_length, seed=args.seed, progress=not args.no_progress)
    result = train_translator(args.bitext, args.output, args.source_lang, args.target_lang,
                              source_column=args.source_column, test=args.test, held_out=args.held_out,
                              size=args.size, vocab_size=args.vocab_size, settings=settings,
                              num_beams=args.num_beams, overwrite=args.overwrite)
    metrics = result.metrics
    print(f"trained {metrics['training']['steps']} steps on {metrics['data']['training_pairs']:,} pairs "
          f"({args.source_lang} -> {args.target_lang}) -> {args.output}")
    if metrics["bleu"] is not None:
        print(json.dumps({"bleu": metrics["bleu"]["score"], "held_out_pairs": metrics["data"]["held_out_pairs"],
                          "signature": metrics["bleu"]["signature"]}, indent=2))
    print(f"metrics: {result.output / METRICS_NAME}")
    return 0

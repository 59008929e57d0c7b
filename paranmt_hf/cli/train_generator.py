"""``paranmt-hf train-generator``: train a paraphrase generator (ParaNMT-50M §6) on pairs, and evaluate it."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from .model_loading import add_trust_remote_code_flag
from .recipe_flags import NON_NEGATIVE, POSITIVE, checked_number

EPILOG = """examples:
  # a small Marian from scratch on scored pairs, PRAS Figure 3's generation data (score 0.7-1.0, overlap <= 0.5)
  paranmt-hf train-generator scored.tsv.gz --output gen/ --score-model MODEL_DIR --max-cpu-minutes 30
  # fine-tune a pretrained seq2seq model (BART, T5, Marian: any AutoModelForSeq2SeqLM), every pair
  paranmt-hf train-generator pairs.tsv --model facebook/bart-base --min-score none --max-overlap none --output gen/

ParaNMT-50M §6's generator is a BiLSTM encoder and a 2-layer LSTM decoder with bilinear attention, trained on the
corpus (data, sizes and decoding not stated); transformers has no such model, so the from-scratch model is a small
Marian transformer (--size). The folder holds the model, its tokenizer, generator_summary.json, held_out.tsv and
evaluation.json (the generator beside the copy baseline: cosine under --eval-model, self-BLEU, overlap)."""


def _none_or_float(text: str) -> float | None:
    return None if text.lower() == "none" else float(text)


def add_parser(subparsers: Any) -> None:
    """Register ``train-generator``."""
    from ..paraphrase_generator.build import SIZES

    p = subparsers.add_parser(
        "train-generator", help="train a seq2seq paraphrase generator on pairs (Seq2SeqTrainer) and evaluate it",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", help="pair files: text_a TAB text_b [TAB score [TAB trigram_overlap]]")
    p.add_argument("--output", required=True, help="model folder to write")
    p.add_argument("--model", default=None, help="seq2seq model to fine-tune (Hub id or folder); default: a small "
                   "Marian built from --size with a tokenizer trained on the pairs")
    p.add_argument("--size", default="small", choices=list(SIZES), help="from-scratch size (default small: d_model "
                   "256, 3+3 layers)")
    p.add_argument("--vocab-size", type=checked_number(int, POSITIVE), default=8000,
                   help="from-scratch tokenizer vocabulary")
    p.add_argument("--min-score", type=_none_or_float, default=0.7, help="lowest paraphrase score (none: no bound)")
    p.add_argument("--max-score", type=_none_or_float, default=1.0, help="highest paraphrase score (none: no bound)")
    p.add_argument("--max-overlap", type=_none_or_float, default=0.5, help="highest trigram overlap (none: no bound)")
    p.add_argument("--bound", action="append", default=[], metavar="COLUMN=LOW:HIGH",
                   help="another bound on a measure column (repeatable)")
    p.add_argument("--score-model", default=None, help="paranmt_hf model scoring pairs that have no score")
    p.add_argument("--one-direction", action="store_true", help="train text_a -> text_b only (default: both)")
    p.add_argument("--held-out", type=checked_number(int, NON_NEGATIVE), default=1000,
                   help="pairs held out for the evaluation (0: none)")
    p.add_argument("--max-pairs", type=checked_number(int, POSITIVE), default=None,
                   help="at most this many training pairs")
    p.add_argument("--eval-model", default=None, help="encoder of the evaluation's cosines (default --score-model)")
    p.add_argument("--epochs", type=checked_number(float, POSITIVE), default=10.0,
                   help="passes over the pairs (default 10)")
    p.add_argument("--max-steps", type=checked_number(int, POSITIVE, allowed=(-1,)), default=-1,
                   help="stop after this many optimiser steps (-1: off)")
    p.add_argument("--max-cpu-minutes", type=checked_number(float, POSITIVE), default=None,
                   help="stop training after this much CPU time (all threads); building the tokenizer and the model, "
                   "scoring the pairs and the evaluation come on top")
    p.add_argument("--batch-size", type=checked_number(int, POSITIVE), default=64, help="pairs per batch (default 64)")
    p.add_argument("--learning-rate", type=checked_number(float, POSITIVE), default=5e-4,
                   help="peak learning rate (default 5e-4)")
    p.add_argument("--warmup-steps", type=checked_number(int, NON_NEGATIVE), default=400,
                   help="steps of linear warm-up before the inverse-square-root decay (default 400)")
    p.add_argument("--max-length", type=checked_number(int, POSITIVE), default=128,
                   help="tokens per side (longer ones truncated, counted)")
    p.add_argument("--num-beams", type=checked_number(int, POSITIVE), default=4,
                   help="beam width of the evaluation's generation")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and the training (default 0)")
    p.add_argument("--format", default="pairs", choices=["pairs", "paranmt", "processed"], help="input line format")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_trust_remote_code_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train and evaluate."""
    from ..corpus.selection.filters import parse_bound
    from ..corpus.translation.transformers_engine import DecodingOptions
    from ..paraphrase_generator.train import GeneratorError, Seq2SeqTrainingSettings
    from ..paraphrase_generator.train_generator import train_generator
    from ..utils.atomic import OutputExistsError

    try:
        bounds: dict[str, Any] = {}
        if args.min_score is not None or args.max_score is not None:
            bounds["paraphrase_score"] = (args.min_score, args.max_score)
        if args.max_overlap is not None:
            bounds["trigram_overlap"] = (None, args.max_overlap)
        for text in args.bound:
            name, low, high = parse_bound(text)
            bounds[name] = (low, high)
        settings = Seq2SeqTrainingSettings(
            epochs=args.epochs, max_steps=args.max_steps, max_cpu_minutes=args.max_cpu_minutes,
            batch_size=args.batch_size, learning_rate=args.learning_rate, warmup_steps=args.warmup_steps,
            max_length=args.max_length, seed=args.seed, progress=not args.no_progress)
        result, evaluation = train_generator(
            args.inputs, args.output, args.model, args.size, args.vocab_size, bounds, args.score_model,
            not args.one_direction, args.held_out, args.max_pairs, settings, args.eval_model,
            DecodingOptions(num_beams=args.num_beams), args.format, args.overwrite, args.trust_remote_code)
    except (GeneratorError, ValueError, OutputExistsError, FileNotFoundError) as err:
        raise SystemExit(f"paranmt-hf train-generator: {err}") from err
    summary = result.summary
    print(f"data: {describe_counts(summary['data'])}", file=sys.stderr)
    if summary.get("stopped_by_cpu_limit"):
        print(f"time: training stopped at --max-cpu-minutes {args.max_cpu_minutes:g} "
              f"({summary['training_cpu_seconds']:.0f} CPU seconds of training, all threads); the command took "
              f"{summary['seconds']:.0f} s in all (the tokenizer, the model, the scoring and the evaluation come on "
              "top of the limit)", file=sys.stderr)
    print(f"trained {summary['steps']} steps on {summary['data']['training_examples']:,} examples "
          f"({summary['data']['training_pairs']:,} pairs) -> {args.output}")
    if evaluation is not None:
        print(json.dumps({k: evaluation[k] for k in ("generator", "copy")}, indent=2))
    return 0


def describe_counts(counts: Mapping[str, Any]) -> str:
    """Where the pairs read went, in one line: the bounds' selection, the held-out set, the training pairs.

    From the ``counts`` of :func:`~paranmt_hf.paraphrase_generator.data.generator_pairs` (a training run's
    ``generator_summary.json`` ``data``).
    """
    bounds = counts.get("bounds") or {}
    named = ", ".join(_bound_text(name, low, high) for name, (low, high) in bounds.items())
    parts = [f"read {counts['read']:,} pairs" + (f" ({counts['bad_lines']:,} bad lines skipped)"
                                                   if counts.get("bad_lines") else "")]
    if bounds:
        parts.append(f"{counts.get('within_bounds', 0):,} within the bounds ({named}; widen them with --min-score, "
                     "--max-score, --max-overlap or --bound, none for no bound)")
    if counts.get("held_out"):
        parts.append(f"{counts['held_out']:,} held out for the evaluation")
    if counts.get("left_out_sharing_a_held_out_sentence"):
        parts.append(f"{counts['left_out_sharing_a_held_out_sentence']:,} left out for sharing a held-out sentence")
    if counts.get("left_out_by_max_pairs"):
        parts.append(f"{counts['left_out_by_max_pairs']:,} over --max-pairs")
    directions = " in both directions" if counts.get("both_directions") else ""
    parts.append(f"{counts['training_pairs']:,} pairs trained on ({counts['training_examples']:,} examples"
                 f"{directions})")
    return "; ".join(parts)


def _bound_text(name: str, low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{name} {low:g}-{high:g}"
    return f"{name} >= {low:g}" if low is not None else f"{name} <= {high:g}"

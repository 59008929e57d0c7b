"""``paranmt-hf train``: train an encoder with a paper recipe (or your own) and write a model that loads everywhere."""

from __future__ import annotations

import argparse
import json

RECIPE_FLAGS = {
    # flag: (recipe field, type, help)
    "kind": ("kind", str, "encoder kind(s): word, trigram, sp, lstm, bilstm, gran, or a combination (trigram+word)"),
    "combination": ("combination", str, "concat or add"),
    "embedding-dim": ("embedding_dim", int, "token embedding size"),
    "rnn-hidden-size": ("rnn_hidden_size", int, "LSTM size"),
    "bilstm-merge": ("bilstm_merge", str, "mean or concat"),
    "token-type": ("token_type", str, "tokens of recurrent encoders: word or sp"),
    "vocab-size": ("vocab_size", int, "vocabulary size per component"),
    "min-count": ("min_count", int, "drop rarer word/trigram tokens"),
    "vocab-sentences": ("vocab_sentences", int, "build vocabularies from this many training sentences (a sample)"),
    "word-vectors": ("word_vectors", str, "initialise word embeddings, e.g. glove-6b-50d"),
    "vector-vocab-size": ("vector_vocab_size", int, "add this many frequent vector words missing from the data"),
    "pooling": ("pooling", str, "mean or max"),
    "scramble-rate": ("scramble_rate", float, "word-scrambling probability (LSTM family)"),
    "embedding-dropout": ("embedding_dropout", float, "dropout on token embeddings"),
    "batch-size": ("batch_size", int, "pairs per mini-batch"),
    "margin": ("margin", float, "loss margin delta"),
    "megabatch-size": ("megabatch_size", int, "M: mini-batches per mega-batch"),
    "anneal": ("anneal", int, "grow the mega-batch by one every N mini-batches"),
    "sampling": ("sampling", str, "MAX, MIX or RAND"),
    "loss": ("loss", str, "megabatch (the papers) or mnrl (MultipleNegativesRankingLoss)"),
    "lr": ("learning_rate", float, "Adam learning rate"),
    "lr-scheduler": ("lr_scheduler", str, "constant (the papers) or linear (decay to 0)"),
    "epochs": ("epochs", float, "passes over the data"),
    "max-grad-norm": ("max_grad_norm", float, "gradient clipping (0 = off; needs --optimizer adam)"),
    "optimizer": ("optimizer", str, "auto, lazy_adam (sparse embedding updates) or adam (dense)"),
    "max-pairs": ("max_pairs", int, "use at most this many training pairs"),
    "threads": ("num_threads", int, "torch threads (default: 1 for averaging encoders)"),
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``train`` sub-command."""
    p = subparsers.add_parser(
        "train",
        help="train a paraphrastic encoder (papers' recipes as presets)",
        description="Train with sentence-transformers' trainer and the papers' mega-batch margin loss. Data: "
        "'CONFIG:PATH[,PATH][@N]' with CONFIG in full, filtered, processed-5m, pairs, bitext, or a plain TSV path "
        "(X-English bitext is recognised from en-xx names); '@N' repeats a source N times per epoch. Runs under "
        "torchrun for multi-process training.",
    )
    p.add_argument("--recipe", default=None, help="preset: acl2018-word, acl2018-trigram, acl2018-lstm, ..., pras-sp")
    p.add_argument("--list-recipes", action="store_true", help="print the presets and exit")
    p.add_argument("--train", nargs="+", default=[], help="training data sources: CONFIG:PATH[,PATH][@N]")
    p.add_argument("--output", help="model directory to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dev", nargs="*", default=["STS17:en-en"], help="dev STS tasks (none: no evaluation)")
    p.add_argument("--data-dir", default=None, help="evaluation data (default $PARANMT_HF_DATA)")
    p.add_argument("--eval-steps", type=int, default=None, help="evaluate every N steps (default: --save-steps)")
    p.add_argument("--save-steps", type=int, default=500, help="checkpoint every N steps")
    p.add_argument("--max-steps", type=int, default=-1, help="stop after N steps")
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in OUTPUT")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    for flag, (_, kind, text) in RECIPE_FLAGS.items():
        p.add_argument(f"--{flag}", type=kind, default=None, help=text)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train and save the model."""
    from ..training.recipes import RECIPES, Recipe, get_recipe

    if args.list_recipes:
        for name, recipe in RECIPES.items():
            print(f"{name}: {recipe.description}")
        return 0
    if not args.train or not args.output:
        raise SystemExit("paranmt-hf train: --train and --output are required")
    recipe = get_recipe(args.recipe) if args.recipe else Recipe()
    overrides = {field: getattr(args, flag.replace("-", "_")) for flag, (field, _, _) in RECIPE_FLAGS.items()}
    recipe = recipe.override(**overrides)
    from ..training.trainer import train

    evaluator = None
    if args.dev:
        from ..evaluation.st_evaluator import STSSuiteEvaluator

        evaluator = STSSuiteEvaluator(tasks=args.dev, data_dir=args.data_dir, name="dev")
    result = train(
        recipe,
        args.train,
        args.output,
        seed=args.seed,
        dev_evaluator=evaluator,
        eval_steps=args.eval_steps,
        save_steps=args.save_steps,
        resume=args.resume,
        max_steps=args.max_steps,
        show_progress=not args.no_progress,
    )
    print(
        json.dumps(
            {
                "output": result.output_dir,
                "steps": result.steps,
                "seconds": round(result.seconds, 1),
                "train_pairs": result.train_pairs,
                "world_size": result.world_size,
                "dev": result.dev_scores[-1] if result.dev_scores else None,
            }
        )
    )
    return 0

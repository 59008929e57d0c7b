"""``paranmt-hf train``: train an encoder with a paper recipe (or your own) and write a model that loads everywhere."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..data.configs import CONFIG_NAMES
from ..training.teacher_pass import ALL, QUICK_TEACHER_SENTENCES
from .errors import UsageError
from .parsers import command_parser
from .progress import add_progress_flag
from .recipe_flags import (
    MODEL_FLAGS,
    OFF,
    POSITIVE,
    TRAINING_FLAGS,
    add_recipe_flags,
    checked_number,
    recipe_from_args,
    recipe_help,
)

RECIPE_FLAGS = {**MODEL_FLAGS, **TRAINING_FLAGS}

EPILOG = """examples (the papers' settings are the presets; every field can be changed with its flag):
  paranmt-hf train --recipe acl2018-trigram --train corpus.tsv.gz --output model/          # ParaNMT-50M §5.2
  paranmt-hf train --recipe acl2018-lstm --train filtered:para-nmt-50m.zip --output lstm/  # scrambling 0.3
  paranmt-hf train --recipe pras-sp --train processed-5m:para-nmt-5m.zip --output sp/     # PRAS SP-1024
  paranmt-hf train --recipe pras-bitext --train tatoeba-en-es.tsv.gz pairs.tsv.gz --output xx/  # cross-lingual
  paranmt-hf train --kind word --word-vectors glove-6b-50d --megabatch-size 40 --margin 0.4 --train pairs.tsv ...
  torchrun --nproc_per_node 2 -m paranmt_hf.cli.main train --recipe best --train pairs.tsv.gz --output m/
needs the train extra (pip install "paranmt-hf[train]"); a teacher or GloVe vectors also the peers extra, the full
and filtered ParaNMT-50M configs the data extra."""


def dev_tasks(values: list[str]) -> list[str]:
    """The dev STS tasks of ``--dev``: ``none`` (or the flag with no task) means no dev evaluation.

    Raises:
        UsageError: ``none`` given together with tasks.
    """
    if not any(v.lower() == OFF for v in values):
        return list(values)
    if len(values) > 1:
        raise UsageError(f"--dev {OFF} turns dev evaluation off; give it alone, not with tasks")
    return []


def teacher_sentences(value: str) -> int | str:
    """``--teacher-sentences``: a positive number or ``all``."""
    if value.lower() == ALL:
        return ALL
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number or '{ALL}', got {value!r}")
    return number


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``train`` sub-command."""
    p = command_parser(
        subparsers, "train", "train a paraphrastic encoder (papers' recipes as presets)",
        "Train with sentence-transformers' trainer and the papers' mega-batch margin loss. Data: "
        "'CONFIG:PATH[,PATH][@N]' with CONFIG in " + ", ".join(CONFIG_NAMES) + ", or a plain TSV path (X-English "
        "bitext is recognised from en-xx names); '@N' repeats a source N times per epoch. Runs under torchrun for "
        "multi-process training.", EPILOG, fill=True)
    p.add_argument("--recipe", default=None, help=recipe_help())
    p.add_argument("--list-recipes", action="store_true", help="print every preset with its description and exit")
    p.add_argument("--train", nargs="+", default=[], help="training data sources: CONFIG:PATH[,PATH][@N]")
    p.add_argument("--output", help="model directory to write")
    p.add_argument("--seed", type=int, default=0, help="seed of the initial model, the data order and the "
                   "negatives; a run is deterministic for its seed (default 0)")
    p.add_argument("--dev", nargs="*", default=["STS17:en-en"],
                   help="dev STS tasks (none, or no task: no dev evaluation)")
    p.add_argument("--data-dir", default=None, help="evaluation data (default $PARANMT_HF_DATA)")
    p.add_argument("--eval-steps", type=checked_number(int, POSITIVE), default=None,
                   help="evaluate every N steps (default: --save-steps)")
    p.add_argument("--save-steps", type=checked_number(int, POSITIVE), default=500, help="checkpoint every N steps")
    p.add_argument("--max-steps", type=checked_number(int, POSITIVE, allowed=(-1,)), default=-1,
                   help="stop after N steps (-1, the default: train --epochs epochs)")
    p.add_argument("--teacher-sentences", type=teacher_sentences, default=None, metavar="N|all",
                   help="the teacher pass of a --tokenlearn recipe (best) embeds at most N unique training sentences "
                   "(a seeded sample), or all of them (default: all, but a sample of "
                   f"{QUICK_TEACHER_SENTENCES:,} for a quick run, i.e. with --max-steps); before training, the "
                   "command says how many and about how long")
    p.add_argument("--resume", action="store_true", help="continue the run in OUTPUT from its latest complete "
                   "checkpoint (same recipe, data and seed; a larger --max-steps/--epochs may extend a finished run "
                   "that kept its checkpoints)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an earlier run in OUTPUT (deletes its checkpoints)")
    p.add_argument("--keep-checkpoints", action="store_true",
                   help="keep the checkpoints and the initial model (in .OUTPUT.paranmt-train/, next to OUTPUT) once "
                   "the model is saved, to extend the run later with --resume; by default they are removed then "
                   "(a run that stops keeps them for --resume)")
    add_progress_flag(p)
    add_recipe_flags(p, RECIPE_FLAGS)
    p.set_defaults(func=run, keyword_flags={"output_dir": "--output"})  # train()'s keywords in its errors


def run(args: argparse.Namespace) -> int:
    """Train and save the model."""
    from ..training.recipes import RECIPES, training_extras
    from ..utils.imports import require_extras

    if args.list_recipes:
        for name, recipe in RECIPES.items():
            print(f"{name}: {recipe.description}")
        return 0
    if not args.train or not args.output:
        raise UsageError("--train and --output are required")
    if args.resume and args.overwrite:
        raise UsageError("--resume continues the run in --output, --overwrite replaces it: pick one")
    dev = dev_tasks(args.dev)
    recipe = recipe_from_args(args, RECIPE_FLAGS)
    from ..training.data import PairSource

    sources = [PairSource.parse(spec) for spec in args.train]  # a missing file is named before any work
    require_extras(*training_extras(recipe, [s.config for s in sources]), feature="training")
    from ..training.trainer import train

    evaluator = _dev_evaluator(dev, args.data_dir) if dev else None
    result = train(recipe, args.train, args.output, seed=args.seed, dev_evaluator=evaluator,
                   eval_steps=args.eval_steps, save_steps=args.save_steps, resume=args.resume,
                   max_steps=args.max_steps, show_progress=not args.no_progress, overwrite=args.overwrite,
                   teacher_sentences=args.teacher_sentences,
                   keep_checkpoints=args.keep_checkpoints,
                   notify=lambda message: print(message, file=sys.stderr, flush=True))
    print(json.dumps({"output": result.output_dir, "steps": result.steps,
                      "resumed_from_step": result.resumed_from_step, "seconds": round(result.seconds, 1),
                      "train_pairs": result.train_pairs,
                      "world_size": result.world_size, "dev": result.dev_scores[-1] if result.dev_scores else None}))
    return 0


def _dev_evaluator(tasks: list[str], data_dir: str | None) -> Any:
    """The evaluator of the ``--dev`` tasks (an unknown task is the command line's mistake)."""
    from ..data.errors import UnknownTaskError
    from ..evaluation.st_evaluator import STSSuiteEvaluator

    try:
        return STSSuiteEvaluator(tasks=tasks, data_dir=data_dir, name="dev")
    except UnknownTaskError as err:
        raise UsageError(f"--dev: {err}") from None

"""``paranmt-hf eval``: STS12-16 (papers' protocol + mteb's), STS-B, STS17, Tatoeba and STS-format folders."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .model_loading import add_model_argument, add_trust_remote_code_flag, load_model, locate
from .parsers import check_hub_ids
from .progress import add_progress_flag
from .recipe_flags import POSITIVE, checked_number


def _epilog() -> str:
    from ..data.eval_sets import EVAL_SETS

    tasks = "\n".join(f"  {name:<13} {spec.description}" for name, spec in EVAL_SETS.items())
    return f"""tasks:
{tasks}
groups: sts12-16 (= paper), sts, all; a subset filter after a colon (STS17:en-en, Tatoeba:fra,deu,
STSBenchmark:validation); or any folder holding STS.input.<name>.txt + STS.gs.<name>.txt files.
Results: <output>/<org>__<name>/<revision>/<Task>.json + model_meta.json (mteb's layout) and a printed table."""


def add_parser(subparsers: Any) -> None:
    """Register ``eval``."""
    p = subparsers.add_parser(
        "eval", help="evaluate a model on STS / bitext mining (papers' protocol and mteb's)", epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_argument(p, "model folder (ParaNMT, sentence-transformers or model2vec) or Hub id (org/name, or "
                       "org/name@REVISION; offline: from the Hub's cache)")
    p.add_argument("--tasks", nargs="+", default=["all"], help="tasks, groups or STS folders (default: all)")
    p.add_argument("--data-dir", default=None, help="folder holding eval/sts and eval/tatoeba (default: "
                   "$PARANMT_HF_DATA, else ../shared/data)")
    p.add_argument("--output", default=None, help="results folder (mteb layout; each result records the model's "
                   "path and content hash); omit to only print the table")
    p.add_argument("--overwrite", action="store_true", help="replace existing results of this model and revision "
                   "in --output")
    p.add_argument("--name", default=None, help="model name for the results, org/name (default: the Hub id, or "
                   "paranmt-hf/<folder name>)")
    p.add_argument("--revision", default=None, help="model revision for the results (default: the Hub commit "
                   "evaluated, or no_revision_available for a folder)")
    p.add_argument("--batch-size", type=checked_number(int, POSITIVE), default=256,
                   help="sentences encoded per batch (default 256)")
    add_progress_flag(p)
    p.add_argument("--download", action="store_true", help="fetch missing data from the public sources")
    p.add_argument("--max-pairs", type=checked_number(int, POSITIVE), default=None,
                   help="first N pairs per dataset only (smoke tests)")
    add_trust_remote_code_flag(p)
    p.set_defaults(func=run, user_errors=(ValueError,))  # evaluate's ValueError: a malformed STS or bitext file


def run(args: argparse.Namespace) -> int:
    """Evaluate, print the table and write the results."""
    from ..evaluation.results import results_folder
    from ..utils.atomic import check_output
    from ..utils.imports import require_extras

    require_extras("eval", feature="evaluation")  # before the model loads and every dataset is encoded
    from ..evaluation import evaluate, format_table, write_results
    from ..evaluation.mteb_meta import meta_to_dict, model_meta_for
    from ..evaluation.tasks import resolve_tasks

    resolve_tasks(args.tasks)  # an unknown task is named before the model loads
    check_hub_ids(args, {"--name": "name"})  # names the results folder: never rewritten
    locate(args)  # a Hub id: its snapshot in the Hub's cache
    if args.model_commit is not None:
        name = args.name or args.model_name
        args.revision = args.revision or args.model_commit
    else:
        name = args.name or f"paranmt-hf/{Path(args.model_dir).resolve().name}"
    args.revision = args.revision or "no_revision_available"
    if args.output:  # before the evaluation, which can take long
        folder = results_folder(args.output, name, args.revision)
        check_output(folder, overwrite=args.overwrite)
    encoder = load_model(args)
    results = evaluate(encoder, args.tasks, data_dir=args.data_dir, batch_size=args.batch_size,
                       show_progress_bar=not args.no_progress, download=args.download, max_pairs=args.max_pairs)
    print(format_table(results, name))  # noqa: T201 - the command's output
    if args.output:
        from ..hub.model_info import training_code

        meta = meta_to_dict(model_meta_for(encoder, name, args.revision,
                                           public_training_code=training_code(args.model_dir)))
        folder = write_results(results, args.output, name, args.revision, meta, model=args.model_dir,
                               overwrite=args.overwrite)
        print(f"results written to {folder}")  # noqa: T201
    return 0

"""``paranmt-hf tune-filters``: EMNLP 2017's threshold tuning of the back-translation filters on dev.

For each filter and each setting of E17's grid, a model is trained on the candidates that pass and scored on dev
(STS17 en-en, STS-B validation); per filter the setting with the best dev score is reported with its test scores
(STS12-16, STS-B test). The runs go to a JSON-lines file as they finish: the same command resumes a killed tuning.
The API: :mod:`paranmt_hf.corpus.selection.tuning` (the loop) and :mod:`paranmt_hf.evaluation.filter_tuning` (the
scorer).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

EPILOG = """examples (E17's loop on annotated back-translations; 3 seeds of every setting, the full diversity grids):
  paranmt-hf tune-filters annotated.tsv --work tuning/ --pairs 2000 --seeds 0 1 2 --full-grid --quantile-grids
  paranmt-hf tune-filters annotated.tsv --work tuning/ --only length BLEU
  paranmt-hf tune-filters annotated.tsv --work tuning/ --table-only"""


def add_parser(subparsers: Any) -> None:
    """Register ``tune-filters``."""
    p = subparsers.add_parser("tune-filters", help="choose each back-translation filter's bounds on dev (EMNLP 2017)",
                              description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("candidates", help="back-translations (corpus backtranslate; corpus annotate adds their columns)")
    p.add_argument("--work", required=True, help="folder of the runs file, the columns and the model in training")
    p.add_argument("--runs", default=None, help="runs file (default: WORK/runs.jsonl); runs already there are skipped")
    p.add_argument("--pairs", type=int, default=4000, help="training pairs per setting (E17: 24,000; default 4000)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0],
                   help="seeds of every setting (sample and training; the setting's dev score is their mean); the "
                        "random baseline runs seeds 0-2 and these")
    p.add_argument("--full-grid", action="store_true", help="E17's full diversity grids (lower bounds 0-0.3)")
    p.add_argument("--quantile-grids", action="store_true",
                   help="add the 20th-80th percentiles of translation cost and perplexity to E17's bounds (their "
                        "scale depends on the MT model and the language model)")
    p.add_argument("--only", nargs="+", default=None, metavar="FILTER",
                   help='run only these filters ("length", "BLEU", ...; quote names with spaces)')
    p.add_argument("--recipe", default="best-trigram",
                   help="the recipe trained on each setting (default: best-trigram)")
    p.add_argument("--language-model", default=None,
                   help="KenLM model (measures train-lm) when the file has no lm_perplexity column")
    p.add_argument("--classifier", default=None,
                   help="reference classifier (measures train-classifier) when the file has no reference_probability "
                        "column")
    p.add_argument("--data-dir", default=None, help="evaluation data (default: $PARANMT_HF_DATA)")
    p.add_argument("--table-only", action="store_true", help="print the table of the runs file and train nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Tune (or only summarise), write WORK/summary.json and print the table."""
    from ..corpus.selection import tuning
    from ..evaluation.filter_tuning import trainer_scorer
    from ..utils.atomic import atomic_write_json

    work = Path(args.work)
    runs_path = Path(args.runs) if args.runs else work / "runs.jsonl"
    try:
        if not args.table_only:
            candidates = tuning.read_candidates(args.candidates)
            columns = tuning.filter_columns(candidates, args.language_model, args.classifier, cache=work)
            scorer = trainer_scorer(work, args.recipe, args.data_dir)
            for done in tuning.tune(candidates, columns, runs_path, scorer, args.pairs, args.seeds, args.full_grid,
                                    args.quantile_grids, args.only):
                passing = done["passing_references"]
                dev = f"dev {done['dev']:.2f}" if "dev" in done else f"infeasible ({passing:,} references pass)"
                print(f"{done['filter']} {tuning.describe(done['bounds'])} seed {done['seed']}: {dev}", flush=True)
        runs = tuning.read_runs(runs_path)
    except (tuning.TuningError, ValueError) as err:
        raise SystemExit(f"paranmt-hf tune-filters: {err}") from err
    if not runs:
        raise SystemExit(f"paranmt-hf tune-filters: {runs_path} holds no run")
    rows = tuning.summarize(runs)
    atomic_write_json(runs_path.with_name("summary.json"), {"rows": rows, "runs": len(runs)}, indent=1)
    print(tuning.format_table(rows))
    return 0

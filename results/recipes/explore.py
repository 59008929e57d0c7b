"""Recipe exploration on the shared corpora: one quick run of the library's training, appended to explore.jsonl.

One run = ``paranmt_hf.training.train`` (the recipe's model, the mega-batch margin loss or MNRL, LazyAdam, the
``SentenceTransformerTrainer``; pairs read by the builder configs) for ``steps`` steps, with the dev evaluator
(STS17 en-en + STS-B validation, Pearson) every ``every`` steps; STS12-16 (papers' protocol) is computed once, at
the end. Model selection reads dev only.

    python results/recipes/explore.py '{"kind": "trigram", "learning_rate": 0.01, "megabatch_size": 1,
        "files": ["../shared/data/train/flickr30k-caption-pairs.tsv.gz"], "steps": 3000, "every": 1000}' NAME

The JSON holds the recipe fields to change from ``Recipe()`` (``paranmt_hf.training.recipes``), ``files`` (training
sources as ``paranmt-hf train --train`` takes them: ``CONFIG:PATH``, ``PATH@N``), ``steps``, ``every`` (default 500)
and ``seed`` (default 0). Appends one JSON line per run to results/recipes/explore.jsonl with its provenance
(command, git commit, software, load average), the dev curve (``log``: step, training loss, dev mean Pearson,
seconds) and whether the model started its unknown-token row at zero (``unk_zero``).

The 51 runs recorded up to commit 97d0c83 came from a lean loop of the library's pieces around a home-made TSV reader
(``git show 97d0c83:results/recipes/explore.py``; each line names the commit it was recorded or committed in). The
published comparisons (the mega-batch ablation, the margin loss against MNRL, the seeds of the best recipe) are run
by run_pipeline.py (``paranmt-hf train`` + ``paranmt-hf eval``: ablation.sh, loss_vs_mnrl.sh, seeds.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEV = ["STS17:en-en", "STSBenchmark:validation"]
YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", help="JSON: recipe fields to change, files, steps, every, seed")
    parser.add_argument("name", help="run name (its line in explore.jsonl)")
    parser.add_argument("--work", default=os.environ.get("WORK", "/tmp/paranmt-results"), help="scratch folder")
    parser.add_argument("--keep-model", action="store_true", help="keep the trained model in the scratch folder")
    return parser.parse_args(argv)


def training_log(model_dir: Path, seconds: float, steps: int) -> list[list[Any]]:
    """``[step, training loss, dev mean Pearson, seconds]`` at each dev evaluation (seconds: the run's, at the end)."""
    from run_pipeline import trainer_history

    history = trainer_history(model_dir)
    losses = {h["step"]: h["loss"] for h in history if "loss" in h}
    log = []
    for h in history:
        if "eval_dev_mean_pearson" in h:
            loss = losses.get(h["step"])  # logged every 50 steps (the trainer's logging_steps)
            log.append([h["step"], None if loss is None else round(loss, 4), round(h["eval_dev_mean_pearson"], 4),
                        round(seconds) if h["step"] == steps else None])
    return log


def main(argv: list[str] | None = None) -> int:
    from run_pipeline import unknown_row_zero

    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.evaluation import evaluate, paper_average
    from paranmt_hf.evaluation.st_evaluator import STSSuiteEvaluator
    from paranmt_hf.training.recipes import Recipe
    from paranmt_hf.training.trainer import run_folder, train
    from paranmt_hf.utils.provenance import provenance

    args = parse_args(argv)
    record = provenance(["python", "results/recipes/explore.py", *(sys.argv[1:] if argv is None else argv)])
    cfg = json.loads(args.config)
    files, steps, every, seed = cfg.pop("files"), cfg.pop("steps"), cfg.pop("every", 500), cfg.pop("seed", 0)
    recipe = Recipe().replace(**cfg)
    out = Path(args.work) / "explore" / args.name
    started = time.time()
    result = train(recipe, files, out, seed=seed, dev_evaluator=STSSuiteEvaluator(DEV, name="dev"),
                   eval_steps=every, save_steps=every, max_steps=steps, show_progress=False, overwrite=True)
    seconds = time.time() - started
    log = training_log(out, result.seconds, result.steps)
    sts = paper_average(evaluate(ParaNMTEncoder.from_pretrained(out), YEARS))
    run = {"name": args.name, "cfg": cfg, "files": files, "seed": seed, "log": log, "sts": sts,
           "unk_zero": unknown_row_zero(run_folder(out) / "initial-model"),
           "unk_zero_source": "measured by explore.py",
           "wall_seconds": round(seconds, 1), "provenance": record}
    with open(HERE / "explore.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(run) + "\n")
    if not args.keep_model:
        shutil.rmtree(out)
    print("RESULT", args.name, json.dumps(cfg), "sts12-16", round(sts, 2), flush=True)  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

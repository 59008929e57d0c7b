"""One training run through the real pipeline: ``paranmt-hf train``, then ``paranmt-hf eval``, recorded as JSON.

    python results/recipes/run_pipeline.py GROUP NAME [--work DIR] [--keep-model] [--overwrite] -- TRAIN_FLAGS...

Runs ``paranmt-hf train TRAIN_FLAGS --output WORK/GROUP/NAME/model --overwrite --no-progress`` (WORK is this
script's scratch folder), then ``paranmt-hf eval`` of the saved model on STS12-16, STS-B (validation + test) and
STS17 en-en, and writes ``results/recipes/pipeline/GROUP/NAME.json`` with both commands, the provenance (git commit,
software, load average), the recipe as trained, the dev curve logged during training and the final scores:

- ``dev``: the final model's Pearson x 100 on STS17 en-en and STS-B validation and their mean (model selection
  reads these only);
- ``test``: STS12-16 (papers' protocol: mean Pearson x 100 over each year's datasets, then over years) and STS-B
  test, reported once.

An existing result is kept (the run is skipped) unless ``--overwrite``. The scratch model is deleted after a
successful run unless ``--keep-model``. ``ablation.sh``, ``loss_vs_mnrl.sh`` and ``seeds.sh`` call this script;
``make_table.py`` renders the tables and plots.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "pipeline"
EVAL_TASKS = ["sts12-16", "STSBenchmark", "STS17:en-en"]
YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """This script's options, and the ``paranmt-hf train`` flags after ``--``."""
    cut = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     usage="%(prog)s GROUP NAME [options] -- PARANMT_HF_TRAIN_FLAGS...")
    parser.add_argument("group", help="result folder under results/recipes/pipeline/ (e.g. ablation)")
    parser.add_argument("name", help="run name (the JSON file's name)")
    parser.add_argument("--work", default=os.environ.get("WORK", "/tmp/paranmt-results"), help="scratch folder")
    parser.add_argument("--keep-model", action="store_true", help="keep the trained model in the scratch folder")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing result of this run")
    args = parser.parse_args(argv[:cut])
    train_flags = argv[cut + 1 :]
    if not train_flags:
        parser.error("give the paranmt-hf train flags after '--'")
    if "--output" in train_flags:
        parser.error("the model folder is chosen here; do not pass --output")
    return args, train_flags


def run_logged(cmd: list[str], log: Path) -> float:
    """Run ``cmd`` with its output appended to ``log``; returns the wall-clock seconds (exit on failure)."""
    started = time.perf_counter()
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {shlex.join(cmd)}\n")
        f.flush()
        code = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    if code:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        raise SystemExit(f"run_pipeline.py: {cmd[0]} {cmd[1]} failed ({code}); end of {log}:\n" + "\n".join(tail))
    return time.perf_counter() - started


def trainer_history(model_dir: Path) -> list[dict[str, Any]]:
    """The trainer's log history (losses, dev evaluations, with their step) from the last checkpoint's state."""
    from paranmt_hf.training.trainer import run_folder

    states = sorted(run_folder(model_dir).glob("checkpoints/checkpoint-*/trainer_state.json"),
                    key=lambda p: int(p.parent.name.rsplit("-", 1)[1]))
    return json.loads(states[-1].read_text(encoding="utf-8"))["log_history"] if states else []


def dev_curve(model_dir: Path) -> list[dict[str, Any]]:
    """Dev evaluations logged during training, with their step, Pearson x 100."""
    return [{"step": h["step"], **{k.removeprefix("eval_dev_"): round(100 * v, 2) for k, v in h.items()
                                   if k.startswith("eval_dev_") and k.endswith("pearson")}}
            for h in trainer_history(model_dir) if "eval_dev_mean_pearson" in h]


def unknown_row_zero(init_dir: Path) -> bool | None:
    """Whether every component of the initial model starts its unknown-token row at zero."""
    from safetensors.numpy import load_file

    config = json.loads((init_dir / "config.json").read_text(encoding="utf-8"))
    weights = load_file(str(init_dir / "model.safetensors"))
    unk = config.get("unk_token_id")
    tables = [v for k, v in weights.items() if k.endswith("embedding.weight") and v.ndim == 2]
    if unk is None or not tables:
        return None
    return all(bool((table[unk] == 0).all()) for table in tables)


def scores(eval_dir: Path) -> tuple[dict[str, float], dict[str, Any]]:
    """(dev, test) scores, Pearson x 100, from the folder ``paranmt-hf eval --output`` wrote."""
    from paranmt_hf.evaluation import paper_average
    from paranmt_hf.evaluation.results import read_results

    folder = next(p for p in eval_dir.glob("*/*") if p.is_dir())
    results = read_results(folder)

    def pearson(task: str, split: str, subset: str) -> float:
        entry = next(e for e in results[task].scores[split] if e["hf_subset"] == subset)
        return round(100 * entry["paper_pearson"], 2)

    dev = {"STS17:en-en": pearson("STS17", "test", "en-en"),
           "STSBenchmark:validation": pearson("STSBenchmark", "validation", "default")}
    dev["mean"] = round((dev["STS17:en-en"] + dev["STSBenchmark:validation"]) / 2, 2)
    test: dict[str, Any] = {year: round(results[year].paper_score, 2) for year in YEARS}
    test["STS12-16"] = round(paper_average(results), 2)
    test["STSBenchmark:test"] = pearson("STSBenchmark", "test", "default")
    test["per_dataset"] = {f"{y}/{e['hf_subset']}": round(100 * e["paper_pearson"], 2)
                           for y in YEARS for e in results[y].scores["test"] if e["hf_subset"] != "default"}
    return dev, test


def main(argv: list[str]) -> int:
    from paranmt_hf.training.trainer import run_folder
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance

    args, train_flags = parse_args(argv)
    out = RESULTS / args.group / f"{args.name}.json"
    if out.exists() and not args.overwrite:
        print(f"{out} exists: run {args.name} skipped (--overwrite to run it again)")  # noqa: T201
        return 0
    record: dict[str, Any] = {"name": args.name, "group": args.group,
                              "provenance": provenance(["python", "results/recipes/run_pipeline.py", *argv])}
    work = Path(args.work) / args.group / args.name
    work.mkdir(parents=True, exist_ok=True)
    model, eval_dir, log = work / "model", work / "eval", work / "run.log"
    shutil.rmtree(eval_dir, ignore_errors=True)
    train_cmd = ["paranmt-hf", "train", *train_flags, "--output", str(model), "--overwrite", "--no-progress"]
    eval_cmd = ["paranmt-hf", "eval", str(model), "--tasks", *EVAL_TASKS, "--output", str(eval_dir),
                "--name", f"paranmt-hf/{args.name}"]
    train_seconds = run_logged(train_cmd, log)
    eval_seconds = run_logged(eval_cmd, log)
    summary = json.loads((model / "training_summary.json").read_text(encoding="utf-8"))
    dev, test = scores(eval_dir)
    record.update(
        train_command=shlex.join(train_cmd),
        eval_command=shlex.join(eval_cmd),
        data_dir=os.environ.get("PARANMT_HF_DATA"),
        recipe=summary["recipe"],
        sources=summary["sources"],
        seed=summary["seed"],
        steps=summary["steps"],
        train_pairs=summary["train_pairs"],
        torch_threads=summary["threads"],
        trainer_seconds=round(summary["seconds"], 1),
        wall_seconds={"train": round(train_seconds, 1), "eval": round(eval_seconds, 1)},
        load_average_after=[round(x, 2) for x in os.getloadavg()],
        unk_zero=unknown_row_zero(run_folder(model) / "initial-model"),
        dev_curve=dev_curve(model),
        dev=dev,
        test=test,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, record, overwrite=args.overwrite, indent=1)
    if not args.keep_model:
        shutil.rmtree(model)
    print(f"{args.name}: dev {dev['mean']:.2f}, STS12-16 {test['STS12-16']:.2f} -> {out}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

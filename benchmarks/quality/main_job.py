"""Record a run of the main job (``bash scripts/main.sh``): time, CPU, load, the teacher steps' cost, and the English
model's numbers against its targets (STS12-16 >= 75.5, STS-B test >= 81.5).

``bash scripts/main.sh`` runs it at its end (``--stages``: the time and load of each of its stages, ``--json
$OUT/main_job.json``); by hand, after a run in a fresh clone::

    python benchmarks/quality/main_job.py --out CLONE/outputs/main --wall SECONDS [--cpu SECONDS] \\
        [--load-during "5.8 5.6 6.2"] [--stages STAGES.jsonl] [--command "..."] [--json OUT.json]

Reads ``model/training_summary.json`` (and the bitext model's), the evaluation JSON in ``eval/`` (mteb layout, the
papers' protocol fields), ``side_by_side.json`` (both models' rows and the cross-lingual targets) and writes the
record, with the provenance of the recording, to ``--json``, or under ``main_job`` in ``quality.json`` here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGETS = {"sts12_16": 75.5, "stsb_test": 81.5}


def english_numbers(eval_dir: Path) -> dict[str, float]:
    """STS12-16 (papers' protocol), STS-B test / validation and STS17 en-en (Pearson x 100) from the eval JSON.

    Read with the library's reader (``paranmt_hf.evaluation.results.read_task_json``): the papers' protocol fields
    are in the files' ``"paranmt_hf"`` part, beside mteb's view.
    """
    from paranmt_hf.evaluation.results import read_task_json

    tasks = {r.task_name: r for r in (read_task_json(p) for p in eval_dir.rglob("*.json") if p.stem != "model_meta")}

    def entries(task: str, split: str) -> list[dict[str, Any]]:
        return tasks[task].scores[split]

    years = []
    for year in ("STS12", "STS13", "STS14", "STS15", "STS16"):
        default = next(e for e in entries(year, "test") if e["hf_subset"] == "default")
        years.append(100 * default["paper_pearson_mean"])
    out = {"sts12_16": sum(years) / 5, "stsb_test": 100 * entries("STSBenchmark", "test")[0]["paper_pearson"],
           "stsb_validation": 100 * entries("STSBenchmark", "validation")[0]["paper_pearson"]}
    sts17 = [e for e in entries("STS17", "test") if e["hf_subset"] == "en-en"]
    if sts17:
        out["sts17_en_en"] = 100 * sts17[0]["paper_pearson"]
    return {k: round(v, 2) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the main job's output folder (outputs/main)")
    parser.add_argument("--wall", type=float, required=True, help="wall seconds of the whole run, install included")
    parser.add_argument("--cpu", type=float, default=None, help="CPU seconds of the whole run (all processes)")
    parser.add_argument("--load-during", default=None, help="load averages seen during the run")
    parser.add_argument("--command", default="bash scripts/main.sh (fresh clone)")
    parser.add_argument("--stages", default=None, help="JSON lines of the run's stages: stage, seconds, load_1min")
    parser.add_argument("--json", default=None, help="where to write the record (default: quality.json here)")
    args = parser.parse_args()

    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance, update_record

    out = Path(args.out)
    stages = None
    if args.stages:
        stages = [json.loads(line) for line in Path(args.stages).read_text().splitlines() if line.strip()]
        if args.load_during is None and stages:
            args.load_during = f"1-min load average at the stages' ends: {[s['load_1min'] for s in stages]}"
    summary = json.loads((out / "model" / "training_summary.json").read_text())
    numbers = english_numbers(out / "eval")
    bitext = out / "bitext" / "model" / "training_summary.json"
    record = {
        "provenance": provenance(command=args.command),
        "wall_seconds_with_install": args.wall,
        "cpu_seconds": args.cpu,
        "load_average_during": args.load_during,
        "stages": stages,
        "english": {"numbers": numbers, "steps": summary["steps"], "train_seconds": round(summary["seconds"], 1),
                    "teacher": summary.get("teacher"), "recipe": summary["recipe"]["name"]},
        "bitext_train_seconds": round(json.loads(bitext.read_text())["seconds"], 1) if bitext.is_file() else None,
        # both models' rows and the cross-lingual targets, as the run printed them (scripts/main.sh writes it first)
        "side_by_side": json.loads(side.read_text()) if (side := out / "side_by_side.json").is_file() else None,
        "targets": [{"row": k, "bound": v, "value": numbers[k], "met": numbers[k] >= v} for k, v in TARGETS.items()],
    }
    if args.json is not None:
        atomic_write_json(args.json, record, indent=1)
    else:  # the folder's one JSON: the main job under "main_job", the peers under "peers"
        update_record(HERE / "quality.json", "main_job", record)
    print(json.dumps({k: v for k, v in record.items() if k != "provenance"}, indent=1))


if __name__ == "__main__":
    main()

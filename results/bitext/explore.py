"""One exploration run of the cross-lingual recipe, through the real pipeline (``paranmt_hf.training.train``).

Trains on the dev split's training copies (``dev_split.py``), selects on DEV data only: STS17 en-en Pearson (the
papers' model-selection set, logged during training) and bitext-mining error on the pairs held out of the TRAINING
bitext (``<split>/dev``). Test numbers (LASER Tatoeba, STS17 cross-lingual and Spanish, STS12-16 in the papers'
protocol) are computed once at the end and recorded, never used to choose.

    python results/bitext/explore.py NAME '{"recipe": "pras-bitext", "overrides": {"megabatch_size": 20},
        "sources": ["{split}/train/tatoeba-en-es.tsv.gz", ...], "max_steps": 4000}'

``{split}`` and ``{data}`` in sources expand to ``--split`` (default runs/data/split) and ``$PARANMT_HF_DATA/train``.
Appends one JSON line per run (command, commit, load average, recipe, dev and test numbers) to runs.jsonl here;
the model goes to runs/bitext/NAME (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_numbers(encoder: Any) -> dict[str, Any]:
    """Tatoeba (all 7 languages, both directions), STS17 (every track) and STS12-16 (papers' protocol)."""
    from paranmt_hf.evaluation.runner import evaluate, paper_average

    results = evaluate(encoder, ["sts12-16", "STS17", "Tatoeba"])
    tatoeba = {e["hf_subset"].split("-")[0]: {"xx2en": e["error_xx2en"], "en2xx": e["error_en2xx"],
                                               "mean": e["error"]} for e in results["Tatoeba"].scores["test"]}
    sts17 = {e["hf_subset"]: 100 * e["paper_pearson"] for e in results["STS17"].scores["test"]}
    years = {name: r.paper_score for name, r in results.items() if r.paper_year}
    return {"tatoeba": tatoeba, "sts17": sts17, "sts12_16": paper_average(results), "years": years}


def dev_mining(encoder: Any, split: Path) -> dict[str, Any]:
    """Mining error (mean of both directions, %) on the pairs held out of the training bitext."""
    from paranmt_hf.data.tatoeba import load_tatoeba
    from paranmt_hf.evaluation.metrics import bitext_error_rates

    out = {}
    for pairs in load_tatoeba(split / "dev"):
        rates = bitext_error_rates(encoder.encode(pairs.source), encoder.encode(pairs.english))
        out[pairs.lang] = {"xx2en": rates["error_xx2en"], "en2xx": rates["error_en2xx"], "mean": rates["error"]}
    out["mean"] = sum(v["mean"] for v in out.values()) / len(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name")
    parser.add_argument("config", help="JSON: recipe, overrides, sources, max_steps, eval_steps, seed")
    parser.add_argument("--split", default=str(ROOT / "runs/data/split"))
    parser.add_argument("--runs", default=str(ROOT / "runs/bitext"))
    args = parser.parse_args()
    os.environ.setdefault("PARANMT_HF_DATA", str(ROOT.parent / "shared/data"))
    import datasets

    datasets.disable_progress_bars()
    from paranmt_hf.evaluation.st_evaluator import STSSuiteEvaluator
    from paranmt_hf.training.recipes import get_recipe
    from paranmt_hf.training.trainer import train

    cfg = json.loads(args.config)
    recipe = get_recipe(cfg.get("recipe", "pras-bitext")).replace(**cfg.get("overrides", {}))  # null: turned off
    data = os.path.join(os.environ["PARANMT_HF_DATA"], "train")
    sources = [s.format(split=args.split, data=data) for s in cfg["sources"]]
    from paranmt_hf.utils.provenance import provenance

    code = provenance(command=["python", "results/bitext/explore.py", args.name, args.config])  # at the start
    load_start = os.getloadavg()
    started, cpu_started = time.time(), time.process_time()
    evaluator = STSSuiteEvaluator(tasks=["STS17:en-en"], name="dev")
    result = train(recipe, sources, Path(args.runs) / args.name, seed=cfg.get("seed", 0), dev_evaluator=evaluator,
                   eval_steps=cfg.get("eval_steps", 1000), save_steps=cfg.get("eval_steps", 1000),
                   max_steps=cfg.get("max_steps", -1), show_progress=False)
    wall, cpu = time.time() - started, time.process_time() - cpu_started
    from paranmt_hf.model.encoder import ParaNMTEncoder

    encoder = ParaNMTEncoder.from_pretrained(Path(args.runs) / args.name)
    curve = [(round(d.get("eval_dev_STS17_en-en_pearson", float("nan")), 4)) for d in result.dev_scores]
    dev = {"sts17_en_en": 100 * evaluator(encoder_model(encoder))["dev_mean_pearson"],
           "mining": dev_mining(encoder, Path(args.split)), "curve": curve}
    test = test_numbers(encoder)
    run = {
        "name": args.name,
        "command": " ".join(["python", "results/bitext/explore.py", args.name, f"'{args.config}'"]),
        "commit": code["git_commit"],
        "provenance": code,
        "load_start": [round(x, 2) for x in load_start],
        "load_end": [round(x, 2) for x in os.getloadavg()],
        "recipe": recipe.to_dict(),
        "sources": [s.replace(str(ROOT) + "/", "") for s in cfg["sources"]],
        "steps": result.steps,
        "train_pairs": result.train_pairs,
        "train_seconds": round(result.seconds, 1),
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),  # loading + vocabulary + training on one thread: ~ wall on an idle core
        "minibatches_seen": result.loss_stats.get("minibatches_seen"),
        "dev": dev,
        "test": test,
    }
    with open(HERE / "runs.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(run) + "\n")
    print("RESULT", args.name, json.dumps({"dev": {k: v for k, v in dev.items() if k != "curve"},
                                          "tatoeba": {k: round(v["mean"], 1) for k, v in test["tatoeba"].items()},
                                          "sts17": {k: round(v, 1) for k, v in test["sts17"].items()},
                                          "sts12_16": round(test["sts12_16"], 2), "wall": round(wall)}), flush=True)


def encoder_model(encoder: Any) -> Any:
    """A SentenceTransformer around ``encoder`` (what the dev evaluator takes)."""
    from sentence_transformers import SentenceTransformer

    from paranmt_hf import ParaNMTInputModule

    return SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")


if __name__ == "__main__":
    sys.exit(main())

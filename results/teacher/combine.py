"""A trained model + the teacher's distilled subword table as one ``trigram+subword`` model, weight chosen on dev.

    python results/teacher/combine.py runs/models/trigram-best NAME [--weights 0.5 0.75 1 1.25 1.5]
    python results/teacher/combine.py runs/models/joint-frozen NAME   # a trained trigram+subword: reweight it

The subword table is scaled so that its sentence embeddings have weight ``w`` relative to the trained model's (the
ratio of the median embedding norms on the dev sentences, times ``w``); ``paranmt_hf.build.combine_encoders`` then
concatenates them. For a model that already has a subword component, that component's table is rescaled by ``w``
(the weight the joint training settled on is ``w = 1``). ``w`` is chosen on dev (STS17 en-en + STS-B validation);
the chosen model's test numbers are computed once and appended to results/teacher/runs.jsonl; the model is saved
under runs/models/NAME.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from explore import DEV, RUNS, TEST, evaluate  # noqa: E402


def median_norm(encoder: object, texts: list[str]) -> float:
    return float(np.median(np.linalg.norm(encoder.encode(texts), axis=1)))


def dev_sentences() -> list[str]:
    from paranmt_hf.evaluation.tasks import eval_root, resolve_tasks
    from paranmt_hf.utils.paths import data_dir

    out: list[str] = []
    for name in DEV:
        for task in resolve_tasks(name):
            for datasets in task.load(eval_root(data_dir())).values():
                for ds in datasets:
                    out += ds.sentences1 + ds.sentences2
    return out


def main() -> None:
    import torch

    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.build import combine_encoders
    from paranmt_hf.distill import build_teacher_encoder, distill_teacher

    torch.set_num_threads(1)
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("name")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.5, 0.75, 1.0, 1.25, 1.5, 2.0])
    args = parser.parse_args()
    trained = ParaNMTEncoder.from_pretrained(args.model)
    joint = len(trained.model.encoders) > 1
    if joint:
        table = trained.model.encoders[-1].embedding.weight
        original = table.detach().clone()
        ratio = 1.0

        def make(w: float) -> ParaNMTEncoder:
            with torch.no_grad():
                table.copy_(original * w)
            return trained

    else:
        teacher = build_teacher_encoder("subword", ["x"], static_model=distill_teacher(cache_dir=RUNS / "distilled"))
        texts = dev_sentences()
        ratio = median_norm(trained, texts) / median_norm(teacher, texts)

        def make(w: float) -> ParaNMTEncoder:
            return combine_encoders([trained, teacher], scales=[1.0, w * ratio])

    sweep = {}
    for w in args.weights:
        combined = make(w)
        dev = evaluate(combined, DEV)
        sweep[w] = {"dev": dev, "dev_mean": round(float(np.mean(list(dev.values()))), 2)}
        print(w, sweep[w], flush=True)
    best = max(sweep, key=lambda w: sweep[w]["dev_mean"])
    combined = make(best)
    combined.save_pretrained(RUNS / "models" / args.name)
    test = evaluate(combined, [*TEST, "STSBenchmark"])
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    run = {
        "name": args.name,
        "cfg": {"combine": args.model, "weight": best, "norm_ratio": round(ratio, 4), "sweep": sweep},
        "command": "python results/teacher/combine.py " + " ".join(sys.argv[1:]),
        "commit": commit,
        "steps": 0,
        "dev": sweep[best]["dev"],
        "dev_mean": sweep[best]["dev_mean"],
        "test": test,
        "sts12_16": round(float(np.mean([test[t] for t in TEST])), 2),
        "load_average": os.getloadavg(),
    }
    print("RESULT", json.dumps(run), flush=True)
    with open(HERE / "runs.jsonl", "a") as f:
        f.write(json.dumps(run) + "\n")


if __name__ == "__main__":
    main()

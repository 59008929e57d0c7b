"""Encoding speed of teacher-recipe models against model2vec, one core, same run (ratios are what to read).

    python results/teacher/speed.py MODEL_DIR [MODEL_DIR ...]   # writes results/teacher/speed.json

Each model encodes the STS12-16 sentences (unique, in file order) with ``ParaNMTEncoder.encode(num_processes=1)`` and
with ``SentenceTransformer(dir).encode``; model2vec's ``StaticModel`` distilled from all-MiniLM-L6-v2 is the
baseline. Rounds are interleaved and the best of three is kept, so a busy machine slows every system alike.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def sentences() -> list[str]:
    from paranmt_hf.evaluation.tasks import eval_root, resolve_tasks
    from paranmt_hf.utils.paths import data_dir

    root = eval_root(data_dir())
    out: list[str] = []
    for name in ("STS12", "STS13", "STS14", "STS15", "STS16"):
        for task in resolve_tasks(name):
            for datasets in task.load(root).values():
                for ds in datasets:
                    out += ds.sentences1 + ds.sentences2
    return list(dict.fromkeys(out))


def best_rate(fn, texts: list[str], rounds: int = 3) -> float:  # noqa: ANN001
    best = 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        fn(texts)
        best = max(best, len(texts) / (time.perf_counter() - started))
    return best


def main() -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.distill import distill_teacher

    torch.set_num_threads(1)
    texts = sentences()
    m2v = distill_teacher(cache_dir=ROOT / "runs" / "distilled")
    systems = {"model2vec StaticModel.encode": lambda t: m2v.encode(t, batch_size=1024)}
    for path in sys.argv[1:]:
        enc = ParaNMTEncoder.from_pretrained(path)
        st = SentenceTransformer(path, device="cpu")
        name = Path(path).name
        systems[f"{name}: ParaNMTEncoder.encode"] = lambda t, e=enc: e.encode(t, num_processes=1)
        systems[f"{name}: SentenceTransformer(dir).encode"] = lambda t, s=st: s.encode(t, batch_size=1024)
    for fn in systems.values():  # warm caches (token-id caches included), as in a long-running service
        fn(texts[:2000])
    rates = {name: round(best_rate(fn, texts)) for name, fn in systems.items()}
    base = rates["model2vec StaticModel.encode"]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    result = {
        "command": "python results/teacher/speed.py " + " ".join(sys.argv[1:]),
        "commit": commit,
        "sentences": len(texts),
        "sent_per_s": rates,
        "ratio_to_model2vec": {k: round(v / base, 2) for k, v in rates.items()},
        "environment": {"python": platform.python_version(), "torch_threads": 1, "platform": platform.platform()},
        "load_average": os.getloadavg(),
    }
    print(json.dumps(result, indent=2))
    (HERE / "speed.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

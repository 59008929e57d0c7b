"""Encoding speed of teacher-recipe models against model2vec, one core, same run (ratios are what to read).

    python results/teacher/speed.py MODEL_DIR [MODEL_DIR ...] [--rounds 5]   # writes results/teacher/speed.json

Each model encodes the STS12-16 sentences (unique, in file order) with ``ParaNMTEncoder.encode(num_processes=1)`` and
with ``SentenceTransformer(dir).encode`` (batch 1024), token caches emptied before every round; model2vec's
``StaticModel`` distilled from all-MiniLM-L6-v2 (``use_multiprocessing=False``) is the baseline. One core (the
process pins itself), one thread, process-CPU time; rounds are interleaved, so a busy machine slows every system
alike; the ratio to model2vec of the best and the median round are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

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


def clear_caches(model: Any) -> None:
    """Empty a paranmt_hf model's token-id caches (ParaNMTEncoder or SentenceTransformer), so every round is cold."""
    module = model[0] if hasattr(model, "_first_module") else model
    featurizer = getattr(module, "featurizer", None)
    fast = getattr(featurizer, "fast_ids", None)
    if fast:
        fast.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="trained model directories (e.g. the main job's outputs/main/model)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, as the papers' speed numbers
    import torch
    from sentence_transformers import SentenceTransformer

    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.distill import distill_teacher
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance

    torch.set_num_threads(1)
    record = provenance()
    texts = sentences()
    m2v = distill_teacher(cache_dir=ROOT / "runs" / "distilled")
    systems: dict[str, tuple[Any, Any]] = {
        "model2vec StaticModel.encode": (None, lambda t: m2v.encode(t, batch_size=1024, use_multiprocessing=False))
    }
    for path in args.models:
        enc = ParaNMTEncoder.from_pretrained(path)
        st = SentenceTransformer(path, device="cpu")
        name = Path(path).name
        systems[f"{name}: ParaNMTEncoder.encode"] = (enc, lambda t, e=enc: e.encode(t, num_processes=1))
        systems[f"{name}: SentenceTransformer(dir).encode"] = (st, lambda t, s=st: s.encode(t, batch_size=1024))
    for _, fn in systems.values():  # first-call costs (imports, allocator) out of the timings
        fn(texts[:2000])
    seconds: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(args.rounds):  # interleaved: a load spike on the shared machine hits every system alike
        for name, (model, fn) in systems.items():
            if model is not None:
                clear_caches(model)
            started = time.process_time()
            fn(texts)
            seconds[name].append(time.process_time() - started)
    base = seconds["model2vec StaticModel.encode"]
    result = {
        "command": record["command"],
        "provenance": record,
        "sentences": len(texts),
        "unit": "process-CPU seconds per round, one core, one thread, cold token caches",
        "seconds": seconds,
        "best_sent_per_s": {name: round(len(texts) / min(ts)) for name, ts in seconds.items()},
        "ratio_to_model2vec_best": {name: round(min(base) / min(ts), 2) for name, ts in seconds.items()},
        "ratio_to_model2vec_median": {
            name: round(statistics.median(b / t for b, t in zip(base, ts, strict=True)), 2)
            for name, ts in seconds.items()
        },
        "load_average_after": os.getloadavg(),
    }
    print(json.dumps({k: result[k] for k in ("best_sent_per_s", "ratio_to_model2vec_best",
                                              "ratio_to_model2vec_median")}, indent=2))
    atomic_write_json(HERE / "speed.json", result)


if __name__ == "__main__":
    main()

"""Encoding speed of teacher-recipe models against model2vec, one core, same run (ratios are what to read).

    python results/teacher/speed.py MODEL_DIR [MODEL_DIR ...] [--rounds 5]   # writes results/teacher/speed.json

Each model encodes the 38,393 unique STS12-16 sentences (as ``results/speed``) with
``ParaNMTEncoder.encode(num_processes=1)`` and with ``SentenceTransformer(dir).encode`` (batch 1024), token caches
emptied before every round. Baseline: model2vec's ``StaticModel`` distilled from all-MiniLM-L6-v2
(``use_multiprocessing=False``) with a float32 table; model2vec's default distillation (float16 table,
``results/speed``'s reference) is timed beside it. One core (the process pins itself), one thread, process-CPU time;
rounds are interleaved, so a busy machine slows every system alike; ratios of the best and the median round.
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
    """The 38,393 unique sentences of the STS12-16 input files, as ``results/speed`` (issue 11's protocol)."""
    import sys

    from paranmt_hf.utils.paths import data_dir

    sys.path.insert(0, str(ROOT / "results" / "speed"))
    from models import sts_sentences

    return sts_sentences(data_dir())


FP16 = "model2vec StaticModel.encode, float16 table (model2vec's default distill; results/speed's reference)"


def clear_caches(model: Any) -> None:
    """Empty a paranmt_hf model's token-id caches (ParaNMTEncoder or SentenceTransformer), so every round is cold."""
    from loaders import clear_token_cache  # results/speed (on sys.path, see sentences())

    module = model[0] if hasattr(model, "_first_module") else model
    clear_token_cache(getattr(module, "featurizer", None))


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
    from paranmt_hf.model.distill import distill_teacher
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance

    torch.set_num_threads(1)
    record = provenance()
    texts = sentences()
    from model2vec import StaticModel
    from models import build_model2vec

    m2v = distill_teacher(cache_dir=ROOT / "runs" / "distilled")  # float32 table
    cache = Path(os.environ.get("SPEED_CACHE", "/tmp/paranmt_speed_models"))
    m2v16 = StaticModel.from_pretrained(build_model2vec(cache))
    systems: dict[str, tuple[Any, Any]] = {
        "model2vec StaticModel.encode": (None, lambda t: m2v.encode(t, batch_size=1024, use_multiprocessing=False)),
        FP16: (None, lambda t: m2v16.encode(t, batch_size=1024, use_multiprocessing=False)),
    }
    for path in args.models:
        enc = ParaNMTEncoder.from_pretrained(path)
        st = SentenceTransformer(path, device="cpu")
        name = "/".join(Path(path).parts[-2:])  # e.g. main/model and bitext/model stay apart
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
        "ratio_to_model2vec_float16_best": {
            name: round(min(seconds[FP16]) / min(ts), 2) for name, ts in seconds.items()
        },
        "load_average_after": os.getloadavg(),
    }
    print(json.dumps({k: result[k] for k in ("best_sent_per_s", "ratio_to_model2vec_best", "ratio_to_model2vec_median",
                                              "ratio_to_model2vec_float16_best")}, indent=2))
    atomic_write_json(HERE / "speed.json", result)


if __name__ == "__main__":
    main()

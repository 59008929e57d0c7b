"""Memory of `dedup_records` (64-bit hash set) per distinct pair.

Usage: python results/corpus_streaming/bench_dedup.py [--pairs 2000000]
Streams N distinct synthetic pairs (plus 10% duplicates) through dedup_records(keep="first"), samples RSS every
500K kept pairs, and fits the growth per distinct pair over the second half (the first million is the constant
Python-set buffer); writes results/corpus_streaming/dedup_memory.json with its provenance (command, git commit,
environment).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import psutil

from paranmt_hf.corpus.selection.dedup import DedupStats, dedup_records
from paranmt_hf.utils.atomic import atomic_write_json
from paranmt_hf.utils.provenance import provenance

HERE = Path(__file__).resolve().parent


def pairs(n: int):  # noqa: ANN201
    for i in range(n):
        yield {"text_a": f"reference sentence number {i} .", "text_b": f"paraphrase of sentence {i} ."}
        if i % 10 == 0:
            yield {"text_a": f"reference sentence number {i} .", "text_b": f"paraphrase of sentence {i} ."}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=6_000_000)
    args = parser.parse_args()
    record = provenance()  # at the start: the load average the run began under
    proc = psutil.Process()
    before = proc.memory_info().rss
    stats = DedupStats()
    start = time.time()
    kept, samples = 0, []
    for kept, _ in enumerate(dedup_records(pairs(args.pairs), keep="first", stats=stats), start=1):
        if kept % 500_000 == 0:  # the hash set is full at the last kept pair
            samples.append((kept, proc.memory_info().rss))
    seconds = time.time() - start
    half = [s for s in samples if s[0] > args.pairs // 2]
    slope = float(np.polyfit([k for k, _ in half], [r for _, r in half], 1)[0])
    grown = max(r for _, r in samples) - before
    result = {"provenance": record, "distinct_pairs": args.pairs, "read": stats.read, "kept": kept,
              "removed": stats.removed,
              "rss_growth_mb": round(grown / 2**20, 1), "fitted_bytes_per_distinct_pair": round(slope, 1),
              "seconds": round(seconds, 1),
              "extrapolated_gb_for_51.4M_distinct": round((grown + slope * (51.4e6 - args.pairs)) / 2**30, 2),
              "rss_samples_mb": [(k, round((r - before) / 2**20, 1)) for k, r in samples]}
    atomic_write_json(HERE / "dedup_memory.json", result, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

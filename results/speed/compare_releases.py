"""ParaNMTEncoder.encode of this checkout against an earlier release, one core, in alternating fresh processes.

Issue 11 asks that the fast path of every loader must not slow down ``ParaNMTEncoder``. This times
``ParaNMTEncoder.encode(sentences, num_processes=1)`` (cold token cache) on the 38,393 unique STS12-16 sentences for
word, sp (1024-d, 50K unigram) and trigram models built by each release from the same corpus and seed, in
interleaved subprocesses (this checkout, the earlier one, this checkout, ...), pinned to core 0, and reports each
side's best process-CPU time per sentence.

Usage: ``python results/speed/compare_releases.py --old-src /path/to/earlier/checkout [--rounds 4]``; the earlier
checkout needs its own environment where ``import paranmt_hf`` imports it (``--old-python``). Writes
``compare_releases.json`` here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = {"word": {"embedding_dim": 300}, "sp": {"embedding_dim": 1024, "vocab_size": 50_000},
         "trigram": {"embedding_dim": 300}}
WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import torch
torch.set_num_threads(1)
from pathlib import Path
from models import english_corpus, sts_sentences
from paranmt_hf import ParaNMTEncoder, build_encoder
data, cache, kind, extra = Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
path = cache / kind
if not (path / "config.json").is_file():
    build_encoder(kind, english_corpus(data), seed=0, **extra).save_pretrained(path)
enc = ParaNMTEncoder.from_pretrained(path)
sentences = sts_sentences(data)
def clear():
    featurizer = getattr(enc, "featurizer", None)
    fast = featurizer.fast_ids if featurizer is not None else enc._fast_ids()
    if fast:
        fast.clear()
enc.encode(sentences[:500], num_processes=1)
best = 1e9
for _ in range(3):
    clear()
    t = time.process_time()
    enc.encode(sentences, num_processes=1)
    best = min(best, time.process_time() - t)
print(json.dumps({"us_per_sentence": best * 1e6 / len(sentences)}))
"""


def main() -> None:
    """Alternate the two checkouts' workers and write the comparison JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-src", required=True, help="the earlier checkout")
    parser.add_argument("--old-python", default=None, help="python of its environment (default: <old-src>/.venv)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--cache", default="/tmp/paranmt_compare_models")
    args = parser.parse_args()
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import git_state, provenance

    record = provenance()  # at the start: the load average the run began under

    old_python = args.old_python or str(Path(args.old_src) / ".venv" / "bin" / "python")
    sides = {"this checkout": sys.executable, "earlier": old_python}
    roots = {"this checkout": str(HERE.parents[1]), "earlier": args.old_src}  # each side imports its own paranmt_hf
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false")
    times: dict[str, dict[str, list[float]]] = {kind: {side: [] for side in sides} for kind in KINDS}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        for kind, extra in KINDS.items():
            for side, python in sides.items():
                cache = Path(args.cache) / side.replace(" ", "_")
                cmd = ["taskset", "-c", "0", python, "-c", WORKER, str(HERE), str(data_dir()), str(cache), kind,
                       json.dumps(extra)]
                done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=roots[side])
                times[kind][side].append(json.loads(done.stdout.strip().splitlines()[-1])["us_per_sentence"])
    report = {
        "command": "python results/speed/compare_releases.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": record["git_commit"],
        "earlier_commit": git_state(args.old_src)["commit"], "provenance": record,
        "load_before": load_before, "load_after": os.getloadavg(),
        "unit": "best process-CPU microseconds per sentence, ParaNMTEncoder.encode(num_processes=1), cold cache",
        "kinds": {kind: {side: min(values) for side, values in by_side.items()} | {"all": by_side}
                  for kind, by_side in times.items()},
    }
    for row in report["kinds"].values():
        row["speedup"] = row["earlier"] / row["this checkout"]
    atomic_write_json(HERE / "compare_releases.json", report)
    print(json.dumps({k: {s: round(v, 2) for s, v in r.items() if s != "all"} for k, r in report["kinds"].items()}))


if __name__ == "__main__":
    main()

"""Peak memory of streaming a synthetic 5M-line ParaNMT-50M file (zip, exact layout) through the `filtered` config.

Usage: python results/corpus_streaming/bench_streaming.py [--lines 5000000] [--nltk-lines 100000] [--workdir DIR]

1. Writes para-nmt-50m.zip -> para-nmt-50m/para-nmt-50m.txt with N lines `reference \t back-translation \t score`
   (scores drawn from the bin sizes of the paper's Table 3, lengths around CzEng's mean, 5% French references,
   0.1% bad lines of every kind).
2. In a fresh process, streams it with `load_paranmt("filtered", zip)` (PRAS defaults, lid.176 language ID) and
   records RSS every 250K input lines and the process's peak RSS (ru_maxrss).
The full run uses the whitespace overlap tokenizer (the text is already tokenised, and NLTK's tokenizer costs
~0.3 ms/sentence on this shared 2-core machine, i.e. hours for 5M lines); a shorter run with the default NLTK
tokenizer checks that the tokenizer does not change the memory profile.
Writes results/corpus_streaming/streaming_memory.json (with its provenance: command, git commit, environment) and
streaming_memory.png.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EN = ("the a i you we they he she it is was are be to of and in that have not for on with as do at this but his by "
      "from say her or an will my one all would there their what so up out if about who get which go me when make "
      "can like time no just him know take people into year your good some could them see other than then now look "
      "only come its over think also back after use two how our work first well way even new want because any these "
      "give day most us man tell very find thing house car night home door money sorry right here where going said "
      ", . ? ! 's n't 'm 're").split()
FR = "je ne pense pas que nous devrions aller à la fête ce soir il est très belle et elle".split()
# Table 3 of ParaNMT-50M: millions of pairs per score range
BINS = [(-0.1, 0.2, 4.0), (0.2, 0.4, 3.8), (0.4, 0.6, 6.9), (0.6, 0.8, 14.4), (0.8, 1.0, 18.0)]
BAD = [b"no tabs here\n", b"ref\tpara\tnot-a-score\n", b"ref\tpara\tnan\n", b"\tpara\t0.5\n", b"caf\xe9\tx\t0.5\n",
       b"\n"]


def generate(path: Path, lines: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    probs = np.array([b[2] for b in BINS]) / sum(b[2] for b in BINS)
    bad = 0
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("para-nmt-50m/para-nmt-50m.txt", "w", force_zip64=True) as out:
            done = 0
            while done < lines:
                n = min(100_000, lines - done)
                lengths = np.clip(rng.poisson(8, n), 1, 60)
                which = rng.choice(len(BINS), n, p=probs)
                scores = [rng.uniform(BINS[w][0], BINS[w][1]) for w in which]
                buf = []
                for i in range(n):
                    vocab = FR if rng.random() < 0.05 else EN
                    ref = [vocab[j] for j in rng.integers(0, len(vocab), lengths[i])]
                    para = list(ref)
                    for _ in range(max(1, len(para) // 3)):  # perturb a third of the words
                        para[rng.integers(0, len(para))] = EN[rng.integers(0, len(EN))]
                    if rng.random() < 0.001:
                        buf.append(BAD[rng.integers(0, len(BAD))])
                        bad += 1
                    else:
                        buf.append(f"{' '.join(ref)}\t{' '.join(para)}\t{scores[i]:.6f}\n".encode())
                out.write(b"".join(buf))
                done += n
    return {"lines": lines, "bad_lines": bad, "zip_bytes": path.stat().st_size}


def stream(path: str, tokenizer: str, limit: int | None) -> dict:
    import psutil

    from paranmt_hf import load_paranmt

    proc = psutil.Process()
    rss_start = proc.memory_info().rss
    ds = load_paranmt("filtered", path, tokenizer=tokenizer)
    samples, kept, start = [], 0, time.time()
    every = max(1000, limit // 20) if limit else 100_000
    for kept, row in enumerate(ds, start=1):
        if kept % every == 0:
            rss = proc.memory_info().rss / 2**20
            samples.append({"kept_rows": kept, "rss_mb": rss, "seconds": time.time() - start})
        if limit and kept >= limit:
            break
        del row
    elapsed = time.time() - start
    return {"tokenizer": tokenizer, "kept_rows": kept, "seconds": elapsed, "rss_start_mb": rss_start / 2**20,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "samples": samples}


def run_child(path: Path, tokenizer: str, limit: int | None) -> dict:
    cmd = [sys.executable, __file__, "--child", str(path), "--tokenizer", tokenizer, "--limit", str(limit or 0)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=5_000_000)
    parser.add_argument("--nltk-kept", type=int, default=20_000, help="kept rows of the NLTK-tokenizer check")
    parser.add_argument("--workdir", default="/tmp/paranmt_bench")
    parser.add_argument("--child", default=None)
    parser.add_argument("--tokenizer", default="whitespace")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(stream(args.child, args.tokenizer, args.limit or None)))
        return
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance

    record = provenance()  # at the start: the load average the run began under
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    path = work / "para-nmt-50m.zip"
    t0 = time.time()
    info = generate(path, args.lines)
    info["generate_seconds"] = time.time() - t0
    whitespace = run_child(path, "whitespace", None)
    nltk = run_child(path, "nltk", args.nltk_kept)
    result = {
        "what": "peak RSS of streaming a synthetic para-nmt-50m.zip through load_paranmt('filtered') (PRAS defaults)",
        "provenance": record,
        "input": info, "runs": [whitespace, nltk], "limit_mb": 1024,
        "passed": whitespace["peak_rss_mb"] < 1024 and nltk["peak_rss_mb"] < 1024,
    }
    atomic_write_json(HERE / "streaming_memory.json", result, indent=2)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for run in result["runs"]:
            ax.plot([s["kept_rows"] for s in run["samples"]], [s["rss_mb"] for s in run["samples"]], marker=".",
                    label=f"{run['tokenizer']} tokenizer (peak {run['peak_rss_mb']:.0f} MB)")
        ax.axhline(1024, color="red", linestyle="--", label="1 GB budget")
        ax.set_xlabel("rows yielded by the filtered config")
        ax.set_ylabel("RSS (MB)")
        ax.set_title(f"Streaming {args.lines:,} ParaNMT lines through `filtered`")
        ax.set_ylim(0, 1100)
        ax.legend()
        fig.tight_layout()
        fig.savefig(HERE / "streaming_memory.png", dpi=120)
    except ImportError:
        pass
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))
    for run in result["runs"]:
        print(run["tokenizer"], run["kept_rows"], f"{run['seconds']:.0f}s", f"peak {run['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()

"""EMNLP 2017's data-source question on our data: the same number of pairs from each source, one TRIGRAM model each.

Each ``--source NAME=PATH`` (a pair TSV, with or without a header line) gives ``--pairs`` pairs drawn at random
(seeded; default: as many as the smallest source has); ``paranmt-hf train --recipe best-trigram`` (character-trigram
averaging, the papers' margin loss) trains on them, for each seed; each model is scored on STS12-16 (papers'
protocol: Pearson x 100 per dataset, averaged per year, then over years) and on STS-B validation (dev) and test.
Writes ``sources.json`` and ``sources.png`` (one dot per seed, the mean as a bar).

    python results/make_paranmt/compare_sources.py --work runs/make_paranmt/sources \\
        --source back-translated=runs/make_paranmt/filtered.tsv --source pivot=runs/make_paranmt/data/pivot.tsv \\
        --source flickr=runs/make_paranmt/data/flickr.tsv [--pairs N] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TEST_YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """The first two columns of a TSV (a header line naming reference/paraphrase or text_a/text_b skipped)."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if rows and rows[0][0] in ("reference", "text_a"):
        rows = rows[1:]
    return [(r[0], r[1]) for r in rows]


def scores(model: Path) -> dict[str, float]:
    """STS12-16 (papers' protocol), STS-B validation and test (Pearson x 100)."""
    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.evaluation.runner import evaluate, paper_average

    encoder = ParaNMTEncoder.from_pretrained(model)
    results = evaluate(encoder, [*TEST_YEARS, "STSBenchmark"])
    stsb = {split: 100 * entries[0]["paper_pearson"] for split, entries in results["STSBenchmark"].scores.items()}
    return {"sts12_16": paper_average(results), "stsb_dev": stsb["validation"], "stsb_test": stsb["test"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", action="append", required=True, metavar="NAME=PATH")
    parser.add_argument("--work", type=Path, required=True, help="folder for the sampled pairs and the models")
    parser.add_argument("--pairs", type=int, default=None, help="pairs per source (default: the smallest source's)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--recipe", default="best-trigram")
    parser.add_argument("--output", type=Path, default=HERE / "sources.json")
    args = parser.parse_args(argv)

    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance

    sources = dict(s.split("=", 1) for s in args.source)
    data = {name: read_pairs(Path(path)) for name, path in sources.items()}
    n = args.pairs or min(len(rows) for rows in data.values())
    runs: list[dict[str, Any]] = []
    for name, rows in data.items():
        if len(rows) < n:
            raise SystemExit(f"{name} has {len(rows):,} pairs, fewer than {n:,}")
        for seed in args.seeds:
            folder = args.work / f"{name}-{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            sample = random.Random(seed).sample(rows, n)
            (folder / "pairs.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in sample), encoding="utf-8")
            command = [sys.executable, "-m", "paranmt_hf.cli.main", "train", "--recipe", args.recipe, "--train",
                       f"pairs:{folder / 'pairs.tsv'}", "--output", str(folder / "model"), "--seed", str(seed),
                       "--no-progress", "--overwrite", "--save-steps", "1000000", "--dev"]
            start = time.time()
            subprocess.run(command, check=True)
            run = {"source": name, "path": sources[name], "seed": seed, "pairs": n,
                   "train_seconds": time.time() - start, **scores(folder / "model")}
            runs.append(run)
            print(json.dumps(run), flush=True)
            shutil.rmtree(folder / "model")
    summary = {}
    for name in data:
        mine = [r for r in runs if r["source"] == name]
        summary[name] = {k: sum(r[k] for r in mine) / len(mine) for k in ("sts12_16", "stsb_dev", "stsb_test")}
        summary[name]["available_pairs"] = len(data[name])
    atomic_write_json(args.output, {"pairs_per_source": n, "recipe": args.recipe, "summary": summary, "runs": runs,
                                    "command": " ".join(sys.argv), "provenance": provenance()})
    plot(runs, list(data), args.output.with_suffix(".png"))
    print(json.dumps(summary, indent=2))
    return 0


def plot(runs: list[dict[str, Any]], names: list[str], path: Path) -> None:
    """Per metric, one bar per source (the mean) and one dot per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [("sts12_16", "STS12-16 (papers' protocol)"), ("stsb_dev", "STS-B validation"), ("stsb_test",
                                                                                              "STS-B test")]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.6))
    for ax, (key, title) in zip(axes, metrics, strict=True):
        for x, name in enumerate(names):
            values = [r[key] for r in runs if r["source"] == name]
            ax.bar(x, sum(values) / len(values), color="#9ecae1")
            ax.plot([x] * len(values), values, "k.", markersize=6)
        ax.set_xticks(range(len(names)), names, rotation=15)
        ax.set_title(title)
        ax.set_ylabel("Pearson x 100")
        low = min(r[key] for r in runs)
        ax.set_ylim(low - 5, max(r[key] for r in runs) + 2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())

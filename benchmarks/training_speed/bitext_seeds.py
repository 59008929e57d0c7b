"""Does the faster training step change the trained models? The main job's bitext model, seeds, code before and now.

    python benchmarks/training_speed/bitext_seeds.py --before DIR [--seeds 0 1] [--json PATH] [--key NAME]

The main job's cross-lingual model (recipe ``pras-bitext``, the data of ``scripts/main.sh``: Tatoeba and Multi30k
bitext with the English paraphrases) is trained with each ``--seed`` on this checkout and on ``--before DIR`` (an
unpacked earlier checkout, e.g. ``git archive COMMIT | tar -x -C DIR``), two runs at a time, and evaluated as the main
job evaluates it. The one-pass step sums the same gradients in another order, so a run's scores move by float
rounding amplified over 6.5K steps; the seeds show how far a run's scores move anyway. Writes the scores of every run,
the per-code means and the seed-to-seed spread to ``training_speed.json`` (key ``--key``) and prints the README's
table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CELLS = {"sts12_16": "STS12-16 (papers)", "stsb_test": "STS-B test", "sts17_en_en": "STS17 en-en",
         "sts17_es_es": "STS17 es-es", "sts17_es_en": "STS17 es-en (4a)", "tatoeba_spa": "Tatoeba spa err",
         "tatoeba_fra": "Tatoeba fra err", "tatoeba_deu": "Tatoeba deu err"}
"""The main job's cells of the bitext model: record key -> row of ``benchmarks/quality/side_by_side.py`` (Tatoeba:
error %, mean of both directions; the rest: Pearson x100)."""


def scores(eval_dir: Path) -> dict[str, float]:
    """The :data:`CELLS` of a ``paranmt-hf eval --output`` folder, as the main job's side-by-side table reads them."""
    sys.path.insert(0, str(HERE.parent / "quality"))
    from side_by_side import rows

    found = rows(str(eval_dir))
    return {key: round(float(found[row]), 2) for key, row in CELLS.items()}


def train_and_evaluate(code: Path, seed: int, pivots: Path, work: Path) -> dict[str, float]:
    """Train ``pras-bitext`` with ``seed`` on the code of ``code`` and evaluate it as the main job does."""
    data = os.environ["PARANMT_HF_DATA"]
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    bitext = [f"{data}/train/bitext/{corpus}-en-{lang}.tsv.gz"
              for corpus, langs in (("tatoeba", "es fr de"), ("multi30k", "de fr cs")) for lang in langs.split()]
    english = [f"{data}/train/flickr30k-caption-pairs.tsv.gz",
               f"processed-5m:{data}/train/paranmt5m-sample-10k.tsv.gz@10", f"pairs:{pivots}@3"]
    cli = [sys.executable, "-m", "paranmt_hf.cli.main"]
    model = work / "model"
    commands = [
        [*cli, "train", "--recipe", "pras-bitext", "--train", *bitext, *english, "--dev", "STS17:en-en", "--output",
         str(model), "--seed", str(seed), "--save-steps", "1000", "--no-progress"],
        [*cli, "eval", str(model), "--tasks", "sts12-16", "STSBenchmark", "STS17", "Tatoeba", "--data-dir", data,
         "--output", str(work / "eval")],
    ]
    for command in commands:
        done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{' '.join(command[2:4])} (seed {seed}, {code}) failed:\n{done.stderr[-3000:]}")
    return scores(work / "eval")


def summarise(runs: dict[str, dict[str, dict[str, float]]]) -> dict[str, Any]:
    """Per code: the mean of every cell over seeds and its spread (max - min); the difference of the means."""
    out: dict[str, Any] = {}
    for code, by_seed in runs.items():
        out[code] = {c: {"mean": round(statistics.mean(s[c] for s in by_seed.values()), 3),
                         "spread": round(max(s[c] for s in by_seed.values()) - min(s[c] for s in by_seed.values()), 2)}
                     for c in CELLS}
    if {"now", "before"} <= set(out):
        out["now - before"] = {c: round(out["now"][c]["mean"] - out["before"][c]["mean"], 2) for c in CELLS}
    return out


def table(record: dict[str, Any]) -> str:
    """The README's table: one row per run, then the means and spreads."""
    lines = ["| code, seed | " + " | ".join(CELLS) + " |", "|---|" + "---:|" * len(CELLS)]
    for code, by_seed in record["runs"].items():
        for seed, row in by_seed.items():
            lines.append(f"| {code}, {seed} | " + " | ".join(f"{row[c]:.2f}" for c in CELLS) + " |")
    summary = record["summary"]
    for code in record["runs"]:
        lines.append(f"| {code}, mean | " + " | ".join(f"{summary[code][c]['mean']:.2f}" for c in CELLS) + " |")
        lines.append(f"| {code}, seed spread | " + " | ".join(f"{summary[code][c]['spread']:.2f}" for c in CELLS)
                     + " |")
    if "now - before" in summary:
        lines.append("| now - before (means) | " + " | ".join(f"{summary['now - before'][c]:+.2f}" for c in CELLS)
                     + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="an unpacked earlier checkout, trained with the same seeds")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="training seeds (default 0 1)")
    parser.add_argument("--json", default=str(HERE / "training_speed.json"), help="where the record goes")
    parser.add_argument("--key", default="bitext_seeds", help="the record's key in the JSON (other keys are kept)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from run import link_before

    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import provenance, update_record

    os.environ.setdefault("PARANMT_HF_DATA", str(data_dir()))
    codes = {"now": ROOT, "before": Path(link_before(args.before))}
    record: dict[str, Any] = {"provenance": provenance(), "seeds": args.seeds, "recipe": "pras-bitext"}
    with tempfile.TemporaryDirectory() as tmp:
        pivots = Path(tmp) / "tatoeba-pivots.tsv.gz"
        data = os.environ["PARANMT_HF_DATA"]
        sources = [f"{data}/train/bitext/tatoeba-en-{lang}.tsv.gz" for lang in ("es", "fr", "de")]
        subprocess.run([sys.executable, "-m", "paranmt_hf.cli.main", "corpus", "pivot", *sources, "-o", str(pivots)],
                       check=True, capture_output=True, cwd=ROOT)
        jobs = [(code, seed) for seed in args.seeds for code in codes]
        with ThreadPoolExecutor(2) as pool:  # two trainings at a time: one core each
            results = list(pool.map(
                lambda job: train_and_evaluate(codes[job[0]], job[1], pivots, Path(tmp) / f"{job[0]}-{job[1]}"), jobs))
    record["runs"] = {code: {str(seed): results[jobs.index((code, seed))] for seed in args.seeds} for code in codes}
    record["summary"] = summarise(record["runs"])
    update_record(args.json, args.key, record, indent=2)
    print(table(record))


if __name__ == "__main__":
    main()

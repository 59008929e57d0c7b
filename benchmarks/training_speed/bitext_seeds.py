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
CELLS = ("sts12_16", "stsb_test", "sts17_en_en", "sts17_es_es", "sts17_es_en", "tatoeba_spa", "tatoeba_fra",
         "tatoeba_deu")
"""The main job's cells of the bitext model (Tatoeba: error %, mean of both directions; the rest: Pearson x100)."""


def scores(eval_dir: Path) -> dict[str, float]:
    """The :data:`CELLS` of a ``paranmt-hf eval --output`` folder (the main job's side-by-side table's numbers)."""
    from paranmt_hf.hub.eval_results import eval_tables, load_eval_results

    tables = eval_tables(load_eval_results(str(eval_dir)))
    sts = {(task, subset): pearson for task, split, subset, pearson, _ in tables["other_sts"] if split == "test"}
    tatoeba = {subset.split("-")[0]: (a + b) / 2 for _, subset, a, b in tables["bitext"]}
    out = {"sts12_16": tables["average"][0], "stsb_test": sts[("STSBenchmark", "default")],
           **{f"sts17_{pair.replace('-', '_')}": sts[("STS17", pair)] for pair in ("en-en", "es-es", "es-en")},
           **{f"tatoeba_{lang}": tatoeba[lang] for lang in ("spa", "fra", "deu")}}
    return {k: round(float(v), 2) for k, v in out.items()}


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

"""Render runs.jsonl (explore.py) as table.md, and the mega-batch sweep (runs named ``m<M>_...``) as megabatch.png.

    python results/bitext/make_table.py
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MEGABATCH_RUN = re.compile(r"^m(\d+)_")
DEFAULT_ENGLISH = ["flickr30k-caption-pairs.tsv.gz", "paranmt5m-sample-10k.tsv.gz@10", "tatoeba-pivots.tsv.gz@3"]


def load() -> list[dict[str, Any]]:
    with open(HERE / "runs.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def changes(run: dict[str, Any]) -> str:
    """What the run changed from the pras-bitext preset (recipe fields) and its data, in short."""
    from paranmt_hf.training.recipes import get_recipe

    base = get_recipe("pras-bitext").to_dict()
    diff = [f"{k}={v}" for k, v in run["recipe"].items() if k not in ("description", "name") and base.get(k) != v]
    english = [s.split("/")[-1] for s in run["sources"] if "tatoeba-en" not in s and "multi30k" not in s]
    bitext = [s for s in run["sources"] if "tatoeba-en" in s or "multi30k" in s]
    if english != DEFAULT_ENGLISH:
        diff.append("English data: " + (", ".join(english) or "none"))
    if not bitext:
        diff.append("no bitext")
    return ", ".join(diff) or "-"


def row(run: dict[str, Any]) -> str:
    dev, test = run["dev"], run["test"]
    tat = test["tatoeba"]
    cells = [
        run["name"], changes(run), str(run["steps"]), str(run.get("cpu_seconds", "")),
        f"{dev['sts17_en_en']:.1f}", f"{dev['mining']['mean']:.2f}",
        *(f"{tat[lang]['mean']:.1f}" for lang in ("spa", "fra", "deu")),
        f"{test['sts17']['es-en']:.1f}", f"{test['sts17']['es-es']:.1f}", f"{test['sts12_16']:.2f}",
        run["commit"][:7],
    ]
    return "| " + " | ".join(cells) + " |"


def table(runs: list[dict[str, Any]]) -> str:
    head = ("| run | changes from `pras-bitext` | steps | CPU s | dev STS17 en-en | dev mining err | "
            "Tatoeba spa | fra | deu | STS17 es-en (4a) | es-es | STS12-16 | commit |")
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    lines += [row(r) for r in runs]
    commands = [f"- `{r['name']}`: `{r['command']}` (load average {r['load_start'][0]} -> {r['load_end'][0]})"
                for r in runs]
    return "\n".join([
        "# Bitext runs (results/bitext/explore.py; DEV: STS17 en-en Pearson x100 and mining error % on pairs held "
        "out of the training bitext; TEST: LASER Tatoeba error %, STS17, STS12-16 papers' protocol)", "",
        *lines, "", "## Commands", "", *commands, ""])


def plot(runs: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = sorted(((int(MEGABATCH_RUN.match(r["name"]).group(1)), r) for r in runs if MEGABATCH_RUN.match(r["name"])),
                   key=lambda x: x[0])
    if not sweep:
        return
    ms = [m for m, _ in sweep]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for lang, style in (("spa", "o-"), ("fra", "s-"), ("deu", "^-")):
        left.plot(ms, [r["test"]["tatoeba"][lang]["mean"] for _, r in sweep], style, label=f"Tatoeba {lang} (test)")
    left.plot(ms, [r["dev"]["mining"]["mean"] for _, r in sweep], "k--", label="held-out bitext (dev, mean)")
    left.set(xlabel="mega-batch size M", ylabel="mining error % (lower is better)", xscale="log")
    left.legend(fontsize=8)
    right.plot(ms, [r["dev"]["sts17_en_en"] for _, r in sweep], "k--o", label="STS17 en-en (dev)")
    right.plot(ms, [r["test"]["sts17"]["es-en"] for _, r in sweep], "o-", label="STS17 es-en 4a (test)")
    right.plot(ms, [r["test"]["sts17"]["es-es"] for _, r in sweep], "s-", label="STS17 es-es (test)")
    for m, r in sweep:
        if r.get("cpu_seconds"):
            right.annotate(f"{r['cpu_seconds']:.0f} CPU s", (m, r["dev"]["sts17_en_en"]), fontsize=7,
                           textcoords="offset points", xytext=(0, 6), ha="center")
    right.set(xlabel="mega-batch size M", ylabel="Pearson x100", xscale="log")
    right.legend(fontsize=8)
    first = sweep[0][1]["recipe"]
    fig.suptitle(f"pras-bitext, mega-batch size M held constant (no annealing): lr {first['learning_rate']}, "
                 f"{sweep[0][1]['steps']:,} steps of {first['batch_size']} pairs, one thread")
    fig.tight_layout()
    fig.savefig(HERE / "megabatch.png", dpi=120)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    runs = load()
    (HERE / "table.md").write_text(table(runs), encoding="utf-8")
    plot(runs)


if __name__ == "__main__":
    main()

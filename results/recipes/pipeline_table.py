"""Tables and plots of the pipeline runs (``results/recipes/pipeline/GROUP/*.json``, written by run_pipeline.py).

``render(plt)`` writes ``pipeline.md`` (one table per group: dev and test side by side, with each run's commit,
date and load) and ``ablation.png``; ``make_table.py`` calls it.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUNS = HERE / "pipeline"
YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]
KIND_LABELS = {"word": "WORD (GloVe-50d init, lr 5e-2)", "trigram": "TRIGRAM (300-d, lr 1e-2)",
               "lstm": "LSTM (GloVe-50d init, 50-d, scramble 0.3, lr 1e-3)"}
SCRIPTS = {"ablation": "ablation.sh", "loss": "loss_vs_mnrl.sh"}


def load_groups() -> dict[str, list[dict[str, Any]]]:
    """Every run, by group (runs sorted by name)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(RUNS.glob("*/*.json")):
        groups.setdefault(path.parent.name, []).append(json.loads(path.read_text(encoding="utf-8")))
    return groups


def _commit(run: dict[str, Any]) -> str:
    prov = run["provenance"]
    return (prov["git_commit"] or "unknown")[:8] + ("+dirty" if prov["git_dirty"] else "")


def run_table(runs: list[dict[str, Any]]) -> list[str]:
    """Dev (STS17 en-en, STS-B validation, mean) and test (STS12-16 per year, average, STS-B test), Pearson x 100."""
    rows = ["| run | dev STS17 en-en | dev STS-B val | **dev mean** | " + " | ".join(YEARS)
            + " | **STS12-16** | STS-B test | steps | train s | load (1 min) | commit | date |",
            "|---|" + "---:|" * 13 + "---|---|"]
    for r in runs:
        d, t, prov = r["dev"], r["test"], r["provenance"]
        rows.append(
            f"| {r['name']} | {d['STS17:en-en']:.2f} | {d['STSBenchmark:validation']:.2f} | **{d['mean']:.2f}** | "
            + " | ".join(f"{t[y]:.2f}" for y in YEARS)
            + f" | **{t['STS12-16']:.2f}** | {t['STSBenchmark:test']:.2f} | {r['steps']:,} | "
            f"{r['trainer_seconds']:.0f} | {prov['load_average'][0]:.1f} | `{_commit(r)}` | {prov['date'][:16]} |"
        )
    return rows


def ablation_grid(runs: list[dict[str, Any]]) -> list[str]:
    """The paper's Table 6 layout: STS12-16 (dev mean in brackets) per model and M."""
    grid: dict[str, dict[int, dict[str, Any]]] = {}
    for r in runs:
        grid.setdefault(r["recipe"]["kind"], {})[r["recipe"]["megabatch_size"]] = r
    ms = sorted({m for cells in grid.values() for m in cells})
    rows = ["| model | " + " | ".join(f"M={m}" for m in ms) + " | M=40 − M=1, test | M=40 − M=1, dev |",
            "|---|" + "---:|" * (len(ms) + 2)]
    for kind in ("word", "trigram", "lstm"):
        cells = grid.get(kind)
        if not cells:
            continue
        line = [f"{cells[m]['test']['STS12-16']:.2f} ({cells[m]['dev']['mean']:.2f})" if m in cells else "–"
                for m in ms]
        diff = ["–", "–"]
        if 1 in cells and 40 in cells:
            diff = [f"**{cells[40]['test']['STS12-16'] - cells[1]['test']['STS12-16']:+.2f}**",
                    f"{cells[40]['dev']['mean'] - cells[1]['dev']['mean']:+.2f}"]
        rows.append(f"| {KIND_LABELS.get(kind, kind)} | " + " | ".join(line) + f" | {' | '.join(diff)} |")
    return rows


def seed_summary(runs: list[dict[str, Any]]) -> list[str]:
    """Mean, standard deviation and range of STS12-16 over the seeds."""
    values = [r["test"]["STS12-16"] for r in runs]
    if len(values) < 2:
        return []
    return [f"STS12-16 over {len(values)} seeds: mean **{statistics.mean(values):.2f}**, standard deviation "
            f"{statistics.stdev(values):.2f}, range {min(values):.2f}–{max(values):.2f}; STS-B test mean "
            f"{statistics.mean(r['test']['STSBenchmark:test'] for r in runs):.2f}; dev mean "
            f"{statistics.mean(r['dev']['mean'] for r in runs):.2f}."]


def markdown(groups: dict[str, list[dict[str, Any]]]) -> str:
    """pipeline.md."""
    out = ["# Runs through the real pipeline (`paranmt-hf train` + `paranmt-hf eval`)", "",
           "Written by `make_table.py` from `pipeline/GROUP/*.json` (one file per run: train and eval commands, "
           "recipe as trained, provenance, dev curve, scores). Pearson × 100. Dev = STS17 en-en and STS-B "
           "validation (model selection reads these only); test = STS12–16 (papers' protocol: mean over each "
           "year's datasets, then over years) and STS-B test, reported once. `train s`: the trainer's own time; "
           "load: the 1-minute load average when the run started (2 shared cores).", ""]
    for group, runs in groups.items():
        script = SCRIPTS.get(group, "seeds.sh " + group.removeprefix("seeds-") if group.startswith("seeds-") else "")
        out += [f"## {group}" + (f" (`bash results/recipes/{script}`)" if script else ""), ""]
        if group == "ablation":
            out += ["STS12–16 with the dev mean in brackets:", "", *ablation_grid(runs), "", "All numbers:", ""]
        out += run_table(runs)
        if group.startswith("seeds-"):
            out += ["", *seed_summary(runs)]
        out += ["", "Commands (`paranmt-hf train`; each run then ran `paranmt-hf eval MODEL --tasks sts12-16 "
                "STSBenchmark STS17:en-en`):", ""]
        out += [f"- {r['name']}: `{_shorten(r['train_command'])}`" for r in runs]
        out.append("")
    return "\n".join(out)


def _shorten(command: str) -> str:
    """The train command without the scratch output folder and the data folder's absolute path."""
    command = re.sub(r" --output \S+", " --output MODEL", command)
    return re.sub(r"\S*/train/", "$DATA/train/", re.sub(r"\S*/data/tatoeba-pivots", "PIVOTS", command))


def plot_ablation(runs: list[dict[str, Any]], plt: Any) -> None:
    """ablation.png: dev mean and STS12-16 against M, one line per model."""
    series: dict[str, dict[int, dict[str, Any]]] = {}
    for r in runs:
        series.setdefault(r["recipe"]["kind"].upper(), {})[r["recipe"]["megabatch_size"]] = r
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2))
    for ax, (label, value) in zip(axes, (("dev: mean of STS17 en-en, STS-B val", lambda r: r["dev"]["mean"]),
                                         ("test: STS12-16 (papers' protocol)", lambda r: r["test"]["STS12-16"])),
                                  strict=True):
        for kind, points in series.items():
            ms = sorted(points)
            ax.plot(ms, [value(points[m]) for m in ms], marker="o", label=kind)
        ax.set_xticks(sorted({m for p in series.values() for m in p}))
        ax.set_xlabel("mega-batch size M (mini-batches of 100 pairs)")
        ax.set_ylabel(f"{label}, Pearson x100")
    axes[0].legend()
    commits = sorted({_commit(r) for r in runs})
    fig.suptitle(f"Mega-batch ablation, paranmt-hf train, 3,000 steps (commit {', '.join(commits)})", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(HERE / "ablation.png", dpi=110)
    plt.close(fig)


def render(plt: Any) -> str:
    """Write pipeline.md and ablation.png; returns the markdown."""
    groups = load_groups()
    text = markdown(groups)
    (HERE / "pipeline.md").write_text(text, encoding="utf-8")
    if groups.get("ablation"):
        plot_ablation(groups["ablation"], plt)
    return text

"""Render results/teacher/table.md and ablation.png from runs.jsonl and init_variants.jsonl.

    python results/teacher/make_table.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]


def rows() -> list[dict]:
    out = []
    for name in ("init_variants.jsonl", "runs.jsonl"):
        path = HERE / name
        if path.is_file():
            out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    runs = rows()
    lines = [
        "| run | STS17 en-en (dev) | STS-B val (dev) | dev mean | "
        + " | ".join(YEARS)
        + " | **STS12-16** | STS-B test | steps | s | commit |",
        "|---|" + "---:|" * (len(YEARS) + 8) + "---|",
    ]
    for r in runs:
        dev, test = r["dev"], r["test"]
        lines.append(
            f"| {r['name']} | {dev['STS17']:.2f} | {dev['STSBenchmark']:.2f} | {r['dev_mean']:.2f} | "
            + " | ".join(f"{test[y]:.2f}" for y in YEARS)
            + f" | **{r['sts12_16']:.2f}** | {test['STSBenchmark']:.2f} | {r.get('steps', 0)} "
            f"| {r.get('seconds', '')} | {r['commit'][:7]} |"
        )
    lines.append("")
    lines.append("Commands:")
    lines.append("")
    for r in runs:
        lines.append(f"- `{r['name']}`: `{r['command']}`")
    (HERE / "table.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(runs) + 1.5))
    names = [r["name"] for r in runs]
    dev = [r["dev_mean"] for r in runs]
    ax.barh(names, dev, color="tab:blue", alpha=0.6, label="dev mean (STS17 en-en, STS-B val)")
    ax.scatter([r["sts12_16"] for r in runs], names, color="tab:red", zorder=3, label="STS12-16 (test, reported once)")
    ax.axvline(74.6, color="grey", ls="--", lw=1, label="target 74.6 (paper SP, 25.85M pairs)")
    ax.set_xlim(55, 90)
    ax.set_xlabel("Pearson x 100")
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "ablation.png", dpi=120)


if __name__ == "__main__":
    main()

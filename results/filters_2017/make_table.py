"""Table and plot of the E17 tuning loop (``runs.jsonl`` of tune.py): per filter, the dev-selected setting.

The setting is chosen by dev (STS17 en-en + STS-B validation) alone, by the mean over its seeds when tune.py ran
several (``--seeds``); the test columns (STS12-16, papers' protocol;
STS-B test) are those of the chosen setting, as E17's Tables 6, 7 and 12 report them. Writes ``table.md``,
``summary.json`` and ``tune.png`` (dev score of every setting, per filter, beside the random baseline's seeds).

    python results/filters_2017/make_table.py [--runs results/filters_2017/runs.jsonl]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
E17 = {"None (random)": (66.9, 65.5), "length": (67.3, 66.0), "translation cost": (66.6, 65.4),
       "language model": (66.7, 65.5), "reference classification": (67.0, 65.5), "unigram overlap": (66.6, 66.1),
       "bigram overlap": (67.0, 65.5), "trigram overlap": (66.9, 65.4), "BLEU": (67.1, 65.3)}
"""E17's test numbers (GRAN, AVG; averaged over its 10 NMT datasets): Tables 6, 7 and 12."""


def describe(bounds: dict[str, list[float | None]]) -> str:
    """``low <= column <= high`` in words."""
    if not bounds:
        return "-"
    parts = []
    for name, (low, high) in bounds.items():
        lo = "" if low is None else f"{low:g} <= "
        hi = "" if high is None else f" <= {high:g}"
        parts.append(f"{lo}{name}{hi}")
    return "; ".join(parts)


def interval(bounds: dict[str, list[float | None]]) -> str:
    """``[low, high]`` of a one-column setting (an open side left empty)."""
    return "; ".join(f"[{'' if lo is None else f'{lo:g}'},{'' if hi is None else f'{hi:g}'}]"
                     for lo, hi in bounds.values())


def settings(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per setting (its bounds): the mean of its seeds' scores, in the order first seen."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        groups.setdefault(json.dumps(run["bounds"], sort_keys=True), []).append(run)
    out = []
    for mine in groups.values():
        record = {"bounds": mine[0]["bounds"], "passing_references": mine[0]["passing_references"],
                  "seeds": [r["seed"] for r in mine]}
        if all("dev" in r for r in mine):
            for key in ("dev", "sts12_16", "stsb_test"):
                record[key] = statistics.mean(r[key] for r in mine)
        out.append(record)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=HERE / "runs.jsonl")
    args = parser.parse_args(argv)
    from paranmt_hf.utils.atomic import atomic_write_json, atomic_write_text
    from paranmt_hf.utils.provenance import provenance

    runs = [json.loads(line) for line in args.runs.read_text(encoding="utf-8").splitlines()]
    filters = list(dict.fromkeys(r["filter"] for r in runs))
    rows: list[dict[str, Any]] = []
    for name in filters:
        mine = [r for r in runs if r["filter"] == name]
        trained = [r for r in mine if "dev" in r]
        row: dict[str, Any] = {"filter": name, "settings": len(mine), "feasible": len(trained),
                               "e17_test_gran_avg": E17.get(name)}
        if name == "None (random)" and trained:
            for key in ("dev", "sts12_16", "stsb_test"):
                values = [r[key] for r in trained]
                row[key] = statistics.mean(values)
                row[key + "_sd"] = statistics.stdev(values) if len(values) > 1 else 0.0
            row["setting"] = f"{len(trained)} seeds"
        elif trained:
            best = max(settings(trained), key=lambda r: r["dev"])
            row.update(setting=describe(best["bounds"]), passing_references=best["passing_references"],
                       seeds=best["seeds"], dev=best["dev"], sts12_16=best["sts12_16"],
                       stsb_test=best["stsb_test"])
        row["settings"] = len(settings(mine))
        row["feasible"] = len(settings(trained))
        rows.append(row)
    random_row = next((r for r in rows if r["filter"] == "None (random)"), None)
    lines = ["| filter | settings (feasible) | chosen on dev | passing references | dev | STS12-16 | STS-B test "
             "| E17 test (GRAN / AVG) |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        if "dev" not in row:
            lines.append(f"| {row['filter']} | {row['settings']} (0) | too few pairs pass every setting | | | | | |")
            continue
        cells = [f"{row[k]:.2f}" + (f" ± {row[k + '_sd']:.2f}" if k + "_sd" in row else "")
                 for k in ("dev", "sts12_16", "stsb_test")]
        e17 = row["e17_test_gran_avg"]
        passing = f"{row['passing_references']:,}" if "passing_references" in row else "all"
        lines.append(f"| {row['filter']} | {row['settings']} ({row['feasible']}) | {row['setting']} | {passing} | "
                     + " | ".join(cells) + f" | {e17[0]} / {e17[1]} |")
    table = "\n".join(lines) + "\n"
    atomic_write_text(HERE / "table.md", table)
    atomic_write_json(HERE / "summary.json", {"rows": rows, "runs": len(runs), "command": " ".join(sys.argv),
                                              "provenance": provenance()})
    plot(runs, filters, random_row, HERE / "tune.png")
    print(table)
    return 0


def plot(runs: list[dict[str, Any]], filters: list[str], random_row: dict[str, Any] | None, path: Path) -> None:
    """Dev score of every feasible setting, one panel per filter; the random baseline as a band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [f for f in filters if f != "None (random)"]
    cols = 4
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        mine = settings([r for r in runs if r["filter"] == name])
        xs = list(range(len(mine)))
        ys = [r.get("dev", float("nan")) for r in mine]
        ax.plot(xs, ys, "o-", color="#3182bd", markersize=4, label="setting (mean of its seeds)")
        for x, setting in zip(xs, mine, strict=True):
            seeds = [r["dev"] for r in runs if r["filter"] == name and r["bounds"] == setting["bounds"] and "dev" in r]
            if len(seeds) > 1:
                ax.plot([x] * len(seeds), seeds, ".", color="#9ecae1", markersize=3)
        if random_row is not None and "dev" in random_row:
            mean, sd = random_row["dev"], random_row["dev_sd"]
            ax.axhspan(mean - sd, mean + sd, color="#fdae6b", alpha=0.4, label="random ± sd")
        ax.set_xticks(xs, [interval(r["bounds"]) for r in mine], rotation=70, fontsize=6)
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("dev Pearson x 100", fontsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())

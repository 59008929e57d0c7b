"""Render results/recipes/explore.jsonl as a markdown table (results/recipes/table.md) and a plot (runs.png)."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


NAMES = {"flickr30k-caption-pairs": "flickr", "paranmt5m-sample-10k": "paranmt10k",
         "tatoeba-pivot-en": "pivots (first script, 20.9K)", "tatoeba-pivots": "pivots (corpus pivot, 21.2K)",
         "flickr-self20": "flickr (self-filtered, top 80%)", "flickr-chords": "flickr chords"}
DEFAULTS = {"kind", "embedding_dim", "learning_rate", "megabatch_size", "sampling", "loss", "word_vectors",
            "vector_vocab_size", "batch_size", "scramble_rate"}


def short(files: list[str]) -> str:
    """Data column: file stems, repeated files as ``name xN``."""
    counts: dict[str, int] = {}
    for f in files:
        stem = Path(f).name.split(".")[0]
        name = NAMES.get(stem, stem.replace("tatoeba-en-", "tatoeba-"))
        counts[name] = counts.get(name, 0) + 1
    return " + ".join(name + (f" x{n}" if n > 1 else "") for name, n in counts.items())


def notes(run: dict) -> str:
    """Settings beyond the table's columns, and whether the unknown-token row started at zero."""
    cfg = run["cfg"]
    out = [f"{k}={v}" for k, v in cfg.items() if k not in DEFAULTS]
    if cfg.get("batch_size", 100) != 100:
        out.append(f"batch={cfg['batch_size']}")
    if run.get("unk_zero"):
        out.append("unk row 0")
    return ", ".join(out)


def plot_ablation(runs: list[dict], plt: object) -> None:
    """ablation.png: STS12-16 against the mega-batch size M for the ``en_*`` runs of ablation.sh."""
    series: dict[str, dict[int, float]] = {}
    for r in runs:
        if r["name"].startswith("en_") and "_M" in r["name"]:
            series.setdefault(r["cfg"]["kind"].upper(), {})[r["cfg"]["megabatch_size"]] = r["sts"]
    if not series:
        return
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for kind, points in series.items():
        ms = sorted(points)
        ax.plot(ms, [points[m] for m in ms], marker="o", label=kind)
    ax.set_xticks([1, 20, 40])
    ax.set_xlabel("mega-batch size M (mini-batches of 100 pairs)")
    ax.set_ylabel("STS12-16 (papers' protocol)")
    ax.set_title("Mega-batch ablation: ParaNMT sample + Tatoeba pivots")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "ablation.png", dpi=110)


def main() -> None:
    runs = [json.loads(line) for line in (HERE / "explore.jsonl").read_text().splitlines() if line.strip()]
    rows = ["| run | kind | dim | loss | lr | M | sampling | steps | data | other | dev Pearson | **STS12-16** |",
            "|---|---|---:|---|---:|---:|---|---:|---|---|---:|---:|"]
    for r in runs:
        c = r["cfg"]
        dim = 50 if c.get("word_vectors") and c["kind"] in ("word", "lstm") else c.get("embedding_dim", 300)
        loss = c.get("loss", "megabatch")
        rows.append(
            f"| {r['name']} | {c['kind']} | {dim} | {loss} | {c['learning_rate']} | "
            f"{c.get('megabatch_size', 40) if loss == 'megabatch' else '-'} | {c.get('sampling', 'MAX')} | "
            f"{r['log'][-1][0]} | {short(r['files'])} | {notes(r)} | {r['log'][-1][2]:.3f} | **{r['sts']:.2f}** |"
        )
    (HERE / "table.md").write_text("\n".join(rows) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.32 * len(runs) + 1.2))
    bars = ax.barh([r["name"] for r in runs], [r["sts"] for r in runs], color="#4c72b0")
    ax.bar_label(bars, labels=[f"{r['sts']:.2f}" for r in runs], padding=2, fontsize=7)
    ax.axvline(70.0, color="red", linestyle="--", label="target 70.0")
    ax.axvline(67.6, color="grey", linestyle=":", label="model2vec (MiniLM) 67.6")
    ax.set_xlabel("STS12-16, papers' protocol (mean Pearson x100 per year)")
    ax.invert_yaxis()
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(HERE / "runs.png", dpi=110)
    plot_ablation(runs, plt)
    print("\n".join(rows))


if __name__ == "__main__":
    main()

"""Render the recipe results: explore.jsonl as table.md + runs.png, the pipeline runs as pipeline.md + ablation.png.

    python results/recipes/make_table.py

explore.jsonl holds the runs of explore.py (the first 51 from its earlier lean loop); each says whether its model
started the unknown-token row at zero (``unk_zero``: runs before that change had a random, never-trained row) and in
which commit it was recorded. The table shows both, so runs from before and after the change are never compared
unawares.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipeline_table import render

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
    return ", ".join(out)


def recorded(run: dict) -> str:
    """The commit the run was recorded at (its provenance) or, for older runs, first committed in."""
    if run.get("provenance"):
        prov = run["provenance"]
        return f"`{(prov['git_commit'] or 'unknown')[:7]}`" + ("+dirty" if prov["git_dirty"] else "")
    return f"≤ `{run['committed_in']['commit'][:7]}`"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    runs = [json.loads(line) for line in (HERE / "explore.jsonl").read_text().splitlines() if line.strip()]
    rows = [
        "# Recipe exploration (explore.py)", "",
        "Written by `make_table.py` from `explore.jsonl`. `unk row`: the unknown-token row at initialisation, `0` "
        "since commit 9f56b0d, `random` (N(0, 1), never trained) before it: a `random` run and a `0` run differ "
        "by more than the setting their names vary. "
        "`commit`: where the run was recorded (`≤`: first committed in; earlier runs recorded no provenance). Dev "
        "Pearson: mean of STS17 en-en and STS-B validation at the last step. Runs through the real pipeline "
        "(`paranmt-hf train`) are in `pipeline.md`.", "",
        "| run | kind | dim | loss | lr | M | sampling | steps | data | other | unk row | commit | dev Pearson | "
        "**STS12-16** |",
        "|---|---|---:|---|---:|---:|---|---:|---|---|---|---|---:|---:|"]
    for r in runs:
        c = r["cfg"]
        dim = 50 if c.get("word_vectors") and c["kind"] in ("word", "lstm") else c.get("embedding_dim", 300)
        loss = c.get("loss", "megabatch")
        rows.append(
            f"| {r['name']} | {c['kind']} | {dim} | {loss} | {c['learning_rate']} | "
            f"{c.get('megabatch_size', 40) if loss == 'megabatch' else '-'} | {c.get('sampling', 'MAX')} | "
            f"{r['log'][-1][0]} | {short(r['files'])} | {notes(r)} | {'0' if r['unk_zero'] else 'random'} | "
            f"{recorded(r)} | {r['log'][-1][2]:.3f} | **{r['sts']:.2f}** |"
        )
    (HERE / "table.md").write_text("\n".join(rows) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.32 * len(runs) + 1.2))
    colors = ["#4c72b0" if r["unk_zero"] else "#c0c0c0" for r in runs]
    bars = ax.barh([r["name"] for r in runs], [r["sts"] for r in runs], color=colors)
    ax.bar_label(bars, labels=[f"{r['sts']:.2f}" for r in runs], padding=2, fontsize=7)
    ax.barh([runs[0]["name"]], [0], color="#c0c0c0", label="random unknown row (before 9f56b0d)")
    ax.barh([runs[0]["name"]], [0], color="#4c72b0", label="unknown row at zero")
    ax.axvline(70.0, color="red", linestyle="--", label="target 70.0")
    ax.axvline(67.6, color="grey", linestyle=":", label="model2vec (MiniLM) 67.6")
    ax.set_xlabel("STS12-16, papers' protocol (mean Pearson x100 per year)")
    ax.invert_yaxis()
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(HERE / "runs.png", dpi=110)
    plt.close(fig)
    print("\n".join(rows))
    print(render(plt))


if __name__ == "__main__":
    main()

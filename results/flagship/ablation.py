"""Ablation of the flagship English model (`best`): what each step of the teacher lever adds, chosen on dev only.

The model = the paraphrastic TRIGRAM model (`best-trigram`, trained by the main job) concatenated with a WordPiece
table learned from all-MiniLM-L6-v2 (:mod:`paranmt_hf.training.tokenlearn`), its part weighted by ``teacher_weight``
(:func:`paranmt_hf.model.distill.balance_subword`). Rows, every one built with the library's own functions:

- the TRIGRAM model alone; model2vec's distillation of the teacher alone (the table before learning);
- the table after the least-squares map to the teacher's sentence embeddings; after the cosine regression too
  (``--epochs``), on all the unique English sentences of the main job's training pairs or a sample (``--sample``);
- each table concatenated with the TRIGRAM model, ``teacher_weight`` swept; the weight with the best **dev** score
  (mean of STS17 en-en and STS-B validation, Pearson x 100) is the one reported on test (STS12-16 papers' protocol,
  STS-B test), which is never used to choose.

The teacher's embeddings come from the library's cache (:mod:`paranmt_hf.training.teacher_embeddings`; computed on
first use), or from an earlier pass over the same sentences (``--targets NPY --targets-sentences TXT``: rows of the
NPY are the sentences of the TXT, matched after whitespace normalisation, which the teacher's tokenizer ignores).

Usage::

    python results/flagship/ablation.py --trigram TRIGRAM_MODEL --pivots outputs/main/data/tatoeba-pivots.tsv.gz

Writes ``ablation.json``, ``ablation.md`` (tables) and ``ablation.png`` here, with the provenance of the run.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
WEIGHTS = (0.7, 1.0, 1.25, 1.5, 2.0, 2.5)
TASKS = ["sts12-16", "STSBenchmark", "STS17:en-en"]


class Table:
    """Precomputed embeddings as an encoder (what ``paranmt_hf.evaluation.evaluate`` calls)."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def encode(self, sentences: list[str], **_: Any) -> np.ndarray:
        return np.stack([self.vectors[s] for s in sentences])


def eval_sentences(data: Path) -> list[str]:
    """Every sentence the evaluation embeds (collected by running it once with a recording encoder)."""
    from paranmt_hf.evaluation.runner import evaluate

    seen: dict[str, None] = {}

    class Recorder:
        def encode(self, sentences: list[str], **_: Any) -> np.ndarray:
            seen.update(dict.fromkeys(sentences))
            return np.ones((len(sentences), 2), dtype=np.float32)

    evaluate(Recorder(), TASKS, data_dir=data)
    return list(seen)


def scores(vectors: dict[str, np.ndarray], data: Path) -> dict[str, float]:
    """dev (STS17 en-en, STS-B validation), test (STS12-16 papers' protocol, STS-B test), Pearson x 100."""
    from paranmt_hf.evaluation.runner import evaluate, paper_average

    results = evaluate(Table(vectors), TASKS, data_dir=data)
    stsb = results["STSBenchmark"].scores
    out = {"dev_sts17": 100 * results["STS17"].scores["test"][0]["paper_pearson"],
           "dev_stsb": 100 * stsb["validation"][0]["paper_pearson"],
           "sts12_16": paper_average(results), "stsb_test": 100 * stsb["test"][0]["paper_pearson"]}
    out["dev"] = (out["dev_sts17"] + out["dev_stsb"]) / 2
    return {k: round(v, 2) for k, v in out.items()}


def combined(trigram: np.ndarray, table: np.ndarray, anchors_tri: np.ndarray, anchors_table: np.ndarray,
             weight: float) -> np.ndarray:
    """``[trigram, f * table]`` with f as ``balance_subword`` sets it (median norms over the same anchors)."""
    factor = weight * np.median(np.linalg.norm(anchors_tri, axis=1)) / np.median(np.linalg.norm(anchors_table, axis=1))
    return np.concatenate([trigram, factor * table], axis=1)


def main() -> None:  # noqa: C901 - one linear experiment
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trigram", required=True, help="the trained best-trigram model directory")
    parser.add_argument("--pivots", required=True, help="the main job's tatoeba-pivots.tsv.gz")
    parser.add_argument("--data", default=None, help="$PARANMT_HF_DATA")
    parser.add_argument("--epochs", type=float, default=6.0)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--samples", type=int, nargs="*", default=[], help="also fit on seeded samples of this size")
    parser.add_argument("--targets", default=None, help="teacher embeddings of an earlier pass (.npy)")
    parser.add_argument("--targets-sentences", default=None, help="its sentences, one per line")
    args = parser.parse_args()

    from paranmt_hf.model.distill import build_teacher_encoder
    from paranmt_hf.model.encoder import ParaNMTEncoder
    from paranmt_hf.training.data import load_pairs
    from paranmt_hf.training.teacher import BALANCE_SENTENCES
    from paranmt_hf.training.teacher_embeddings import teacher_embeddings
    from paranmt_hf.training.tokenlearn import fit_table, unique_sentences
    from paranmt_hf.utils.atomic import atomic_write_json, atomic_write_text
    from paranmt_hf.utils.paths import cache_dir, data_dir
    from paranmt_hf.utils.provenance import provenance

    record = provenance(packages=("paranmt-hf", "torch", "sentence-transformers", "model2vec"))
    data = data_dir(args.data)
    sources = [str(data / "train" / "flickr30k-caption-pairs.tsv.gz"),
               f"processed-5m:{data / 'train' / 'paranmt5m-sample-10k.tsv.gz'}@10", f"pairs:{args.pivots}@3"]
    pairs = load_pairs(sources, None, 0)  # the main job's English data, shuffled as `paranmt-hf train` does
    anchors = list(pairs["anchor"])
    sentences = unique_sentences(anchors + list(pairs["positive"]))
    timings: dict[str, float] = {}

    started = time.perf_counter()
    if args.targets:
        known = {" ".join(s.split()): i for i, s in enumerate(
            Path(args.targets_sentences).read_text(encoding="utf-8").split("\n")[:-1])}
        rows = [known.get(" ".join(s.split())) for s in sentences]
        missing = [s for s, r in zip(sentences, rows, strict=True) if r is None]
        source = np.load(args.targets, mmap_mode="r")
        targets = np.zeros((len(sentences), source.shape[1]), dtype=np.float32)
        have = [i for i, r in enumerate(rows) if r is not None]
        targets[have] = source[[rows[i] for i in have]]
        if missing:
            targets[[i for i, r in enumerate(rows) if r is None]] = teacher_embeddings(missing)
        target_source = f"{args.targets} ({len(have)} sentences; {len(missing)} by the library)"
    else:
        targets = teacher_embeddings(sentences)
        target_source = "paranmt_hf.training.teacher_embeddings (bfloat16, cached)"
    timings["teacher_s"] = time.perf_counter() - started

    evaluation = eval_sentences(data)
    trigram = ParaNMTEncoder.from_pretrained(args.trigram)
    tri_eval = dict(zip(evaluation, trigram.encode(evaluation), strict=True))
    tri_anchors = trigram.encode(anchors[:BALANCE_SENTENCES])
    distilled = build_teacher_encoder("subword", anchors[:1], cache_dir=cache_dir() / "distilled")

    tables = {"model2vec distillation (the table before learning)": distilled}
    started = time.perf_counter()
    tables["+ least-squares map to the teacher's sentence embeddings"] = fit_table(distilled, sentences, targets,
                                                                                   epochs=0, show_progress=False)
    timings["least_squares_s"] = time.perf_counter() - started
    started = time.perf_counter()
    tables[f"+ cosine regression, {args.epochs:g} epochs, all {len(sentences):,} sentences"] = fit_table(
        distilled, sentences, targets, epochs=args.epochs, learning_rate=args.lr, show_progress=False)
    timings["regression_s"] = time.perf_counter() - started
    for size in args.samples:
        keep = unique_sentences(sentences, size)
        index = {s: i for i, s in enumerate(sentences)}
        tables[f"+ cosine regression, {args.epochs:g} epochs, a sample of {size:,} sentences"] = fit_table(
            distilled, keep, targets[[index[s] for s in keep]], epochs=args.epochs, learning_rate=args.lr,
            show_progress=False)

    rows: list[dict[str, Any]] = [{"model": "TRIGRAM (best-trigram) alone", **scores(tri_eval, data)}]
    for name, table in tables.items():
        table_eval = table.encode(evaluation)
        rows.append({"model": f"table alone: {name}", **scores(dict(zip(evaluation, table_eval, strict=True)),
                                                                   data)})
        table_anchors = table.encode(anchors[:BALANCE_SENTENCES])
        sweep = []
        for weight in WEIGHTS:
            vectors = combined(np.stack([tri_eval[s] for s in evaluation]), table_eval, tri_anchors, table_anchors,
                               weight)
            sweep.append({"teacher_weight": weight, **scores(dict(zip(evaluation, vectors, strict=True)), data)})
        chosen = max(sweep, key=lambda r: r["dev"])
        rows.append({"model": f"TRIGRAM + {name.removeprefix('+ ')}", **chosen, "sweep": sweep})
        print(json.dumps(rows[-2]), json.dumps({k: v for k, v in rows[-1].items() if k != "sweep"}), flush=True)

    report = {"provenance": record, "trigram": args.trigram, "sentences": len(sentences), "epochs": args.epochs,
              "learning_rate": args.lr, "targets": target_source, "timings": {k: round(v, 1) for k, v in
                                                                              timings.items()}, "rows": rows}
    atomic_write_json(HERE / "ablation.json", report, indent=1)
    atomic_write_text(HERE / "ablation.md", markdown(report))
    plot(report, HERE / "ablation.png")
    print(markdown(report))


def markdown(report: dict[str, Any]) -> str:
    from paranmt_hf.utils.provenance import describe

    lines = [describe(report["provenance"]), "",
             f"{report['sentences']:,} unique English training sentences; teacher embeddings: {report['targets']}; "
             f"timings (s): {report['timings']}.", "",
             "| model | teacher_weight (dev-chosen) | dev STS17 | dev STS-B | **dev** | STS12–16 | STS-B test |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in report["rows"]:
        weight = f"{r['teacher_weight']:g}" if "teacher_weight" in r else "–"
        lines.append(f"| {r['model']} | {weight} | {r['dev_sts17']:.2f} | {r['dev_stsb']:.2f} | **{r['dev']:.2f}** | "
                     f"{r['sts12_16']:.2f} | {r['stsb_test']:.2f} |")
    lines += ["", "Weight sweeps (dev / STS12–16 / STS-B test):", ""]
    for r in report["rows"]:
        if "sweep" in r:
            cells = ", ".join(f"{s['teacher_weight']:g}: {s['dev']:.2f} / {s['sts12_16']:.2f} / {s['stsb_test']:.2f}"
                              for s in r["sweep"])
            lines.append(f"- {r['model']}: {cells}")
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.2))
    y = np.arange(len(rows))
    ax.barh(y - 0.2, [r["sts12_16"] for r in rows], 0.4, label="STS12–16 (test)")
    ax.barh(y + 0.2, [r["dev"] for r in rows], 0.4, label="dev (chooses)")
    ax.axvline(75.5, color="red", ls="--", lw=0.8, label="target 75.5")
    ax.set_yticks(y, [r["model"][:70] for r in rows], fontsize=7)
    ax.set_xlim(60, 88)
    ax.invert_yaxis()
    ax.legend(fontsize=7)
    ax.set_title("Flagship ablation (Pearson x 100)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()

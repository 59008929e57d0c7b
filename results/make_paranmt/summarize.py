"""Counts of the make-your-own-ParaNMT run (results/make_paranmt/README.md): sentences back-translated, candidates,
how many pairs pass each test of the PRAS filter, the columns' distributions, and the time of each step.

Reads the run's folder (``run.sh``'s WORK) and writes ``pipeline.json``, ``pipeline.png`` (the 1-best pairs'
paraphrase score, mean length and trigram overlap, with the filter's bounds) and, when the generator is trained,
``generator.png`` (its held-out evaluation beside the copy baseline).

    python results/make_paranmt/summarize.py runs/make_paranmt [--log runs/make_paranmt/logs/run.log]
        [--chunks mining=DIR --chunks heldout=DIR]

``--log``: logs of ``run.sh`` (the corpus commands' summary lines are kept: lines, seconds, counts);
``--chunks``: back-translation work folders' ``chunks`` (kept with ``--keep-work``, or of an interrupted run): the
per-chunk counts the output does not hold (candidates stopped by --max-new-tokens, truncated sources) and the
translation rate from the chunks' times.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
COLUMNS = ("paraphrase_score", "translation_cost", "translation_length", "mean_length", "unigram_overlap",
           "bigram_overlap", "trigram_overlap", "bleu", "lm_perplexity", "reference_probability")


def read_tsv(path: Path) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a TSV with a header line."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return rows[0], [r for r in rows[1:] if r]


def line_count(path: Path) -> int:
    """Lines of a text file."""
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def backtranslation_counts(path: Path) -> dict[str, Any]:
    """Sentences, candidates, empty candidates and distinct candidates per sentence of a backtranslate output."""
    header, rows = read_tsv(path)
    source = header.index("source")
    groups: dict[tuple[str, str], set[str]] = {}
    empty = 0
    copies = 0
    for row in rows:
        groups.setdefault((row[0], row[source]), set()).add(row[1])
        empty += not row[1].strip()
        copies += row[1].strip() == row[0].strip()
    distinct = np.array([len(v) for v in groups.values()])
    return {"sentences": len(groups), "candidates": len(rows), "empty_candidates": empty,
            "candidates_equal_to_reference": copies, "distinct_candidates_per_sentence": float(distinct.mean())}


def chunk_counts(folder: Path) -> dict[str, Any]:
    """Summed per-chunk counts, and the translation rate between the first and the last chunk's file times."""
    files = sorted(folder.glob("*.json"))
    total: dict[str, int] = {}
    times = []
    for path in files:
        record = json.loads(path.read_text(encoding="utf-8"))
        for key, value in record["counts"].items():
            total[key] = total.get(key, 0) + value
        times.append((path.stat().st_mtime, record["counts"]["sentences"]))
    times.sort()
    out: dict[str, Any] = {"chunks": len(files), **total}
    if len(times) > 1:
        seconds = times[-1][0] - times[0][0]
        sentences = sum(n for _, n in times[1:])
        out["rate"] = {"sentences_per_second": sentences / seconds, "seconds": seconds, "sentences": sentences,
                       "measured": "between the file times of the first and the last chunk"}
    return out


def filter_counts(header: list[str], rows: list[list[str]]) -> dict[str, Any]:
    """PRAS filter (package default) on rows with annotated columns: first failed test, and each test alone."""
    from paranmt_hf.corpus.selection.filters import PRASFilter, ThresholdFilter

    text_a = [r[0] for r in rows]
    text_b = [r[1] for r in rows]
    columns = {name: [float(r[i]) for r in rows] for i, name in enumerate(header) if name in COLUMNS}
    pras = PRASFilter()
    selection = pras.select(text_a, text_b, columns=columns)
    alone = {}
    for name, bound in pras.threshold_filter().bounds.items():
        alone[name] = {"bounds": list(bound), "pass": int(ThresholdFilter({name: bound}).select(
            text_a, text_b, columns={name: columns[name]} if name in columns else None).keep.sum())}
    passing_references = len({a for a, keep in zip(text_a, selection.keep, strict=True) if keep})
    return {"pairs": len(rows), "first_failed_test": selection.counts(), "each_test_alone": alone,
            "references_with_a_passing_pair": passing_references,
            "filter": {k: getattr(pras, k) for k in ("sim_low", "sim_high", "max_overlap", "min_mean_tokens",
                                                     "max_mean_tokens", "require_english")}}


def distributions(header: list[str], rows: list[list[str]]) -> dict[str, dict[str, float]]:
    """Mean and quantiles of each annotated column."""
    out = {}
    for i, name in enumerate(header):
        if name not in COLUMNS:
            continue
        values = np.array([float(r[i]) for r in rows])
        q = np.quantile(values, [0.1, 0.25, 0.5, 0.75, 0.9])
        out[name] = {"mean": float(values.mean()), "p10": float(q[0]), "p25": float(q[1]), "median": float(q[2]),
                     "p75": float(q[3]), "p90": float(q[4])}
    return out


SUMMARY = re.compile(r"^read [\d,]+ lines in .*$")
OUTPUTS = ("data/splits.json", "mt-model/generator_summary.json", "bt-mining.tsv", "bt-heldout.tsv",
           "scorer/training_summary.json", "lm/paranmt_lm.json", "classifier/classifier.json", "annotated.tsv",
           "one-best.tsv", "filtered.tsv", "generator/generator_summary.json", "generator/evaluation.json")


def output_times(work: Path) -> dict[str, str]:
    """When each step's output was written (UTC): the steps' wall times are the gaps of a run that did them in turn."""
    times = {}
    for name in OUTPUTS:
        path = work / name
        if path.exists():
            times[name] = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
    return times


def summary_lines(logs: list[Path]) -> list[str]:
    """The corpus commands' summary lines (lines read, time, counts) in run.sh logs."""
    out = []
    for log in logs:
        text = log.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")
        out += [line for line in text.splitlines() if SUMMARY.match(line)]
    return out


def plot(header: list[str], rows: list[list[str]], pras: dict[str, Any], path: Path) -> None:
    """Histograms of the 1-best pairs' columns that the PRAS filter tests, with its bounds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tests = [("paraphrase_score", "paraphrase score (scorer cosine)", (pras["sim_low"], pras["sim_high"])),
             ("mean_length", "mean length (tokens)", (pras["min_mean_tokens"], pras["max_mean_tokens"])),
             ("trigram_overlap", "trigram overlap", (None, pras["max_overlap"]))]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for ax, (name, title, (low, high)) in zip(axes, tests, strict=True):
        values = np.array([float(r[header.index(name)]) for r in rows])
        ax.hist(values, bins=40, color="#9ecae1")
        for bound in (low, high):
            if bound is not None and values.min() <= bound <= values.max():
                ax.axvline(bound, color="k", linestyle="--", linewidth=1)
        ax.set_title(title)
        ax.set_ylabel("1-best pairs")
    fig.suptitle(f"{len(rows):,} 1-best back-translations; dashed: the PRAS filter's bounds")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_generator(evaluation: dict[str, Any], path: Path) -> None:
    """The generator beside the copy baseline: meaning kept (cosines) and diversity (overlap with the input)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [("cosine_input_output", "cosine(input, output)"), ("cosine_output_reference", "cosine(output, ref.)"),
               ("sentence_bleu_vs_input", "sentence BLEU vs input"), ("trigram_overlap_vs_input",
                                                                     "trigram overlap vs input"),
               ("copy_rate", "outputs = input")]
    fig, ax = plt.subplots(figsize=(9, 3.4))
    x = np.arange(len(metrics))
    for offset, (system, color) in zip((-0.2, 0.2), (("generator", "#3182bd"), ("copy", "#bdbdbd")), strict=True):
        ax.bar(x + offset, [evaluation[system][k] for k, _ in metrics], width=0.4, color=color, label=system)
    ax.set_xticks(x, [label for _, label in metrics], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.legend()
    ax.set_title(f"paraphrase generator on {evaluation['inputs']} held-out pairs (beam "
                 f"{evaluation['decoding']['num_beams']})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("work", type=Path, help="run.sh's work folder")
    parser.add_argument("--log", type=Path, action="append", default=[], help="log(s) of run.sh")
    parser.add_argument("--chunks", action="append", default=[], metavar="POOL=DIR",
                        help="a back-translation work folder's chunks (per pool)")
    parser.add_argument("--output", type=Path, default=HERE / "pipeline.json")
    args = parser.parse_args(argv)
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance

    w = args.work
    splits = json.loads((w / "data" / "splits.json").read_text(encoding="utf-8"))
    pools = {}
    for pool in ("mining", "heldout"):
        inputs = sorted((w / "data").glob(f"bt-{pool}.first*.tsv")) or [w / "data" / f"bt-{pool}.tsv"]
        pools[pool] = {"pool_sentences": line_count(w / "data" / f"bt-{pool}.tsv"), "input": inputs[-1].name,
                       "back_translated_input_sentences": line_count(inputs[-1]),
                       **backtranslation_counts(w / f"bt-{pool}.tsv")}
    for item in args.chunks:
        pool, folder = item.split("=", 1)
        pools[pool]["chunks"] = chunk_counts(Path(folder))
    header, annotated = read_tsv(w / "annotated.tsv")
    one_header, one_best = read_tsv(w / "one-best.tsv")
    filtered = line_count(w / "filtered.tsv") - 1
    one = filter_counts(one_header, one_best)
    if one["first_failed_test"].get("kept") != filtered:
        raise SystemExit(f"the PRAS filter keeps {one['first_failed_test'].get('kept')} 1-best pairs here but "
                         f"filtered.tsv has {filtered}: not the same filter or data")
    lm = json.loads((w / "lm" / "paranmt_lm.json").read_text(encoding="utf-8"))
    result: dict[str, Any] = {
        "splits": splits, "backtranslation": pools,
        "scorer": {k: v for k, v in json.loads((w / "scorer" / "training_summary.json").read_text(
            encoding="utf-8")).items() if k in ("steps", "seconds", "train_pairs", "dev_scores")},
        "language_model": lm,
        "classifier": json.loads((w / "classifier-report.json").read_text(encoding="utf-8")),
        "one_best": {"sentences": len(one_best), "pras": one, "filtered_pairs": filtered},
        "n_best": {"candidates": len(annotated), "pras": filter_counts(header, annotated)},
        "columns_one_best": distributions(one_header, one_best),
        "columns_n_best": distributions(header, annotated),
        "generator": ({"summary": json.loads((w / "generator" / "generator_summary.json").read_text(encoding="utf-8")),
                       "evaluation": json.loads((w / "generator" / "evaluation.json").read_text(encoding="utf-8"))}
                      if (w / "generator" / "evaluation.json").is_file() else None),
        "output_times": output_times(w), "summary_lines": summary_lines(args.log),
        "command": " ".join(sys.argv), "provenance": provenance()}
    atomic_write_json(args.output, result, overwrite=True)
    plot(one_header, one_best, one["filter"], args.output.with_suffix(".png"))
    if result["generator"] is not None:
        plot_generator(result["generator"]["evaluation"], args.output.with_name("generator.png"))
    print(json.dumps({k: result[k] for k in ("backtranslation", "one_best")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

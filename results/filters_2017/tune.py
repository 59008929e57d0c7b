"""EMNLP 2017's "tune the filter's thresholds on dev" loop (§5.5-5.7, Tables 6, 7, 12) on our back-translations.

For each filter (length, translation cost, language-model perplexity, reference classifier, unigram / bigram /
trigram overlap, BLEU) and each setting of its grid, as E17 §2.2 does:

1. keep the (reference, back-translation) candidates whose column lies within the bounds (``ThresholdFilter``);
2. take one passing candidate per reference, at random (the authors' ``get_data``), and sample ``--pairs`` of them
   (E17: 24,000 of 100,000 references; here ``--pairs`` of the mining pool; a setting with fewer passing references
   is recorded as infeasible, as E17 leaves it unsaid);
3. train a TRIGRAM model on them (``best-trigram``: character-trigram averaging, the recipe of our small-data runs)
   and score it on dev: the mean Pearson of STS17 en-en and STS-B validation (never a test set);
4. per filter, keep the setting with the best dev score and report its test scores (STS12-16, papers' protocol;
   STS-B test), which play no part in the choice.

"None (random)" samples without a filter (three seeds or more, to show the run-to-run spread); ``--seeds`` runs
every setting with several seeds (sample and training), and make_table.py chooses by the mean dev score over them.
The columns are those of :data:`paranmt_hf.corpus.measures.registry.MEASURES`, read from the annotated file (``corpus
annotate``); the language model (KenLM 3-gram, E17) and the reference classifier behind two of them are trained on
the held-out pool (its references; references vs back-translations), never on the mining pool. Resumable: settings
already in ``runs.jsonl`` are skipped.

    python results/filters_2017/tune.py --mining runs/make_paranmt/annotated.tsv --work runs/filters_2017 \\
        [--pairs 4000] [--full-grid] [--quantile-grids] [--seeds 0 1 2] [--only length BLEU]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from paranmt_hf.utils.provenance import provenance

HERE = Path(__file__).resolve().parent
DEV = ["STS17:en-en", "STSBenchmark:validation"]
TEST_YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]

LENGTH_RANGES = [(0, 10), (0, 15), (0, 20), (0, 30), (0, 100), (10, 20), (10, 30), (10, 100), (15, 25), (15, 30),
                 (15, 100), (20, 30), (20, 100), (30, 100)]  # E17 §5.5
COST_UPPER = [round(0.2 + 0.1 * i, 1) for i in range(9)]  # E17 §5.6: [0.2, 1] by 0.1
PERPLEXITY_UPPER = [25, 50, 75, 100, 150, 200, None]  # E17 §5.6 (None = infinity)
CLASSIFIER_LOWER = [round(0.1 * i, 1) for i in range(10)]  # E17 §5.6: [0, 0.9] by 0.1
DIVERSITY_LOWER, DIVERSITY_UPPER = [0.0, 0.1, 0.2, 0.3], [0.6, 0.7, 0.8, 0.9, 1.0]  # E17 §5.7


def grids(full: bool, columns: dict[str, Any] | None = None) -> dict[str, list[dict[str, tuple[float | None,
                                                                                               float | None]]]]:
    """Filter name -> its settings (column bounds). Without ``full`` the diversity grids use lower bounds {0, 0.1}
    only (E17: "the best lower bounds are often 0 or 0.1"). With ``columns``, the two columns whose scale depends on
    the models (translation cost, perplexity) also get upper bounds at their 20th-80th percentiles."""
    lower = DIVERSITY_LOWER if full else DIVERSITY_LOWER[:2]
    diversity = lambda column: [{column: (lo, hi)} for lo in lower for hi in DIVERSITY_UPPER]  # noqa: E731
    cost, perplexity = list(COST_UPPER), list(PERPLEXITY_UPPER)
    if columns is not None:
        quantiles = (0.2, 0.4, 0.6, 0.8)
        cost += [round(float(np.quantile(columns["translation_cost"], q)), 3) for q in quantiles]
        perplexity = [*perplexity[:-1], *(round(float(np.quantile(columns["lm_perplexity"], q)), 1)
                                          for q in quantiles), None]
    return {
        "length": [{"translation_length": (float(lo), float(hi))} for lo, hi in LENGTH_RANGES],
        "translation cost": [{"translation_cost": (None, hi)} for hi in sorted(set(cost))],
        "language model": [{"lm_perplexity": (None, hi)} for hi in sorted(set(perplexity) - {None}) + [None]],
        "reference classification": [{"reference_probability": (lo, None)} for lo in CLASSIFIER_LOWER],
        "unigram overlap": diversity("unigram_overlap"),
        "bigram overlap": diversity("bigram_overlap"),
        "trigram overlap": diversity("trigram_overlap"),
        "BLEU": diversity("bleu"),
    }


NEEDED = ("translation_length", "translation_cost", "lm_perplexity", "reference_probability", "unigram_overlap",
          "bigram_overlap", "trigram_overlap", "bleu")


def read_backtranslations(path: Path) -> dict[str, Any]:
    """Rows of a back-translation file (``corpus backtranslate``, possibly ``corpus annotate``d): the texts, every
    numeric column the header names, and a group per source sentence (its n-best list)."""
    from paranmt_hf.corpus.measures.registry import MEASURES

    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    if header[:2] not in (["reference", "paraphrase"], ["text_a", "text_b"]):
        raise SystemExit(f"{path}: expected a header line naming reference, paraphrase, translation_cost, ...")
    index = {name: i for i, name in enumerate(header)}
    rows = [line.split("\t") for line in lines[1:] if line]
    groups: dict[tuple[str, str], int] = {}
    group = []
    for row in rows:
        key = (row[0], row[index["source"]] if "source" in index else "")
        group.append(groups.setdefault(key, len(groups)))
    columns = {name: np.asarray([float(r[i]) for r in rows]) for name, i in index.items() if name in MEASURES}
    return {"reference": [r[0] for r in rows], "translation": [r[1] for r in rows], "columns": columns,
            "group": np.asarray(group)}


def columns_for(mining: dict[str, Any], work: Path, language_model: str | None,
                classifier: str | None) -> dict[str, Any]:
    """Every filter column of the mining rows: the file's own, the others computed (cached in ``work``)."""
    cache = work / "columns.npz"
    if cache.is_file():
        with np.load(cache, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    from paranmt_hf.corpus.measures.registry import MeasureContext, compute_measures

    values = {k: v for k, v in mining["columns"].items() if k in NEEDED}
    missing = [name for name in NEEDED if name not in values]
    if missing:
        start = time.process_time()
        context = MeasureContext(language_model=language_model, classifier=classifier)
        values.update(compute_measures(missing, mining["reference"], mining["translation"], context))
        print(f"computed {', '.join(missing)} for {len(mining['reference']):,} rows in "
              f"{time.process_time() - start:.0f} CPU s", flush=True)
    np.savez(cache, **values)
    return values


def select(mining: dict[str, Any], columns: dict[str, Any], bounds: dict[str, Any], pairs: int,
           seed: int) -> tuple[list[tuple[str, str]], int]:
    """One passing candidate per reference (random), ``pairs`` references sampled; and how many references pass."""
    from paranmt_hf.corpus.selection.filters import ThresholdFilter

    n = len(mining["reference"])
    if bounds:
        given = {name: columns[name].tolist() for name in bounds}
        keep = ThresholdFilter(dict(bounds)).select(mining["reference"], mining["translation"], columns=given).keep
    else:
        keep = np.ones(n, dtype=bool)
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    chosen: dict[int, int] = {}
    for i in order:  # the authors' get_data: shuffle, then the first passing candidate of each reference
        if keep[i]:
            chosen.setdefault(int(mining["group"][i]), i)
    passing = len(chosen)
    if passing < pairs:
        return [], passing
    picked = rng.sample(sorted(chosen.values()), pairs)
    return [(mining["reference"][i], mining["translation"][i]) for i in picked], passing


def train_and_score(rows: list[tuple[str, str]], out: Path, seed: int) -> dict[str, Any]:
    """Train best-trigram on the pairs; dev and test scores."""
    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.evaluation.runner import evaluate, paper_average
    from paranmt_hf.training.recipes import get_recipe
    from paranmt_hf.training.trainer import train

    out.mkdir(parents=True, exist_ok=True)
    data = out / "pairs.tsv"
    data.write_text("".join(f"{a}\t{b}\n" for a, b in rows), encoding="utf-8")
    start = time.process_time()
    train(get_recipe("best-trigram"), [f"pairs:{data}"], out / "model", seed=seed, show_progress=False,
          overwrite=True, save_steps=10**9)
    encoder = ParaNMTEncoder.from_pretrained(out / "model")
    dev = evaluate(encoder, DEV)
    pearson = [100 * e["paper_pearson"] for r in dev.values() for split in r.scores.values() for e in split
               if e["hf_subset"] in ("en-en", "default")]
    test = evaluate(encoder, [*TEST_YEARS, "STSBenchmark:test"])
    stsb = [100 * e["paper_pearson"] for e in test["STSBenchmark"].scores["test"]]
    shutil.rmtree(out)
    return {"dev": float(np.mean(pearson)), "dev_parts": pearson, "sts12_16": paper_average(test),
            "stsb_test": stsb[0], "cpu_seconds": time.process_time() - start}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mining", type=Path, required=True,
                        help="back-translations of the mining pool (corpus backtranslate [+ corpus annotate])")
    parser.add_argument("--language-model", default=None, help="KenLM model (measures train-lm on the held-out "
                        "pool), when the file has no lm_perplexity column")
    parser.add_argument("--classifier", default=None, help="reference classifier (measures train-classifier on the "
                        "held-out pool), when the file has no reference_probability column")
    parser.add_argument("--work", type=Path, required=True, help="folder for the columns and the models")
    parser.add_argument("--pairs", type=int, default=4000, help="training pairs per setting (E17: 24,000)")
    parser.add_argument("--full-grid", action="store_true", help="E17's full diversity grids (lower bounds 0-0.3)")
    parser.add_argument("--quantile-grids", action="store_true",
                        help="add the 20th-80th percentiles of translation cost and perplexity to E17's bounds "
                             "(their scale depends on the MT model and the LM)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="seeds of every setting (sample and training; make_table.py averages them); the "
                             "random baseline runs seeds 0-2 and these")
    parser.add_argument("--only", nargs="*", default=None, help="run only these filters")
    parser.add_argument("--runs", type=Path, default=HERE / "runs.jsonl")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    args.work.mkdir(parents=True, exist_ok=True)
    mining = read_backtranslations(args.mining)
    columns = columns_for(mining, args.work, args.language_model, args.classifier)
    done = set()
    if args.runs.is_file():
        previous = [json.loads(line) for line in args.runs.read_text(encoding="utf-8").splitlines() if line]
        references = len(set(mining["group"].tolist()))
        if any(r["pairs"] != args.pairs or (not r["bounds"] and r["passing_references"] != references)
               for r in previous):
            raise SystemExit(f"{args.runs} holds runs of another mining file or --pairs (this one: {references:,} "
                             f"references, --pairs {args.pairs}): give --runs a new file, or move it away")
        done = {(r["filter"], json.dumps(r["bounds"]), r["seed"]) for r in previous}
    settings = [("None (random)", {}, seed) for seed in sorted({0, 1, 2, *args.seeds})]
    settings += [(name, bounds, seed) for name, grid in grids(args.full_grid, columns if args.quantile_grids else None)
                 .items() for bounds in grid for seed in args.seeds]
    for name, bounds, seed in settings:
        if args.only is not None and name not in args.only:
            continue
        key = (name, json.dumps({k: list(v) for k, v in bounds.items()}), seed)
        if key in done:
            continue
        rows, passing = select(mining, columns, bounds, args.pairs, seed)
        record: dict[str, Any] = {"filter": name, "bounds": {k: list(v) for k, v in bounds.items()}, "seed": seed,
                                  "passing_references": passing, "pairs": args.pairs}
        if rows:
            record.update(train_and_score(rows, args.work / "model-run", seed))
        record["provenance"] = provenance()
        with open(args.runs, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        print(name, record["bounds"], passing, record.get("dev"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The scorer of EMNLP 2017's threshold tuning: train a recipe on the pairs a filter setting keeps, score it on dev.

:func:`paranmt_hf.corpus.selection.tuning.tune` runs the loop; this module gives it the model it trains and the
numbers it compares (it sits above training and evaluation, which the corpus tools cannot import).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus.selection.tuning import Scorer

DEV = ("STS17:en-en", "STSBenchmark:validation")
TEST = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark:test")


def trainer_scorer(work: str | os.PathLike[str], recipe: str = "best-trigram",
                   data_dir: str | os.PathLike[str] | None = None) -> Scorer:
    """The scorer of E17's loop: train ``recipe`` on the pairs, then score dev and test.

    The model is trained in ``work`` and removed after. Dev: the mean Pearson x 100 of STS17 en-en and STS-B
    validation; test: STS12-16 (papers' protocol) and STS-B test.
    """

    def score(rows: list[tuple[str, str]], seed: int) -> dict[str, Any]:
        from ..model.encoder import ParaNMTEncoder
        from ..training.recipes import get_recipe
        from ..training.trainer import train
        from .runner import evaluate, paper_average

        out = Path(work) / "model-run"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        data = out / "pairs.tsv"
        data.write_text("".join(f"{a}\t{b}\n" for a, b in rows), encoding="utf-8")
        start = time.process_time()
        train(get_recipe(recipe), [f"pairs:{data}"], out / "model", seed=seed, show_progress=False,
              overwrite=True, save_steps=10**9)
        encoder = ParaNMTEncoder.from_pretrained(out / "model")
        dev = evaluate(encoder, list(DEV), data_dir=data_dir)
        pearson = [100 * e["paper_pearson"] for r in dev.values() for split in r.scores.values() for e in split
                   if e["hf_subset"] in ("en-en", "default")]
        test = evaluate(encoder, list(TEST), data_dir=data_dir)
        stsb = [100 * e["paper_pearson"] for e in test["STSBenchmark"].scores["test"]]
        shutil.rmtree(out)
        return {"dev": float(np.mean(pearson)), "dev_parts": pearson, "sts12_16": paper_average(test),
                "stsb_test": stsb[0], "cpu_seconds": time.process_time() - start}

    return score

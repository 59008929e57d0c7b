"""Training step time of a WORD+TRIGRAM combination (concat, GloVe-50d words, 300-d trigrams): the flat
EmbeddingBag layout (one bag per component) against the padded layout, same model, loss (M=1) and data.

    python results/training_speed/combo_flat_vs_padded.py   # writes combo_flat_vs_padded.json next to it

The JSON records the provenance (command, git commit, environment, load average before and after).

One torch thread, 100 steps of 100 Flickr30k caption pairs per measurement (the first 10,000 pairs of the file
shuffled with seed 0 by ``paranmt_hf.training.data.load_pairs``, as ``paranmt-hf train`` reads them; the JSON
recorded at 4b3a010 took the file's first 10,000 lines), two rounds alternating the layouts;
the faster round of each is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformer

from paranmt_hf import ParaNMTInputModule
from paranmt_hf.training.data import load_pairs
from paranmt_hf.training.initial_model import build_initial_encoder
from paranmt_hf.training.loss import make_loss
from paranmt_hf.training.optim import LazyAdam, set_sparse_embeddings
from paranmt_hf.training.plan import plan_training
from paranmt_hf.training.recipes import Recipe
from paranmt_hf.utils.atomic import atomic_write_json
from paranmt_hf.utils.paths import data_dir
from paranmt_hf.utils.provenance import provenance

HERE = Path(__file__).resolve().parent
STEPS, BATCH = 100, 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=None, help="the data folder (default: $PARANMT_HF_DATA, ../shared/data)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    record = provenance()  # at the start: the load average the run began under
    flickr = data_dir(args.data_dir) / "train" / "flickr30k-caption-pairs.tsv.gz"
    rows = load_pairs([f"pairs:{flickr}"], max_pairs=STEPS * BATCH, seed=0)
    pairs = list(zip(rows["anchor"], rows["positive"], strict=True))
    recipe = Recipe().replace(kind="trigram+word", combination="concat", word_vectors="glove-6b-50d",
                              megabatch_size=1, learning_rate=0.01)
    plan = plan_training(recipe)
    encoder = build_initial_encoder(plan.model, [s for p in pairs for s in p], 0)
    set_sparse_embeddings(encoder.model, True)
    best: dict[str, float] = {}
    for _ in range(2):
        for layout in ("flat", "padded"):
            module = ParaNMTInputModule.from_encoder(encoder)
            module.featurizer.flat = layout == "flat"  # same model read through padded features
            model = SentenceTransformer(modules=[module], device="cpu")
            model.train()
            loss = make_loss(plan.loss, model, False)
            optimizer = LazyAdam(model.parameters(), lr=recipe.learning_rate)
            start = time.perf_counter()
            for step in range(STEPS):
                batch = pairs[step * BATCH : (step + 1) * BATCH]
                value = loss([model.preprocess([a for a, _ in batch]), model.preprocess([b for _, b in batch])])
                optimizer.zero_grad()
                value.backward()
                optimizer.step()
            ms = (time.perf_counter() - start) / STEPS * 1000
            best[layout] = min(best.get(layout, float("inf")), ms)
    out = {"provenance": record, "load_average_after": [round(x, 2) for x in os.getloadavg()],
           "model": "trigram+word (concat), GloVe-50d words, 300-d trigrams", "threads": 1, "batch_size": BATCH,
           "steps": STEPS, "ms_per_step": {k: round(v, 1) for k, v in best.items()},
           "speedup": round(best["padded"] / best["flat"], 2)}
    atomic_write_json(HERE / "combo_flat_vs_padded.json", out, indent=2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

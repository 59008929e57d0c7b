"""How often ``candidates="other_side"`` breaks PRAS's bitext rule in a mixed mega-batch, and the pair kinds don't.

Loads a trained model, fills mega-batches of M mini-batches (128 pairs) from the main job's mixed training data (the
dev split's copies), and mines the negatives of each mega-batch's last mini-batch twice: without labels
(``other_side`` for every pair: what a mixed run did before pair kinds) and with the ``label`` column. Counts the
bitext pairs whose English side took an English sentence (an English paraphrase) as its negative, which the
paper's rule ("from the opposing language") forbids.

    python results/bitext/negatives_check.py MODEL_DIR [--megabatch 27] [--megabatches 20]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
BATCH = 128


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a trained model directory")
    parser.add_argument("--megabatch", type=int, default=27, help="mini-batches per mega-batch (M)")
    parser.add_argument("--megabatches", type=int, default=20, help="mega-batches to mine")
    parser.add_argument("--split", default=str(ROOT / "runs/data/split"), help="the dev split (dev_split.py)")
    args = parser.parse_args()
    from paranmt_hf.utils.provenance import provenance

    record = provenance()  # at the start: the load average the run began under
    import datasets

    datasets.disable_progress_bars()
    from sentence_transformers import SentenceTransformer

    from paranmt_hf import ParaNMTEncoder, ParaNMTInputModule
    from paranmt_hf.losses import MegaBatchMarginLoss
    from paranmt_hf.losses.pool import make_entry
    from paranmt_hf.training.data import load_pairs

    data = os.path.join(os.environ.get("PARANMT_HF_DATA", str(ROOT.parent / "shared/data")), "train")
    names = ("tatoeba-en-es", "tatoeba-en-fr", "tatoeba-en-de", "multi30k-en-de", "multi30k-en-fr", "multi30k-en-cs")
    sources = [f"{args.split}/train/{n}.tsv.gz" for n in names] + [
        f"{data}/flickr30k-caption-pairs.tsv.gz", f"processed-5m:{data}/paranmt5m-sample-10k.tsv.gz@10",
        f"pairs:{args.split}/tatoeba-pivots.tsv.gz@3"]
    pairs = load_pairs(sources, seed=0)
    encoder = ParaNMTInputModule.from_encoder(ParaNMTEncoder.from_pretrained(args.model))
    model = SentenceTransformer(modules=[encoder], device="cpu").eval()
    loss = MegaBatchMarginLoss(model, megabatch_size=args.megabatch, candidates="other_side")
    english_sides = {"other_side": 0, "labels": 0}
    bitext_pairs = 0
    with torch.no_grad():
        for mega in range(args.megabatches):
            entries = {"other_side": [], "labels": []}
            kinds = []
            for b in range(args.megabatch):
                start = (mega * args.megabatch + b) * BATCH
                rows = pairs[start: start + BATCH]
                features = [model.preprocess(rows["anchor"]), model.preprocess(rows["positive"])]
                embeddings = [model(f)["sentence_embedding"] for f in features]
                kind = torch.tensor(rows["label"], dtype=torch.bool)
                kinds.append(kind)
                entries["other_side"].append(make_entry(features, *embeddings))
                entries["labels"].append(make_entry(features, *embeddings, kind))
            kinds = torch.cat(kinds)
            total = kinds.shape[0]
            foreign = torch.cat([torch.zeros(total, dtype=torch.bool), kinds])  # candidate rows: anchors, positives
            own = torch.arange(total - BATCH, total)
            bitext_pairs += int(kinds[own].sum())
            for rule, pool in entries.items():
                index, has, _, _ = loss._mine(pool, own)
                picked = index[:BATCH]  # the negatives of the anchors (English sides)
                english_sides[rule] += int((kinds[own] & has[:BATCH] & ~foreign[picked]).sum())
    from paranmt_hf.utils.atomic import atomic_write_json

    result = {
        "provenance": record,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "model": args.model, "megabatch": args.megabatch, "megabatches": args.megabatches,
        "bitext_pairs": bitext_pairs,
        "english_side_took_english": english_sides,
        "percent": {k: round(100 * v / bitext_pairs, 2) for k, v in english_sides.items()},
    }
    atomic_write_json(Path(__file__).with_suffix(".json"), result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

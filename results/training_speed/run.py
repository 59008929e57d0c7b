"""Training speed: one epoch of SP-1024 (unigram vocabulary asked 50K) over the 144K Flickr30k caption pairs, M=40.

    python results/training_speed/run.py [--max-steps N] [--optimizer auto|lazy_adam|adam]

Target (issue "Train inside sentence-transformers"): < 3 min on 2 cores for the epoch (the training loop itself;
building the unigram tokenizer is timed separately). Flickr30k's captions give the unigram trainer fewer than 50K
pieces (20,071 in the recorded run): the label states the vocabulary actually built.
Writes results/training_speed/training_speed.json with its provenance (command, git commit, environment, load
average).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from paranmt_hf import ParaNMTConfig
from paranmt_hf.training.recipes import get_recipe
from paranmt_hf.training.trainer import train
from paranmt_hf.utils.atomic import atomic_write_json
from paranmt_hf.utils.paths import data_dir
from paranmt_hf.utils.provenance import provenance

HERE = Path(__file__).resolve().parent


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--max-steps", type=int, default=-1)
    p.add_argument("--optimizer", default="auto")
    p.add_argument("--output", default="/tmp/paranmt-training-speed")
    args = p.parse_args()
    # annealing off (Recipe.replace sets None): M=40 from the first step
    recipe = get_recipe("pras-sp").replace(megabatch_size=40, anneal=None, epochs=1.0, optimizer=args.optimizer)
    source = str(data_dir() / "train" / "flickr30k-caption-pairs.tsv.gz")
    record_start = provenance()  # at the start: the load average the run began under
    load = os.getloadavg()
    started = time.perf_counter()
    result = train(
        recipe,
        [source],
        args.output,
        max_steps=args.max_steps,
        save_steps=10**9,
        show_progress=False,
        logging_steps=200,
        overwrite=True,  # a scratch folder, rewritten by every measurement
    )
    total = time.perf_counter() - started
    vocab = ParaNMTConfig.from_pretrained(args.output).vocab_size
    record = {
        "provenance": record_start,
        "what": f"one epoch, SP 1024-d, unigram vocab of {vocab:,} pieces (50K asked; the corpus gives no more), "
        "batch 128, M=40 (no annealing), mega-batch margin loss, SentenceTransformerTrainer, Flickr30k caption pairs",
        "recipe": recipe.to_dict(),
        "vocab_size": vocab,
        "embedding_dim": ParaNMTConfig.from_pretrained(args.output).embedding_dim,
        "train_pairs": result.train_pairs,
        "steps": result.steps,
        "train_loop_seconds": round(result.seconds, 1),
        "seconds_per_step": round(result.seconds / result.steps, 4),
        "total_seconds_including_data_and_tokenizer": round(total, 1),
        "target_seconds": 180,
        "meets_target": result.seconds < 180,
        "torch_threads": result.threads,
        "cpus": os.cpu_count(),
        "load_average_before": load,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    atomic_write_json(HERE / "training_speed.json", record, indent=2)
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()

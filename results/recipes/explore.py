"""Recipe exploration on the shared corpora (the numbers in results/recipes/README.md).

A lean loop with the library's pieces and no Trainer around them: the same model (`build_initial_encoder`), the
same loss (`MegaBatchMarginLoss` on a SentenceTransformer wrapping the model), the same optimizer (`LazyAdam`), one
torch thread. Model selection reads dev sets only (STS17 en-en + STS-B validation, Pearson); STS12-16 (papers'
protocol) is computed once, at the end.

    python results/recipes/explore.py '{"kind": "trigram", "learning_rate": 0.01, "megabatch_size": 1,
        "files": ["../shared/data/train/flickr30k-caption-pairs.tsv.gz"], "steps": 3000, "every": 1000}' NAME

Appends one JSON line per run to results/recipes/explore.jsonl, with its provenance (command, git commit,
software, load average) and whether the model started its unknown-token row at zero (``unk_zero``).

The published comparisons (the mega-batch ablation, the margin loss against MNRL, the seeds of the best recipe) are
made by the real pipeline instead (``paranmt-hf train`` + ``paranmt-hf eval``: ablation.sh, loss_vs_mnrl.sh,
seeds.sh); this loop is for quick exploration.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
import time
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformer

from paranmt_hf import ParaNMTInputModule
from paranmt_hf.evaluation.runner import evaluate, paper_average
from paranmt_hf.evaluation.st_evaluator import STSSuiteEvaluator
from paranmt_hf.model.encoder import ParaNMTEncoder
from paranmt_hf.training.initial_model import build_initial_encoder
from paranmt_hf.training.loss import make_loss
from paranmt_hf.training.optim import LazyAdam, set_sparse_embeddings
from paranmt_hf.training.recipes import Recipe
from paranmt_hf.utils.provenance import provenance

HERE = Path(__file__).resolve().parent


def read_pairs(files: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for path in files:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 2 and parts[0].strip() and parts[1].strip():
                    pairs.append((parts[0], parts[1]))
    random.Random(0).shuffle(pairs)
    return pairs


def main() -> None:
    torch.set_num_threads(1)
    record = provenance()  # at the start: the load average the run began under
    cfg, name = json.loads(sys.argv[1]), sys.argv[2]
    files, steps, every = cfg.pop("files"), cfg.pop("steps"), cfg.pop("every", 500)
    pairs = read_pairs(files)
    recipe = Recipe().override(**cfg)
    encoder = build_initial_encoder(recipe, [s for p in pairs for s in p], 0)
    set_sparse_embeddings(encoder.model, True)
    # models built since the unknown-token row starts at zero (earlier runs: a random, never-trained row)
    unk_zero = all(
        bool(component.embedding.weight[component.unk_token_id].eq(0).all()) for component in encoder.model.components
    )
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    bitext = any("bitext" in f for f in files)
    loss = make_loss(recipe, model, bitext)
    optimizer = LazyAdam(model.parameters(), lr=recipe.learning_rate)
    decay = recipe.lr_scheduler == "linear"
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / steps) if decay else 1.0)
    dev = STSSuiteEvaluator(tasks=["STS17:en-en", "STSBenchmark:validation"], name="dev")
    model.train()
    started, start, log = time.time(), 0, []
    for step in range(1, steps + 1):
        batch = pairs[start : start + recipe.batch_size]
        start = start + recipe.batch_size if start + 2 * recipe.batch_size <= len(pairs) else 0
        value = loss([model.preprocess([a for a, _ in batch]), model.preprocess([b for _, b in batch])], None)
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
        scheduler.step()
        if step % every == 0 or step == steps:
            model.eval()
            score = dev(model)["dev_mean_pearson"]
            model.train()
            log.append((step, round(float(value.detach()), 4), round(score, 4), round(time.time() - started)))
            print(name, log[-1], flush=True)
    model.eval()
    trained = ParaNMTEncoder(model[0].model, model[0].tokenizer)
    sts = paper_average(evaluate(trained, ["STS12", "STS13", "STS14", "STS15", "STS16"]))
    print("RESULT", name, json.dumps(cfg), "sts12-16", round(sts, 2), flush=True)
    with open(HERE / "explore.jsonl", "a") as f:
        run = {"name": name, "cfg": cfg, "files": files, "log": log, "sts": sts, "unk_zero": unk_zero,
               "unk_zero_source": "measured by explore.py", "provenance": record}
        f.write(json.dumps(run) + "\n")


if __name__ == "__main__":
    main()

"""Teacher-initialised recipes on the shared corpora (the runs of results/teacher/README.md).

A lean loop with the library's pieces (as results/recipes/explore.py): the model (``build_encoder`` /
``paranmt_hf.model.distill.build_teacher_encoder``), the loss (``MegaBatchMarginLoss`` on a SentenceTransformer), the
optimizer (``LazyAdam``, one parameter group per component so that the distilled table can get its own learning
rate), one torch thread, the main job's data (Flickr30k caption pairs + ParaNMT sample x10 + Tatoeba pivots x3,
shuffled every epoch). Selection reads dev only (STS17 en-en + STS-B validation, Pearson); test numbers (STS12-16,
papers' protocol; STS-B test) are computed once per run at the end and stored, not used to choose.

    python results/teacher/explore.py '{"kind": "trigram+subword", "teacher": true, "subword_lr": 0}' NAME

Options (JSON): kind, teacher (bool: subword table from model2vec's distillation of all-MiniLM-L6-v2), pca_dims,
sif, epochs (3), batch_size (200), lr (1e-2, non-subword components), subword_lr (learning rate of subword rows;
0 = frozen), keep_norms (after each step, rescale updated subword rows to their initial norms), distill (weight of a
distillation term towards the teacher's sentence embeddings), distill_sentences (how many training sentences the
teacher embeds), distill_kind ("relational": match the batch's cosine matrix; "linear": cosine to the teacher
through a learned linear map), distill_batch, seed. Appends one JSON line per run to results/teacher/runs.jsonl.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RUNS = ROOT / "runs"
DATA = Path(os.environ.get("PARANMT_HF_DATA", ROOT.parent / "shared" / "data"))
DEV = ["STS17:en-en", "STSBenchmark:validation"]
TEST = ["STS12", "STS13", "STS14", "STS15", "STS16"]


def read_pairs(path: Path) -> list[tuple[str, str]]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[0].strip() and parts[1].strip():
                out.append((parts[0], parts[1]))
    return out


def sources() -> list[tuple[list[tuple[str, str]], int]]:
    pivots = RUNS / "data" / "tatoeba-pivots.tsv.gz"
    if not pivots.is_file():
        pivots.parent.mkdir(parents=True, exist_ok=True)
        bitext = [str(DATA / "train" / "bitext" / f"tatoeba-en-{x}.tsv.gz") for x in ("es", "fr", "de")]
        subprocess.run(["paranmt-hf", "corpus", "pivot", *bitext, "-o", str(pivots)], check=True)
    return [
        (read_pairs(DATA / "train" / "flickr30k-caption-pairs.tsv.gz"), 1),
        (read_pairs(DATA / "train" / "paranmt5m-sample-10k.tsv.gz"), 10),
        (read_pairs(pivots), 3),
    ]


def teacher_embeddings(sentences: list[str]) -> np.ndarray:
    """all-MiniLM-L6-v2 embeddings of ``sentences`` (cached in runs/)."""
    import hashlib

    key = hashlib.sha256("\n".join(sentences).encode()).hexdigest()[:12]
    path = RUNS / f"teacher-emb-{len(sentences)}-{key}.npy"
    if path.is_file():
        return np.load(path)
    from sentence_transformers import SentenceTransformer

    from paranmt_hf.model.distill import DEFAULT_TEACHER, resolve_teacher

    model = SentenceTransformer(resolve_teacher(DEFAULT_TEACHER), device="cpu")
    started = time.time()
    emb = model.encode(sentences, batch_size=128, show_progress_bar=False, convert_to_numpy=True)
    print("teacher", len(sentences), "sentences", round(time.time() - started, 1), "s", flush=True)
    np.save(path, emb.astype(np.float32))
    return emb


def build(cfg: dict, corpus: list[str]) -> Any:
    from paranmt_hf import build_encoder
    from paranmt_hf.model.distill import build_teacher_encoder

    kind = cfg["kind"]
    if cfg.get("teacher") and "subword" in kind:
        return build_teacher_encoder(
            kind,
            corpus,
            embedding_dim=cfg.get("embedding_dim", 300),
            pca_dims=cfg.get("pca_dims", 256),
            sif_coefficient=cfg.get("sif", 1e-4),
            cache_dir=RUNS / "distilled",
            combination=cfg.get("combination", "concat"),
            seed=cfg.get("seed", 0),
        )
    return build_encoder(kind, corpus, embedding_dim=cfg.get("embedding_dim", 300), seed=cfg.get("seed", 0))


def evaluate(encoder: Any, tasks: list[str]) -> dict:
    from paranmt_hf.evaluation.runner import evaluate as run

    return {name: round(r.paper_score, 2) for name, r in run(encoder, tasks).items()}


def record_run(run: dict[str, Any]) -> None:
    """Print the run and append it to runs.jsonl (explore.py and combine.py)."""
    print("RESULT", json.dumps(run), flush=True)
    with open(HERE / "runs.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(run) + "\n")


def parameter_groups(encoder: Any, lr: float, sub_lr: float) -> tuple[list[dict], list[torch.Tensor]]:
    """One optimizer group per component (subword tables at ``sub_lr``, frozen at 0) and the subword tables."""
    groups, sub_params = [], []
    for component in encoder.model.components:
        if component.kind == "subword":
            sub_params.append(component.embedding.weight)
            if sub_lr == 0:
                component.embedding.weight.requires_grad_(False)
                continue
            groups.append({"params": [component.embedding.weight], "lr": sub_lr})
        else:
            groups.append({"params": list(component.parameters()), "lr": lr})
    return groups, sub_params


def main() -> None:  # noqa: C901
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", help="JSON options (see above)")
    parser.add_argument("name", help="run name (its line in runs.jsonl; the model goes to runs/models/NAME)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg, name = json.loads(args.config), args.name
    from sentence_transformers import SentenceTransformer

    from paranmt_hf import ParaNMTEncoder, ParaNMTInputModule
    from paranmt_hf.evaluation.st_evaluator import STSSuiteEvaluator
    from paranmt_hf.losses import MegaBatchMarginLoss
    from paranmt_hf.training.optim import LazyAdam, set_sparse_embeddings
    from paranmt_hf.utils.provenance import provenance

    record = provenance()  # at the start: the load average the run began under
    seed = cfg.get("seed", 0)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    srcs = sources()
    epoch_pairs = [p for pairs, n in srcs for _ in range(n) for p in pairs]
    corpus = [s for p in epoch_pairs for s in p]
    encoder = build(cfg, corpus)
    set_sparse_embeddings(encoder.model, True)
    # token ids are cached per chunk by the featuriser: epochs 2 and 3 skip tokenisation
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    dev = STSSuiteEvaluator(tasks=DEV, name="dev")
    log = []
    started = time.time()
    dev0 = dev(model)["dev_mean_pearson"]
    log.append((0, None, round(dev0, 4), 0))
    print(name, log[-1], flush=True)

    lr = cfg.get("lr", 1e-2)
    groups, sub_params = parameter_groups(encoder, lr, cfg.get("subword_lr", lr))
    head = None
    distill_w = cfg.get("distill", 0.0)
    if distill_w:
        n = cfg.get("distill_sentences", 20000)
        pool = sorted({s for pairs, _ in srcs for p in pairs for s in p})
        rng_d = random.Random(1)
        distill_sents = rng_d.sample(pool, min(n, len(pool)))
        targets = torch.from_numpy(teacher_embeddings(distill_sents))
        if cfg.get("distill_kind", "relational") == "linear":
            head = torch.nn.Linear(encoder.embedding_dim, targets.shape[1], bias=False)
            groups.append({"params": list(head.parameters()), "lr": 1e-3})
    optimizer = LazyAdam(groups, lr=lr)
    norms = {id(p): p.detach().norm(dim=1, keepdim=True).clone() for p in sub_params}
    loss = MegaBatchMarginLoss(model, margin=cfg.get("margin", 0.4), megabatch_size=1, sampling="MAX")
    batch = cfg.get("batch_size", 200)
    epochs = cfg.get("epochs", 3)
    steps_per_epoch = len(epoch_pairs) // batch
    total = int(steps_per_epoch * epochs)
    every = cfg.get("every", 1500)
    step = 0
    model.train()
    order = list(range(len(epoch_pairs)))
    while step < total:
        rng.shuffle(order)
        for start in range(0, steps_per_epoch * batch, batch):
            if step >= total:
                break
            pb = [epoch_pairs[i] for i in order[start : start + batch]]
            value = loss([model.preprocess([a for a, _ in pb]), model.preprocess([b for _, b in pb])], None)
            if distill_w:
                idx = torch.randint(len(distill_sents), (cfg.get("distill_batch", 200),))
                emb = model(model.preprocess([distill_sents[i] for i in idx.tolist()]))["sentence_embedding"]
                tgt = targets[idx]
                if head is None:
                    s = F.normalize(emb, dim=-1)
                    t = F.normalize(tgt, dim=-1)
                    d = F.mse_loss(s @ s.T, t @ t.T)
                else:
                    d = (1 - F.cosine_similarity(head(emb), tgt)).mean()
                value = value + distill_w * d
            optimizer.zero_grad()
            value.backward()
            optimizer.step()
            if cfg.get("keep_norms"):
                with torch.no_grad():
                    for p in sub_params:
                        if p.requires_grad:
                            p.mul_(norms[id(p)] / p.norm(dim=1, keepdim=True).clamp_min(1e-12))
            step += 1
            if step % every == 0 or step == total:
                model.eval()
                score = dev(model)["dev_mean_pearson"]
                model.train()
                log.append((step, round(float(value.detach()), 4), round(score, 4), round(time.time() - started)))
                print(name, log[-1], flush=True)
    model.eval()
    trained = ParaNMTEncoder(model[0].model, model[0].tokenizer)
    set_sparse_embeddings(trained.model, False)
    out_dir = RUNS / "models" / name
    trained.save_pretrained(out_dir, sentence_transformers=False)
    dev_scores = evaluate(trained, DEV)
    test = evaluate(trained, [*TEST, "STSBenchmark"])
    sts = round(float(np.mean([test[t] for t in TEST])), 2)
    run = {
        "name": name,
        "cfg": cfg,
        "command": f"python results/teacher/explore.py '{json.dumps(cfg)}' {name}",
        "commit": record["git_commit"],
        "provenance": record,
        "steps": total,
        "seconds": round(time.time() - started),
        "log": log,
        "dev": dev_scores,
        "dev_mean": round(float(np.mean(list(dev_scores.values()))), 2),
        "test": test,
        "sts12_16": sts,
        "load_average": os.getloadavg(),
    }
    record_run(run)


if __name__ == "__main__":
    main()

"""Teacher initialisation without training: model2vec distillation variants of all-MiniLM-L6-v2 as ``subword`` models.

Dev (STS17 en-en, STS-B validation) chooses; test numbers (STS12-16 papers' protocol, STS-B test) are stored once.
Variants: model2vec's defaults (PCA 256, Zipf/SIF 1e-4 by vocabulary rank), no PCA reduction (384), no weighting,
and SIF weights from token frequencies counted on the training corpus instead of the Zipf-by-id estimate.

    python results/teacher/init_variants.py        # appends to results/teacher/init_variants.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from explore import DEV, RUNS, TEST, evaluate, sources  # noqa: E402

from paranmt_hf.model.distill import build_teacher_encoder, distill_teacher  # noqa: E402


def corpus_sif(encoder: object, corpus: list[str], a: float) -> np.ndarray:
    """SIF weights a / (a + p(token)) with p counted on ``corpus`` (unseen tokens: count 0 -> weight 1)."""
    counts: Counter[int] = Counter()
    backend = encoder.tokenizer.backend_tokenizer
    for enc in backend.encode_batch_fast(corpus, add_special_tokens=False):
        counts.update(enc.ids)
    freq = np.zeros(len(encoder.tokenizer), dtype=np.float64)
    for i, c in counts.items():
        freq[i] = c
    p = freq / freq.sum()
    return (a / (a + p)).astype(np.float32)


def main() -> None:
    import torch

    from paranmt_hf.utils.provenance import provenance

    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    record = provenance()  # at the start: the load average the run began under
    torch.set_num_threads(1)
    srcs = sources()
    corpus = sorted({s for pairs, _ in srcs for p in pairs for s in p})
    variants = [
        ("m2v-pca256-sif", {"pca_dims": 256, "sif_coefficient": 1e-4}, None),
        ("m2v-pca384-sif", {"pca_dims": 384, "sif_coefficient": 1e-4}, None),
        ("m2v-pca256-nosif", {"pca_dims": 256, "sif_coefficient": None}, None),
        ("m2v-pca256-corpus-sif-1e-3", {"pca_dims": 256, "sif_coefficient": None}, 1e-3),
        ("m2v-pca256-corpus-sif-1e-4", {"pca_dims": 256, "sif_coefficient": None}, 1e-4),
        ("m2v-pca384-corpus-sif-1e-3", {"pca_dims": 384, "sif_coefficient": None}, 1e-3),
    ]
    done = set()
    out = HERE / "init_variants.jsonl"
    if out.is_file():
        done = {json.loads(line)["name"] for line in out.read_text().splitlines()}
    for name, options, corpus_a in variants:
        if name in done:
            continue
        static = distill_teacher(cache_dir=RUNS / "distilled", **options)
        encoder = build_teacher_encoder("subword", corpus[:10], static_model=static)
        if corpus_a is not None:
            weight = encoder.model.components[0].embedding.weight
            weight.data.mul_(torch.from_numpy(corpus_sif(encoder, corpus, corpus_a))[:, None])
        dev = evaluate(encoder, DEV)
        test = evaluate(encoder, [*TEST, "STSBenchmark"])
        row = {
            "name": name,
            "options": options,
            "corpus_sif": corpus_a,
            "command": "python results/teacher/init_variants.py",
            "commit": record["git_commit"],
            "provenance": record,
            "dev": dev,
            "dev_mean": round(float(np.mean(list(dev.values()))), 2),
            "test": test,
            "sts12_16": round(float(np.mean([test[t] for t in TEST])), 2),
            "load_average": os.getloadavg(),
        }
        print(json.dumps(row), flush=True)
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

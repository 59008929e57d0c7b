"""The timed encoders of ``benchmarks/speed``: every loader a user has, for every encoder kind, and the peers.

Each entry is ``(name, kind, loader, callable(sentences) -> embeddings, subset)``; ``subset`` marks the slow encoders
timed on a fixed random sample. paranmt_hf token caches are cleared before every call (cold), except in the rows
marked ``warm``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models import AVERAGING

Entry = tuple[str, str, str, Any, bool]


def clear_token_cache(featurizer_or_fast: Any) -> None:
    """Empty a paranmt_hf featuriser's (or fast-ids object's) token-id cache, so the next call is cold, and the
    tokenizers model's own cache (Unigram and BPE keep up to 10,000 words between calls; WordPiece has none)."""
    fast = getattr(featurizer_or_fast, "fast_ids", featurizer_or_fast)
    if fast is not None and hasattr(fast, "clear"):
        fast.clear()
    for part in getattr(fast, "parts", [fast]):
        model = getattr(getattr(part, "backend", None), "model", None)
        if hasattr(model, "_clear_cache"):
            model._clear_cache()


def averaging(path: str, kind: str) -> bool:
    """Whether the model is an averaging one (timed on every sentence): by kind name for the benchmark's own
    models, else (a trained model given by name) from its ``config.json``'s components."""
    if kind in AVERAGING:
        return True
    import json

    from paranmt_hf.modeling.kinds_paranmt import AVERAGING_KINDS, resolve_components

    config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    return all(c["kind"] in AVERAGING_KINDS for c in resolve_components(config))


def paranmt_encoder(path: str, kind: str) -> list[Entry]:
    """``ParaNMTEncoder.encode`` (one process, default batch size), cold and warm token cache."""
    from paranmt_hf import ParaNMTEncoder

    enc = ParaNMTEncoder.from_pretrained(path)

    def cold(s: list[str]) -> Any:
        clear_token_cache(enc.featurizer)
        return enc.encode(s, show_progress_bar=False, num_processes=1)

    fast = averaging(path, kind)
    out = [(f"{kind} · ParaNMTEncoder", kind, "ParaNMTEncoder", cold, not fast)]
    if fast:
        out.append((f"{kind} · ParaNMTEncoder (warm cache)", kind, "ParaNMTEncoder warm",
                    lambda s: enc.encode(s, show_progress_bar=False, num_processes=1), False))
    return out


def sentence_transformer(path: str, kind: str) -> list[Entry]:
    """``SentenceTransformer(dir).encode`` at batch 1024 and at its default 32 (the fast input module)."""
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(path, device="cpu", trust_remote_code=True)  # the folder's module
    assert type(st[0]).__name__ == "ParaNMTInputModule", type(st[0])
    out = []
    fast = averaging(path, kind)
    for batch in (1024, 32):
        def run(s: list[str], batch: int = batch) -> Any:
            clear_token_cache(st[0].featurizer)
            return st.encode(s, batch_size=batch)

        out.append((f"{kind} · SentenceTransformer (batch {batch})", kind, f"SentenceTransformer {batch}", run,
                    not fast))
    # where paranmt_hf is not installed the shipped featuriser has no fast ids: the tokenizer's own batch call
    plain = SentenceTransformer(path, device="cpu", trust_remote_code=True)
    plain[0].featurizer._fast = False
    out.append((f"{kind} · SentenceTransformer (batch 1024, without paranmt_hf)", kind,
                "SentenceTransformer 1024 plain", lambda s: cold_plain(plain, s), not fast))
    if fast:
        out.append((f"{kind} · SentenceTransformer's own work (batch 1024)", kind, "SentenceTransformer own work",
                    own_work(path), False))
    static = Path(path) / "static"
    if (static / "modules.json").is_file():
        stock = SentenceTransformer(str(static), device="cpu")
        out.append((f"{kind} · SentenceTransformer static/ (stock StaticEmbedding, batch 1024)", kind,
                    "StaticEmbedding copy", lambda s: stock.encode(s, batch_size=1024), False))
    return out


def cold_plain(st: Any, sentences: list[str]) -> Any:
    """``st.encode`` at batch 1024 after emptying the tokenizers models' own word caches (Unigram's, BPE's)."""
    tokenizer = st[0].tokenizer
    backends = [getattr(tokenizer, "backend_tokenizer", None)]
    backends += [getattr(seg, "tokenizer", None) for seg in getattr(tokenizer, "segmenters", [])]
    for backend in backends:
        model = getattr(backend, "model", None)
        if hasattr(model, "_clear_cache"):
            model._clear_cache()
    return st.encode(sentences, batch_size=1024)


def own_work(path: str) -> Any:
    """``SentenceTransformer(dir).encode`` at batch 1024 with the module's preprocess and forward replaced by a
    constant tensor of the model's width: what sentence-transformers itself spends per call at that width (input
    checks, sorting, one tensor per row, stacking them), the floor of every module it runs."""
    import torch
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(path, device="cpu", trust_remote_code=True)
    module = st[0]
    constant = torch.zeros(1024, module.get_embedding_dimension())

    def preprocess(texts: list[str], prompt: str | None = None, **kwargs: Any) -> dict[str, Any]:
        return {"rows": torch.tensor(len(texts))}

    def forward(features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        features["sentence_embedding"] = constant[: int(features["rows"])]
        return features

    module.preprocess, module.forward = preprocess, forward
    return lambda s: st.encode(s, batch_size=1024)


def auto_model(path: str, kind: str) -> list[Entry]:
    """``AutoTokenizer`` + ``AutoModel`` (``pooler_output``) in batches of 1024."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()

    def run(s: list[str]) -> Any:
        if getattr(tokenizer, "_batch_ids", None) is not None:
            clear_token_cache(tokenizer._batch_ids)
        out = []
        with torch.inference_mode():
            for start in range(0, len(s), 1024):
                batch = tokenizer(s[start : start + 1024], padding=True, return_tensors="pt")
                out.append(model(**batch).pooler_output)
        return torch.cat(out)

    return [(f"{kind} · AutoTokenizer + AutoModel (batch 1024)", kind, "AutoModel", run, kind not in AVERAGING)]


def onnx(path: str, kind: str, cache: Path) -> list[Entry]:
    """onnxruntime on the exported graph (averaging encoders and combinations), one intra-op thread."""
    from paranmt_hf.model.onnx import OnnxEncoder, export_onnx

    out_dir = cache / f"{kind}-onnx"
    graph, weights = out_dir / "model.onnx", Path(path) / "model.safetensors"
    if not graph.is_file() or graph.stat().st_mtime < weights.stat().st_mtime:  # none yet, or from an older model
        export_onnx(path, out_dir)
    enc = OnnxEncoder(out_dir, threads=1)

    def run(s: list[str]) -> Any:
        clear_token_cache(enc.featurizer)
        return enc.encode(s, batch_size=1024)

    return [(f"{kind} · ONNX (onnxruntime, batch 1024)", kind, "ONNX", run, False)]


REFERENCE = "model2vec (StaticModel.encode, float32 table)"
"""The reference of every ratio: model2vec's own encode with its table in float32 (its published potion models'
dtype; ~1.3x faster than the float16 table ``distill`` stores by default)."""


def numpy_sums_only(encode: Any) -> Any:
    """``encode`` with ``StaticEncoder``'s row sums in NumPy, as in a core install without SciPy."""
    from paranmt_hf.model import averaging as row_sums

    def run(s: list[str]) -> Any:
        row_sums.USE_SCIPY = False
        try:
            return encode(s)
        finally:
            row_sums.USE_SCIPY = None

    return run


def static_encoder(path: str, kind: str) -> list[Entry]:
    """``StaticEncoder.encode`` (no torch), cold chunk caches: as installed (SciPy's sparse product sums the rows
    when SciPy is there, as in this benchmark's environment), and with NumPy sums only (a core install)."""
    from paranmt_hf import StaticEncoder

    enc = StaticEncoder.from_pretrained(path)

    def cold(s: list[str]) -> Any:
        clear_token_cache(enc.fast_ids)
        enc.averager.clear()
        return enc.encode(s, show_progress_bar=False)

    return [(f"{kind} · StaticEncoder (no torch)", kind, "StaticEncoder", cold, False),
            (f"{kind} · StaticEncoder (no torch, NumPy sums only)", kind, "StaticEncoder NumPy", numpy_sums_only(cold),
             False)]


def peers(m2v: str, minilm: str) -> list[Entry]:
    """model2vec's own ``encode`` (float32 table: the reference; float16: distill's default), model2vec in
    sentence-transformers, all-MiniLM-L6-v2."""
    import numpy as np
    from model2vec import StaticModel
    from sentence_transformers import SentenceTransformer

    static_model = StaticModel.from_pretrained(m2v)
    float32 = StaticModel.from_pretrained(m2v)
    float32.embedding = np.asarray(float32.embedding, dtype=np.float32)
    st_m2v = SentenceTransformer(m2v, device="cpu")
    mini = SentenceTransformer(minilm, device="cpu")
    return [
        (REFERENCE, "peer", "model2vec", lambda s: float32.encode(s, use_multiprocessing=False), False),
        ("model2vec (StaticModel.encode, float16 table: distill's default)", "peer", "model2vec float16",
         lambda s: static_model.encode(s, use_multiprocessing=False), False),
        ("model2vec · SentenceTransformer (batch 1024)", "peer", "SentenceTransformer 1024",
         lambda s: st_m2v.encode(s, batch_size=1024), False),
        ("all-MiniLM-L6-v2 · SentenceTransformer (batch 32)", "peer", "SentenceTransformer 32",
         lambda s: mini.encode(s, batch_size=32), True),
    ]


def all_entries(models: dict[str, str], m2v: str, minilm: str, cache: Path, trained: dict[str, str] | None = None,
                user_path_only: bool = False) -> list[Entry]:
    """Every timed encoder, peers first; ``trained``: name -> directory of trained models (timed on the user's
    paths: ParaNMTEncoder, SentenceTransformer batch 1024, StaticEncoder). ``user_path_only``: those loaders only."""
    out = peers(m2v, minilm)
    for name, path in (trained or {}).items():
        out += paranmt_encoder(path, name)[:1]
        out += [e for e in sentence_transformer(path, name) if e[2] == "SentenceTransformer 1024"]
        out += static_encoder(path, name)
    for kind, path in models.items():
        out += paranmt_encoder(path, kind)
        if user_path_only:
            out += [e for e in sentence_transformer(path, kind) if e[2].startswith("SentenceTransformer 1024")]
            out += static_encoder(path, kind) if kind in AVERAGING else []
            continue
        out += sentence_transformer(path, kind)
        out += auto_model(path, kind)
        if kind in AVERAGING:
            out += onnx(path, kind, cache)
            out += static_encoder(path, kind)
    return out

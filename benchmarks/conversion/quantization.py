"""Weight storage (float16 / int8) and ONNX export (fp32 / int8): quality change and agreement with PyTorch.

1. STS12-16 (papers' protocol: mean Pearson x 100 per year, then over years) of a GloVe-50d word-averaging model
   stored as float32, float16 and int8 (``save_pretrained(weight_dtype=...)``) and exported to ONNX fp32 / int8
   (``paranmt_hf.model.onnx``, run with onnxruntime). Its vocabulary: the words of the English training corpora and
   of the STS12-16 sentences that have a GloVe vector (no labels used).
2. The three averaging kinds at benchmark size (word 300-d, trigram 300-d, sp 1024-d, from ``benchmarks/speed``):
   ONNX fp32 max |diff| and ONNX int8 / int8-storage minimum cosine against PyTorch over all 38,393 STS sentences,
   and file sizes.

Usage: ``python benchmarks/conversion/quantization.py``; records the run under ``quantization`` in ``conversion.json``
here, with the provenance (command, git commit, environment, load average). The benchmark-size models are built in
(or reused from) ``$SPEED_CACHE`` (default ``/tmp/paranmt_speed_models``): an empty folder builds them with the
current code.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "speed"))

from models import build_models, english_corpus, sts_sentences  # noqa: E402


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)


def sts_table(data: Path, work: Path) -> dict[str, Any]:
    """STS12-16 of the GloVe model in every storage / export form."""
    from paranmt_hf import ParaNMTEncoder, build_encoder
    from paranmt_hf.evaluation import evaluate, paper_average
    from paranmt_hf.model.onnx import OnnxEncoder, export_onnx
    from paranmt_hf.model.storage import storage_bytes

    encoder = build_encoder("word", english_corpus(data) + sts_sentences(data), word_vectors="glove-6b-50d")
    forms: dict[str, Any] = {}
    for dtype in ("float32", "float16", "int8"):
        d = work / dtype
        encoder.save_pretrained(d, weight_dtype=dtype)
        forms[f"storage {dtype}"] = (ParaNMTEncoder.from_pretrained(d), storage_bytes(d))
    for int8 in (False, True):
        path = export_onnx(encoder, work / f"onnx{'-int8' if int8 else ''}", int8=int8)
        forms[f"ONNX {'int8' if int8 else 'fp32'}"] = (OnnxEncoder(path), path.stat().st_size)
    out = {}
    for name, (enc, size) in forms.items():
        results = evaluate(enc, "sts12-16", data_dir=data, batch_size=8192)
        years = {k: round(r.paper_score, 2) for k, r in results.items()}
        out[name] = {"sts12_16_paper_avg": round(paper_average(results), 2), "per_year": years, "bytes": size}
    base = out["storage float32"]["sts12_16_paper_avg"]
    for r in out.values():
        r["change_vs_float32"] = round(r["sts12_16_paper_avg"] - base, 2)
    return {"model": f"word averaging, GloVe 6B 50d, vocab {len(encoder.tokenizer):,}", "forms": out}


def agreement(data: Path, work: Path) -> dict[str, Any]:
    """ONNX and int8 storage vs PyTorch on every STS sentence, for the benchmark-size averaging models."""
    from paranmt_hf import ParaNMTEncoder
    from paranmt_hf.model.onnx import OnnxEncoder, export_onnx
    from paranmt_hf.model.storage import storage_bytes

    sentences = sts_sentences(data)
    models = build_models(data, Path(os.environ.get("SPEED_CACHE", "/tmp/paranmt_speed_models")))
    out = {}
    for kind in ("word", "trigram", "sp"):
        enc = ParaNMTEncoder.from_pretrained(models[kind])
        ref = enc.encode(sentences)
        vocab = enc.model.config.resolved_components()[0]["vocab_size"]
        row: dict[str, Any] = {"dim": enc.embedding_dim, "vocab": vocab}
        for int8 in (False, True):
            path = export_onnx(enc, work / f"{kind}-onnx{int(int8)}", int8=int8)
            t0 = time.perf_counter()
            got = OnnxEncoder(path, threads=1).encode(sentences)
            key = "onnx_int8" if int8 else "onnx_fp32"
            row[key] = {
                "max_abs_diff": float(np.abs(got - ref).max()),
                "min_cosine": float(_cos(got, ref).min()),
                "bytes": path.stat().st_size,
                "sent_per_s_1_thread": len(sentences) / (time.perf_counter() - t0),
            }
        for dtype in ("float32", "float16", "int8"):
            d = work / f"{kind}-{dtype}"
            enc.save_pretrained(d, weight_dtype=dtype)
            got = ParaNMTEncoder.from_pretrained(d).encode(sentences)
            row[f"storage_{dtype}"] = {
                "max_abs_diff": float(np.abs(got - ref).max()),
                "min_cosine": float(_cos(got, ref).min()),
                "bytes": storage_bytes(d),
            }
        out[kind] = row
    return out


def markdown(report: dict[str, Any]) -> str:
    """README tables."""
    lines = [f"`{report['provenance']['command']}` · {report['provenance']['date']} · {report['provenance']['cpu']}",
             "", f"## STS12-16 (papers' protocol, mean Pearson × 100) — {report['sts']['model']}", "",
             "| form | STS12-16 | change | STS12 | STS13 | STS14 | STS15 | STS16 | weight file |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {name} | {r['sts12_16_paper_avg']:.2f} | {r['change_vs_float32']:+.2f} | "
              + " | ".join(f"{v:.2f}" for v in r["per_year"].values()) + f" | {r['bytes'] / 1e6:.1f} MB |"
              for name, r in report["sts"]["forms"].items()]
    lines += ["", "## Agreement with PyTorch on all 38,393 STS12-16 sentences (benchmark-size, untrained weights)", "",
              "| kind | dim | form | max abs diff | min cosine | file | sent/s (1 thread) |",
              "|---|---:|---|---:|---:|---:|---:|"]
    rate = lambda r: f"{r['sent_per_s_1_thread']:,.0f}" if "sent_per_s_1_thread" in r else ""  # noqa: E731
    lines += [f"| {kind} | {row['dim']} | {form} | {r['max_abs_diff']:.2e} | {r['min_cosine']:.6f} | "
              f"{r['bytes'] / 1e6:.1f} MB | {rate(r)} |"
              for kind, row in report["agreement"].items()
              for form, r in ((f, row[f]) for f in ("onnx_fp32", "onnx_int8", "storage_float16", "storage_int8"))]
    lines += ["", "Targets: ONNX fp32 max abs diff ≤ 1e-5; ONNX int8 cosine ≥ 0.999 per sentence; storage change "
              "≤ 0.5 STS point. The sent/s column was taken under the load average above, on shared "
              "cores: it is not a speed benchmark (`benchmarks/speed` is).", ""]
    return "\n".join(lines)


def main() -> None:
    """Run both parts and write the outputs."""
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import provenance, update_record

    data = data_dir()
    with tempfile.TemporaryDirectory() as tmp:
        report = {
            "provenance": provenance(packages=["paranmt_hf", "torch", "transformers", "onnx", "onnxruntime", "numpy"]),
            "models_cache": os.environ.get("SPEED_CACHE", "/tmp/paranmt_speed_models"),
            "sts": sts_table(data, Path(tmp) / "sts"),
            "agreement": agreement(data, Path(tmp) / "agree"),
        }
    update_record(HERE / "conversion.json", "quantization", report)  # the folder's one JSON: this run's key
    print(markdown(report))


if __name__ == "__main__":
    main()

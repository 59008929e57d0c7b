"""The teacher pass of `best` (all-MiniLM-L6-v2 over the main job's unique training sentences): old path vs new.

    python results/teacher/teacher_pass.py [--speed-sentences 800] [--rounds 2] [--cosine-sentences 4000]
        # writes results/teacher/teacher_pass.json

Sentences: the 190,530 unique sentences of the main job's English training pairs (Flickr30k caption pairs, the
ParaNMT sample, the Tatoeba pivots made by ``paranmt-hf corpus pivot`` into a temporary folder), as
``paranmt-hf train --recipe best`` collects them.

Speed: a seeded sample of ``--speed-sentences`` of them, embedded by each path in interleaved rounds (a busy
machine slows every path alike: read the ratios), every path with one thread per core of this process:

- ``torch bfloat16`` — the previous default (``SentenceTransformer.encode`` under CPU bfloat16 autocast, chunks of
  8,192, batch 128);
- ``torch float32`` — the same without autocast (the reference embeddings);
- ``onnxruntime float32`` — the new default (:mod:`paranmt_hf.training.teacher_onnx`: cached export, sentences
  sorted by length, batch 128);
- ``onnxruntime int8`` — dynamic int8 quantisation of the same export.

Model loading / export is timed apart (once). Agreement: per-sentence cosine of each path to ``torch float32`` on a
seeded sample of ``--cosine-sentences`` (``all``: every sentence), min / mean / quantiles.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TEACHER = "sentence-transformers/all-MiniLM-L6-v2"


def main_job_sentences() -> list[str]:
    """The unique sentences of the main job's English training pairs (``scripts/main.sh``'s sources)."""
    from paranmt_hf.training.data import load_pairs
    from paranmt_hf.training.tokenlearn import unique_sentences
    from paranmt_hf.utils.paths import data_dir

    data = data_dir()
    with tempfile.TemporaryDirectory() as tmp:
        pivots = Path(tmp) / "tatoeba-pivots.tsv.gz"
        subprocess.run(["paranmt-hf", "corpus", "pivot", *(str(data / "train" / "bitext" / f"tatoeba-en-{x}.tsv.gz")
                                                           for x in ("es", "fr", "de")), "-o", str(pivots),
                        "--no-progress"], check=True, stdout=subprocess.DEVNULL)
        pairs = load_pairs([str(data / "train" / "flickr30k-caption-pairs.tsv.gz"),
                            f"processed-5m:{data / 'train' / 'paranmt5m-sample-10k.tsv.gz'}@10",
                            f"pairs:{pivots}@3"], None, 0)
        return unique_sentences([*pairs["anchor"], *pairs["positive"]])


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def table(record: dict) -> str:
    """The speed and agreement table of a record (Markdown)."""
    lines = ["| path | sentences/s (median of rounds) | × torch bfloat16 (old default) | × torch float32 | "
             "cosine to torch float32: min / mean (sentences) | below 0.999 |", "|---|---:|---:|---:|---|---:|"]
    for name, speed in record["speed"].items():
        agree = record["cosine_to_torch_float32"].get(name)
        cosine = (f"{agree['min']:.6f} / {agree['mean']:.7f} ({agree['sentences']:,})" if agree else "(reference)")
        lines.append(f"| {name} | {speed['sentences_per_second_median']:.1f} | "
                     f"{speed['speedup_over_torch_bfloat16']:.2f} | {speed['speedup_over_torch_float32']:.2f} | "
                     f"{cosine} | {agree['below_0.999'] if agree else '–'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed-sentences", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cosine-sentences", default="4000", help="a number, or all")
    parser.add_argument("--bfloat16-cosine-sentences", type=int, default=500,
                        help="the old bfloat16 path's agreement on the first N of the cosine sample only")
    parser.add_argument("--no-int8", action="store_true")
    parser.add_argument("--output", default=str(HERE / "teacher_pass.json"))
    parser.add_argument("--table", action="store_true", help="print the table of --output and exit")
    args = parser.parse_args()
    if args.table:
        import json

        print(table(json.loads(Path(args.output).read_text())), end="")
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from paranmt_hf.model.distill import resolve_teacher
    from paranmt_hf.training.teacher_embeddings import teacher_encoder
    from paranmt_hf.training.teacher_onnx import cores
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import provenance

    sentences = main_job_sentences()
    print(f"{len(sentences):,} unique training sentences", flush=True)
    path = resolve_teacher(TEACHER)
    paths = {"torch bfloat16": ("bfloat16", "torch"), "torch float32": ("float32", "torch"),
             "onnxruntime float32": ("float32", "onnxruntime")}
    if not args.no_int8:
        paths["onnxruntime int8"] = ("int8", "onnxruntime")
    encoders, load_seconds = {}, {}
    for name, (precision, engine) in paths.items():
        started = time.perf_counter()
        encoders[name] = teacher_encoder(path, precision, engine)  # the ONNX export happens here if not cached
        load_seconds[name] = round(time.perf_counter() - started, 1)
    rng = random.Random(0)
    speed_sample = rng.sample(sentences, min(args.speed_sentences, len(sentences)))
    seconds: dict[str, list[float]] = {name: [] for name in paths}
    loads = []
    for round_index in range(args.rounds):
        order = list(paths) if round_index % 2 == 0 else list(paths)[::-1]
        for name in order:
            loads.append(os.getloadavg()[0])
            started = time.perf_counter()
            encoders[name](speed_sample, show_progress=False)
            seconds[name].append(time.perf_counter() - started)
            print(f"round {round_index}: {name} {len(speed_sample) / seconds[name][-1]:.1f} sentences/s "
                  f"(load {loads[-1]:.1f})", flush=True)
    loads.append(os.getloadavg()[0])
    rates = {name: len(speed_sample) / statistics.median(times) for name, times in seconds.items()}
    old = "torch bfloat16"
    speed = {name: {"seconds": [round(t, 2) for t in times], "sentences_per_second_median": round(rates[name], 1),
                    "speedup_over_torch_bfloat16": round(rates[name] / rates[old], 2),
                    "speedup_over_torch_float32": round(rates[name] / rates["torch float32"], 2)}
             for name, times in seconds.items()}

    if args.cosine_sentences == "all":
        cosine_sample = sentences
    else:
        cosine_sample = random.Random(1).sample(sentences, min(int(args.cosine_sentences), len(sentences)))
    reference = encoders["torch float32"](cosine_sample, show_progress=True)
    agreement = {}
    for name in paths:
        if name == "torch float32":
            continue
        if name == old and len(cosine_sample) > args.bfloat16_cosine_sentences:  # slow without bf16 units
            sample = cosine_sample[: args.bfloat16_cosine_sentences]
            got, ref = encoders[name](sample, show_progress=True), reference[: len(sample)]
        else:
            got, ref = encoders[name](cosine_sample, show_progress=True), reference
        cos = cosines(got, ref)
        agreement[name] = {"sentences": len(cos), "min": round(float(cos.min()), 6),
                           "mean": round(float(cos.mean()), 7),
                           "quantiles_0.1%_1%_50%": [round(float(q), 6) for q in np.quantile(cos, [0.001, 0.01, 0.5])],
                           "below_0.999": int((cos < 0.999).sum())}
        print(name, agreement[name], flush=True)
    command = "python results/teacher/teacher_pass.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k not in ("output", "no_int8", "table")) + (
        " --no-int8" if args.no_int8 else "")
    record = {
        "command": command,
        "provenance": provenance(command=command),
        "sentences": len(sentences),
        "threads": cores(),
        "speed_sentences": len(speed_sample),
        "rounds": args.rounds,
        "load_average_1min_during": [round(x, 2) for x in loads],
        "load_seconds": load_seconds,
        "speed": speed,
        "cosine_to_torch_float32": agreement,
    }
    atomic_write_json(args.output, record, indent=1)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

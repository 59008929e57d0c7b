"""How fast is the teacher pass of ``best``, alone and beside other work, in each engine?

The main job's ``best`` run embeds its 190,530 unique training sentences with all-MiniLM-L6-v2 (the teacher pass,
``paranmt_hf/training/teacher_embeddings.py``) while the cross-lingual model trains beside it on one core. This
times the engines on a seeded sample of those sentences (Flickr30k caption pairs), on every core of this process:

- ``onnxruntime float32``: the default, whole batches of 32 sentences side by side, one thread each;
- ``onnxruntime float32, batches of 128``: the same with larger batches;
- ``onnxruntime float32, threads within a batch``: one batch at a time, split over the threads by ONNX Runtime
  (``intra_op_num_threads``, its threads spin-waiting between operators as ONNX Runtime does by default);
- ``torch float32`` and ``torch bfloat16`` (autocast), through ``SentenceTransformer.encode``.

Each engine runs alone and beside a neighbour: a one-thread process doing matrix products and counting them (the
main job's other training). Reported: sentences per wall second and per CPU second of the pass, the neighbour's
products per second during the pass (what the pass leaves it), and each engine's least cosine to ONNX Runtime float32.
Engines alternate within each round; medians over rounds.

    python benchmarks/teacher_pass/benchmark.py --sentences 3000 --rounds 3
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

HERE = Path(__file__).resolve().parent
BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
ENGINES = ("onnxruntime float32", "onnxruntime float32, batches of 128", "onnxruntime float32, threads within a batch",
           "torch float32", "torch bfloat16")


def training_sentences(data: Path, count: int, seed: int) -> list[str]:
    """A seeded sample of ``count`` distinct sentences of the Flickr30k caption pairs (the main job's largest part)."""
    with gzip.open(data / "train" / "flickr30k-caption-pairs.tsv.gz", "rt", encoding="utf-8") as f:
        unique = list(dict.fromkeys(s for line in f for s in line.rstrip("\n").split("\t")[:2] if s))
    return random.Random(seed).sample(unique, min(count, len(unique)))


def engines(threads: int) -> dict[str, Callable[[list[str]], np.ndarray]]:
    """Each engine's ``encode(sentences)``, loaded and warmed up."""
    import onnxruntime as ort

    from paranmt_hf.model.distill import DEFAULT_TEACHER, resolve_teacher
    from paranmt_hf.training.teacher_embeddings import teacher_encoder
    from paranmt_hf.training.teacher_onnx import MODEL_FILE, OnnxTeacher

    path = resolve_teacher(DEFAULT_TEACHER)
    batches = OnnxTeacher(path, "float32", threads=threads)
    within = OnnxTeacher.from_export(batches.folder, threads=1)  # one batch at a time ...
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # ... split over the threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    within.session = ort.InferenceSession(str(batches.folder / MODEL_FILE), options,
                                          providers=["CPUExecutionProvider"])
    torch32 = teacher_encoder(path, "float32", "torch", threads=threads)
    bf16 = teacher_encoder(path, "bfloat16", "torch", threads=threads)
    out = {
        ENGINES[0]: lambda s: batches.encode(s, show_progress=False),
        ENGINES[1]: lambda s: batches.encode(s, batch_size=128, show_progress=False),
        ENGINES[2]: lambda s: within.encode(s, show_progress=False),
        ENGINES[3]: lambda s: torch32(s, show_progress=False),
        ENGINES[4]: lambda s: bf16(s, show_progress=False),
    }
    for encode in out.values():
        encode(["A warm-up sentence.", "Two dogs play in the snow."])
    return out


def _neighbour(counter: Any, stop: Any) -> None:
    """One thread of matrix products, counted (stands for the training that runs beside the pass)."""
    a = np.random.default_rng(0).standard_normal((192, 192)).astype(np.float32)
    while not stop.is_set():
        for _ in range(20):
            a = np.tanh(a @ a.T * 0.01)
        with counter.get_lock():
            counter.value += 20


def timed(encode: Callable[[list[str]], np.ndarray], sentences: list[str], counter: Any | None
          ) -> tuple[dict[str, float], np.ndarray]:
    """One pass: wall and CPU seconds, sentences per second, the neighbour's products per second."""
    before = counter.value if counter is not None else 0
    c0, w0 = time.process_time(), time.perf_counter()
    embeddings = encode(sentences)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    row = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "sentences_per_s": round(len(sentences) / wall, 1),
           "sentences_per_cpu_s": round(len(sentences) / max(cpu, 1e-9), 1)}
    if counter is not None:
        row["neighbour_products_per_s"] = round((counter.value - before) / wall, 1)
    return row, embeddings


def measure(sentences: list[str], rounds: int, threads: int) -> dict[str, Any]:
    """Every engine alone and beside the neighbour, alternating within rounds; cosines to ONNX Runtime float32."""
    import torch

    torch.set_num_threads(threads)
    encoders = engines(threads)
    runs: dict[str, dict[str, list[dict[str, float]]]] = {s: {e: [] for e in ENGINES} for s in ("alone", "beside")}
    reference: np.ndarray | None = None
    cosines: dict[str, float] = {}
    neighbour_alone: list[float] = []
    context = multiprocessing.get_context("spawn")
    for index in range(rounds):
        for scenario in ("alone", "beside"):
            counter = stop = process = None
            if scenario == "beside":
                counter, stop = context.Value("q", 0), context.Event()
                process = context.Process(target=_neighbour, args=(counter, stop), daemon=True)
                # one BLAS thread: the child reads it when it imports NumPy
                with mock.patch.dict(os.environ, dict.fromkeys(BLAS_THREADS, "1")):
                    process.start()
                while counter.value == 0:  # it has started working
                    time.sleep(0.05)
                start, t = counter.value, time.perf_counter()
                time.sleep(1.0)
                neighbour_alone.append((counter.value - start) / (time.perf_counter() - t))
            try:
                for name in ENGINES:
                    row, embeddings = timed(encoders[name], sentences, counter)
                    runs[scenario][name].append(row)
                    if name == ENGINES[0] and reference is None:
                        reference = embeddings
                    if index == 0 and scenario == "alone" and reference is not None:
                        a, b = embeddings.astype(np.float64), reference.astype(np.float64)
                        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
                        cosines[name] = round(float(cos.min()), 7)
                    print(f"round {index + 1} {scenario:>6} {name}: {row}", file=sys.stderr)  # noqa: T201
            finally:
                if process is not None:
                    stop.set()
                    process.join(10)
                    if process.is_alive():
                        process.kill()
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    summary = {scenario: {name: {key: med([r[key] for r in rows]) for key in rows[0]}
                          for name, rows in by_engine.items()} for scenario, by_engine in runs.items()}
    return {"runs": runs, "median": summary, "min_cosine_to_onnxruntime_float32": cosines,
            "neighbour_alone_products_per_s": round(med(neighbour_alone), 1) if neighbour_alone else None}


def markdown(report: dict[str, Any]) -> str:
    """The README: provenance, the table, what it means."""
    from paranmt_hf.utils.provenance import describe

    med = report["median"]
    lines = [
        "# The teacher pass of `best`, alone and beside other work (`benchmarks/teacher_pass`)", "",
        describe(report["provenance"]), "",
        f"{report['sentences']:,} distinct Flickr30k training sentences (a seeded sample), all-MiniLM-L6-v2, "
        f"{report['threads']} threads, {report['rounds']} rounds, engines alternating, medians. *Beside*: a "
        "one-thread neighbour doing matrix products runs during the pass "
        f"({report['neighbour_alone_products_per_s']:,} products/s with one core to itself). CPU flags: "
        + ", ".join(report["cpu_flags"]) + ".", "",
        "| engine | alone: sentences/s | alone: sentences/CPU s | beside: sentences/s | beside: neighbour products/s"
        " | least cosine to ONNX Runtime float32 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in ENGINES:
        alone, beside = med["alone"][name], med["beside"][name]
        lines.append(f"| {name} | {alone['sentences_per_s']:,.0f} | {alone['sentences_per_cpu_s']:,.0f} | "
                     f"{beside['sentences_per_s']:,.0f} | {beside['neighbour_products_per_s']:,.0f} | "
                     f"{report['min_cosine_to_onnxruntime_float32'].get(name, float('nan')):.7f} |")
    lines += [
        "", "The pass runs ONNX Runtime float32, whole batches side by side (`paranmt_hf/training/teacher_onnx.py`):"
        " the teacher's own arithmetic; no thread waits at each operator for one that the work beside it delayed."
        " `--teacher-precision bfloat16` runs torch autocast instead: on a CPU with"
        " bfloat16 units (`avx512_bf16`, `amx_bf16`) it can be faster, elsewhere it is much slower, and it is not"
        " the teacher's arithmetic, so no recipe uses it by default.", "",
    ]
    return "\n".join(lines)


def cpu_flags() -> list[str]:
    """The CPU's vector and bfloat16 flags that decide these engines' speed."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    words = set(text.split())
    return sorted(w for w in words if w in {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "fma"})


def main() -> None:
    """Measure, then write ``teacher_pass.json`` (each run under its own key) and ``README.md`` next to this script."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=3000, help="distinct training sentences per pass")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="threads of the pass (default: every core)")
    parser.add_argument("--output", type=Path, default=HERE, help="folder for teacher_pass.json and README.md")
    args = parser.parse_args()
    from paranmt_hf.training.teacher_onnx import cores
    from paranmt_hf.utils.atomic import atomic_write_text
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import provenance, update_record

    threads = args.threads or cores()
    sentences = training_sentences(data_dir(), args.sentences, seed=0)
    report = {"provenance": provenance(), "sentences": len(sentences), "rounds": args.rounds, "threads": threads,
              "cpu_flags": cpu_flags(), **measure(sentences, args.rounds, threads)}
    args.output.mkdir(parents=True, exist_ok=True)
    update_record(args.output / "teacher_pass.json", f"{len(sentences)}_sentences_{threads}_threads", report)
    atomic_write_text(args.output / "README.md", markdown(report))
    print(markdown(report))  # noqa: T201


if __name__ == "__main__":
    main()

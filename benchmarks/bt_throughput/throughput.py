"""Back-translation throughput a planner can use: `corpus backtranslate` on 1 and 2 cores, both engines.

Usage:

    python results/bt_throughput/throughput.py [--hf-sentences 24] [--ct2-sentences 96]

Each row is the whole command (:func:`paranmt_hf.corpus.translation.backtranslate.backtranslate`: the datatrove run,
the model
prepared once into the run's folder, reading the bitext, decoding, writing the TSV) in its own process pinned with
``taskset`` (core 1 for one core, cores 0-1 for two), and reports what the command's summary reports
(:class:`~paranmt_hf.corpus.translation.backtranslate.TranslationSummary`): sentences/s and target tokens/s of the
whole run
(wall time, model loading in the tasks included) and per task (while it decodes). The model is opus-mt-sized
(``MarianMTModel``, 6+6 layers, 512 dimensions, 58,101 tokens, seeded random weights, built in code as
results/backtranslate does); the sentences are real German sentences of the shared Multi30k bitext with their English
references. Random weights never stop early, so every candidate runs to ``--max-new-tokens`` (32): the tokens/s rates
are what counts, sentences/s hold for 32-token translations. Beam 4, one candidate, the default batch budget.

The machine is shared (2 cores, several other jobs): the load average before and after each row is recorded, and
the rates are lower bounds of what the cores give alone.

Writes ``throughput.json`` (with provenance) and ``README.md`` here, the README with the GPU-hour estimate for
ParaNMT-50M's 51.4M sentences (:func:`estimate`), from CTranslate2's published GPU benchmark (cited there) and these
CPU figures; what is measured and what is estimated is said there.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# name, engine, compute type, cores, workers (= tasks), threads per task, CTranslate2 inter_threads
CONFIGS = [
    ("transformers, 1 core", "transformers", None, "1", 1, 1, None),
    ("transformers, 2 cores: 2 tasks x 1 thread", "transformers", None, "0,1", 2, 1, None),
    ("ctranslate2 int8, 1 core", "ctranslate2", "int8", "1", 1, 1, None),
    ("ctranslate2 int8, 2 cores: 2 tasks x 1 thread", "ctranslate2", "int8", "0,1", 2, 1, None),
    ("ctranslate2 int8, 2 cores: 1 task, inter_threads 2", "ctranslate2", "int8", "0,1", 1, 2, 2),
]
PARANMT_SENTENCES = 51_400_000
"""ParaNMT-50M's back-translated sentences (ACL 2018 §3)."""
ACL2018_GPU_HOURS = 10_000
"""ACL 2018 §3: back-translating them took "over 10,000 GPU hours"."""
CT2_BENCHMARK = {
    "source": "CTranslate2 README, 'Benchmarks' (CTranslate2 3.6.0, OPUS-MT en-de base Transformer, newstest2014, "
              "beam 4; GPU: one NVIDIA A10G, g5.xlarge, CUDA 11; CPU: 4 threads of a Xeon Platinum 8275CL, "
              "c5.2xlarge), "
              "https://github.com/OpenNMT/CTranslate2#benchmarks (read at commit 0991310b9fc8)",
    "gpu_tokens_per_s": {"ctranslate2 float16": 9296.7, "ctranslate2 int8": 7521.9, "ctranslate2 float32": 5876.4,
                         "transformers 4.26.1": 1022.9},
    "cpu_4_threads_tokens_per_s": {"ctranslate2 int8": 696.1, "transformers 4.26.1": 147.3},
}
QUIET_CPU = {
    "source": "results/backtranslate/README.md (the project's 2-core machine of 2026-11-26, an Intel Xeon, load "
              "average about 1, commit 933f8c0fc7f5)",
    "one_thread_target_tokens_per_s": {"paranmt_hf transformers (float32)": 85, "paranmt_hf ctranslate2 (int8)": 311},
}
"""One-thread rates measured on a quiet 2-core machine of the project (same model size, beam 4, 32 new tokens)."""
TOKENS_PER_SENTENCE = (15, 20, 30)
"""Assumed target tokens per sentence (opus-mt SentencePiece tokens + end token) for CzEng-like sentences: low,
central, high. An assumption, not a measurement (random weights make 32-token candidates)."""


def bitext(data_dir: Path, count: int, path: Path) -> Path:
    """``count`` lines of the shared Multi30k en-de bitext (English reference, German source) as ``path``."""
    with gzip.open(data_dir / "train" / "bitext" / "multi30k-en-de.tsv.gz", "rt", encoding="utf-8") as f:
        lines = [line for _, line in zip(range(count), f, strict=False)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def build_model(work: Path, data_dir: Path) -> Path:
    """The opus-mt-sized random Marian model (built once; the vocabulary trained on German Multi30k sentences)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # the test fixtures
    from _synthetic_translation import OPUS_MT_SIZE, build_translation_model

    folder = work / "opus-mt-size"
    if not (folder / "config.json").is_file():
        with gzip.open(data_dir / "train" / "bitext" / "multi30k-en-de.tsv.gz", "rt", encoding="utf-8") as f:
            texts = [line.rstrip("\n").split("\t")[1] for _, line in zip(range(20000), f, strict=False)]
        size = {k: OPUS_MT_SIZE[k] for k in ("d_model", "layers", "heads", "ffn", "vocab_size")}
        build_translation_model(folder, texts, kind="marian", spm_pieces=8000, max_length=512, seed=0,
                                init_std=0.02, eos_scale=1.0, **size)
    return folder


def one(config: dict, model: Path, source: Path, work: Path, max_new: int) -> dict:
    """One row in this process: the command's summary."""
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.translation.backtranslate import backtranslate
    from paranmt_hf.corpus.translation.source_cleaning import SourceCleaning
    from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions

    out = work / f"out-{os.getpid()}.tsv"
    start = time.perf_counter()
    size = source.stat().st_size
    summary = backtranslate([source], out, model, DecodingOptions(num_beams=4, max_new_tokens=max_new),
                            RunOptions(workers=config["workers"], tasks=config["workers"],
                                       threads=config["threads"], chunk_bytes=max(size // (4 * config["workers"]), 64),
                                       progress=False, work_dir=str(work / f"work-{os.getpid()}")),
                            engine=config["engine"],
                            engine_kwargs={"compute_type": config["compute"],
                                           "inter_threads": config["inter_threads"]},
                            model_cache=work / "models",
                            cleaning=SourceCleaning.off(), overwrite=True)
    command_s = time.perf_counter() - start
    out.unlink()
    return summary.as_dict() | {"command_s": command_s}


def estimate(rows: list[dict]) -> dict:
    """GPU-hours for ParaNMT-50M's sentences from the published GPU tokens/s; CPU core-hours from ours.

    GPU: ``sentences x tokens per sentence / published tokens per second`` (beam 4, an A10G); the package adds no
    decoding of its own to CTranslate2 under beam search (results/backtranslate: paranmt_hf's CTranslate2 engine within
    a few % of CTranslate2 called directly), so the published rate is used as is. CPU: the same with our per-task
    target tokens/s on one core of this machine.
    """
    out: dict = {"sentences": PARANMT_SENTENCES, "acl2018_gpu_hours": ACL2018_GPU_HOURS,
                 "tokens_per_sentence": list(TOKENS_PER_SENTENCE), "benchmark": CT2_BENCHMARK, "gpu_hours": {},
                 "cpu_core_hours": {}}
    for name, rate in CT2_BENCHMARK["gpu_tokens_per_s"].items():
        out["gpu_hours"][name] = {t: PARANMT_SENTENCES * t / rate / 3600 for t in TOKENS_PER_SENTENCE}
    for row in rows:
        if row["cores"] == "1":
            rate = row["throughput"]["per_task_target_tokens_per_second"]
            out["cpu_core_hours"][row["name"]] = {t: PARANMT_SENTENCES * t / rate / 3600 for t in TOKENS_PER_SENTENCE}
    for name, rate in QUIET_CPU["one_thread_target_tokens_per_s"].items():
        out["cpu_core_hours"][f"{name}, quiet machine ({QUIET_CPU['source'].split(' (')[0]})"] = {
            t: PARANMT_SENTENCES * t / rate / 3600 for t in TOKENS_PER_SENTENCE}
    ours = {r["engine"]: r["throughput"]["per_task_target_tokens_per_second"] for r in rows if r["cores"] == "1"}
    bench = CT2_BENCHMARK["cpu_4_threads_tokens_per_s"]
    out["cpu_check"] = {
        "ours_1_core_tokens_per_s": ours,
        "benchmark_4_threads_per_thread_tokens_per_s": {k: v / 4 for k, v in bench.items()},
    }
    return out


def write_readme(result: dict, path: Path) -> None:
    """The table and the estimate."""
    from paranmt_hf.utils.provenance import describe

    s = result["settings"]
    lines = ["# Back-translation throughput for planning (`results/bt_throughput`)", "",
             describe(result["provenance"]), "",
             f"Load average (1, 5, 15 min) at the start: {result['load_start']}, at the end: {result['load_end']} "
             "on 2 cores shared with other jobs: every rate below is a lower bound of what the cores give alone.", "",
             f"**Measured** here: `corpus backtranslate` (the API, the whole command) with an opus-mt-sized Marian "
             f"(6+6 layers, 512 dims, 58,101 tokens, random weights built in code), beam {s['beams']}, 1 candidate, "
             f"{s['max_new_tokens']} new tokens per candidate (random weights never stop earlier), real German "
             f"Multi30k sentences ({s['hf_sentences']} for transformers, {s['ct2_sentences']} for CTranslate2), each "
             "row one process pinned with `taskset`. *Run*: the command's wall time (tasks load the model); *per "
             "task*: one task while it decodes (what the summary line prints as `per task`). The rows ran one after "
             "the other while the load changed (see the last column): compare them with care, 1 vs 2 cores "
             "included.", "",
             "| configuration | sentences | run sentences/s | run target tokens/s | per-task sentences/s | per-task "
             "target tokens/s | command s | load before / after |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in result["rows"]:
        t = r["throughput"]
        lines.append(f"| {r['name']} | {t['sentences']} | {t['sentences_per_second']:.2f} | "
                     f"{t['target_tokens_per_second']:.0f} | {t['per_task_sentences_per_second']:.2f} | "
                     f"{t['per_task_target_tokens_per_second']:.0f} | {r['command_s']:.1f} | "
                     f"{r['load_before'][0]} / {r['load_after'][0]} |")
    e = result["estimate"]
    b = e["benchmark"]
    mid = TOKENS_PER_SENTENCE[1]
    lines += ["", "## GPU-hours for ParaNMT-50M (estimated, not measured)", "",
              f"No GPU was available to this measurement. **Source** of the GPU rates: {b['source']}. Published "
              "target tokens/s on one A10G: " + ", ".join(f"{k} {v:,.0f}" for k, v in b["gpu_tokens_per_s"].items())
              + ".", "",
              f"**Assumption**: {TOKENS_PER_SENTENCE[0]}-{TOKENS_PER_SENTENCE[-1]} target tokens per sentence "
              f"({mid} central; opus-mt SentencePiece pieces plus the end token of CzEng-like sentences), beam 4 as "
              "in the benchmark, one candidate. GPU-hours = 51.4M x tokens per sentence / published tokens/s / 3600:",
              "", "| engine (A10G) | " + " | ".join(f"{t} tokens/sentence" for t in TOKENS_PER_SENTENCE) + " |",
              "|---|" + "---:|" * len(TOKENS_PER_SENTENCE)]
    for name, hours in e["gpu_hours"].items():
        lines.append(f"| {name} | " + " | ".join(f"{hours[t]:,.0f} h" for t in TOKENS_PER_SENTENCE) + " |")
    fp16 = e["gpu_hours"]["ctranslate2 float16"][mid]
    hf = e["gpu_hours"]["transformers 4.26.1"][mid]
    lines += ["", f"Against ACL 2018's \"over {e['acl2018_gpu_hours']:,} GPU hours\": about {fp16:,.0f} A10G-hours "
              f"with CTranslate2 float16 ({e['acl2018_gpu_hours'] / fp16:,.0f}x fewer) and {hf:,.0f} with the "
              f"transformers engine ({e['acl2018_gpu_hours'] / hf:,.0f}x fewer) at {mid} tokens/sentence and beam 4. "
              "Decoding cost grows roughly in proportion to the beam (an assumption: wider beams, such as an n-best "
              "list of 50, multiply these hours by about width / 4); the paper's GPUs, decoder and beam differ from "
              "the benchmark's, so only the order of magnitude compares.", "",
              "**CPU core-hours** from the one-core per-task rates above (loaded machine) and from the one-thread "
              f"rates measured when the machine was quiet ({QUIET_CPU['source']}); same assumption on "
              "tokens:", "",
              "| engine (1 core here) | " + " | ".join(f"{t} tokens/sentence" for t in TOKENS_PER_SENTENCE) + " |",
              "|---|" + "---:|" * len(TOKENS_PER_SENTENCE)]
    for name, hours in e["cpu_core_hours"].items():
        lines.append(f"| {name} | " + " | ".join(f"{hours[t]:,.0f} h" for t in TOKENS_PER_SENTENCE) + " |")
    check = e["cpu_check"]
    lines += ["", "Cross-check of the CPU figures against the benchmark's CPU rows (per thread, beam 4): ours "
              + ", ".join(f"{k} {v:.0f} tokens/s" for k, v in check["ours_1_core_tokens_per_s"].items())
              + " on one loaded core; the benchmark's "
              + ", ".join(f"{k} {v:.0f}" for k, v in check["benchmark_4_threads_per_thread_tokens_per_s"].items())
              + " per thread of 4 on an unloaded Xeon 8275CL.", "",
              f"Command: `{result['provenance'].get('command')}`. Raw numbers: `throughput.json`."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hf-sentences", type=int, default=24, help="sentences of the transformers rows")
    parser.add_argument("--ct2-sentences", type=int, default=96, help="sentences of the CTranslate2 rows")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--workdir", default="/tmp/paranmt-bt-throughput")
    parser.add_argument("--data-dir", default=None, help="the shared data (default: paranmt_hf's data folder)")
    parser.add_argument("--out", default=str(HERE))
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one row, JSON on stdout
    parser.add_argument("--report", action="store_true", help="only rewrite README.md from throughput.json")
    args = parser.parse_args()
    out_dir, work = Path(args.out), Path(args.workdir)
    if args.report:
        result = json.loads((out_dir / "throughput.json").read_text(encoding="utf-8"))
        result["estimate"] = estimate(result["rows"])
        (out_dir / "throughput.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        write_readme(result, out_dir / "README.md")
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    work.mkdir(parents=True, exist_ok=True)
    if args.one:
        config = json.loads(args.one)
        source = Path(config["bitext"])
        print(json.dumps(one(config, work / "opus-mt-size", source, work, args.max_new_tokens)))
        return
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import provenance

    data = data_dir(args.data_dir)
    build_model(work, data)
    record = provenance(packages=("paranmt_hf", "torch", "transformers", "ctranslate2", "datatrove", "numpy"))
    texts = {"transformers": bitext(data, args.hf_sentences, work / "hf.en-de.tsv"),
             "ctranslate2": bitext(data, args.ct2_sentences, work / "ct2.en-de.tsv")}
    load_start = [round(x, 2) for x in os.getloadavg()]
    rows = []
    for name, engine, compute, cores, workers, threads, inter in CONFIGS:
        config = {"engine": engine, "compute": compute, "workers": workers, "threads": threads,
                  "inter_threads": inter, "bitext": str(texts[engine])}
        before = [round(x, 2) for x in os.getloadavg()]
        done = subprocess.run(["taskset", "-c", cores, sys.executable, __file__, "--one", json.dumps(config),
                               "--workdir", str(work), "--max-new-tokens", str(args.max_new_tokens)],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        row.update(name=name, engine=engine, compute=compute, cores=cores, workers=workers, threads=threads,
                   inter_threads=inter, load_before=before, load_after=[round(x, 2) for x in os.getloadavg()])
        rows.append(row)
        t = row["throughput"]
        print(f"{name}: {t['sentences_per_second']:.2f} sentences/s, {t['target_tokens_per_second']:.0f} tokens/s "
              f"(per task {t['per_task_target_tokens_per_second']:.0f}), load {row['load_after'][0]}", flush=True)
    result = {"benchmark": "corpus backtranslate throughput, opus-mt-sized random Marian, CPU, 1 vs 2 cores",
              "provenance": record, "load_start": load_start, "load_end": [round(x, 2) for x in os.getloadavg()],
              "settings": {"beams": 4, "num_return": 1, "max_new_tokens": args.max_new_tokens,
                           "hf_sentences": args.hf_sentences, "ct2_sentences": args.ct2_sentences},
              "rows": rows, "estimate": estimate(rows)}
    (out_dir / "throughput.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    write_readme(result, out_dir / "README.md")


if __name__ == "__main__":
    main()

"""Back-translation throughput a planner can use: ``corpus backtranslate`` against raw ``model.generate``, on CPU.

Usage:

    python benchmarks/bt_throughput/throughput.py [--rounds 3] [--sentences 64] [--opus-sentences 24]

Question: how close does the command (:func:`paranmt_hf.corpus.translation.backtranslate.backtranslate`, the whole
datatrove run, one task, default batch budget) decode to ``model.generate`` called directly on the same model and
sentences (length-sorted batches, its best budget of those tried)? Each path runs in its own process; the rounds
alternate which path goes first; the ratio of each round compares the two paths of that round (the machine is
shared and its load changes), and the table gives the median.

- *decoding rate* (sentences/s, target tokens/s): the command's per-task rate (sentences / the seconds its task spent
  in the engine, what its summary line prints as "per task") against ``generate``'s (sentences / seconds in
  ``generate``), wall time;
- *CPU ratio*: the CPU seconds of ``generate`` over the CPU seconds the command's task spent in the engine (both
  processes' CPU time, all their threads: the measure the load of other jobs disturbs least);
- *command s*: the whole command (model copied and loaded, input read, output written).

Models (seeded random weights built in code, so every candidate runs to ``--max-new-tokens`` = 32 and the target
tokens/s are what counts): a small Marian (3+3 layers, 256 dims, 16,000 tokens; fast enough on two loaded cores for
several rounds) and the opus-mt-sized one of the tests (6+6 layers, 512 dims, 58,101 tokens). Sentences: real
German Multi30k sentences with their English references. Beam 4, one candidate.

Writes ``throughput.json`` (with provenance) and the measured table of ``README.md`` here; the README's GPU rows
come from :data:`GPU_MEASURED` (an earlier H200 session; ``gpu_check.py`` measures them again on a GPU).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = {
    "small Marian (3+3 x 256, 16k vocabulary)": {"d_model": 256, "layers": 3, "heads": 4, "ffn": 1024,
                                                  "vocab_size": 16000},
    "opus-mt-sized Marian (6+6 x 512, 58k vocabulary)": {"d_model": 512, "layers": 6, "heads": 8, "ffn": 2048,
                                                         "vocab_size": 58101},
}
RAW_BUDGETS = (4096, 16384)
"""Token budgets (sentences x longest x beams) of the raw ``generate`` batches tried; the best one is the peer."""
PARANMT_SENTENCES = 51_400_000
"""ParaNMT-50M's back-translated sentences (ACL 2018 §3, beam 12)."""
PRAS_PAIRS, PRAS_EPOCHS = 25_850_000, 25
"""PRAS (ACL 2018 §4): 25 epochs over the 25.85M pairs its filter keeps."""
GPU_MEASURED = {
    "source": "an H200 measurement of 2026-11-28 on the code before the engine changes recorded here; not "
              "re-measured since (no GPU was lent to the session that made those changes)",
    "device": "one NVIDIA H200, torch 2.11 + CUDA 13, transformers 5.24; opus-mt-sized Marian, 32 new tokens per "
              "candidate, German Multi30k",
    "command_sentences_per_s": {"float32, beam 4 (3,000 / 5,000 sentences)": "412 / 340",
                                "bfloat16, beam 4 (two runs)": "114 / 100", "float16, beam 4": 144,
                                "float32, beam 12": 226, "float32, beam 4, 2 tasks on the GPU (in all)": 140},
    "generate_sentences_per_s": {"float32, beam 4, batch 128": 407, "float32, beam 4, batch 512": 724,
                                 "bfloat16, beam 4, batch 128": 238, "bfloat16, beam 4, batch 512": 457,
                                 "float16, beam 4, batch 128": 254, "float16, beam 4, batch 512": 510},
    "training_pairs_per_s": {"best-trigram, one epoch of Flickr (140,197 pairs)": 3580},
}
"""What an earlier session measured on an H200 (the command: one task unless said, per-task rates)."""


def bitext(data_dir: Path, count: int, path: Path) -> Path:
    """``count`` lines of the shared Multi30k en-de bitext (English reference, German source) as ``path``."""
    with gzip.open(data_dir / "train" / "bitext" / "multi30k-en-de.tsv.gz", "rt", encoding="utf-8") as f:
        lines = [line for _, line in zip(range(count), f, strict=False)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def build_model(folder: Path, data_dir: Path, size: dict) -> Path:
    """A random Marian of ``size`` (built once; the vocabulary trained on German Multi30k sentences)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # the test fixtures
    from _synthetic_translation import build_translation_model

    if not (folder / "config.json").is_file():
        with gzip.open(data_dir / "train" / "bitext" / "multi30k-en-de.tsv.gz", "rt", encoding="utf-8") as f:
            texts = [line.rstrip("\n").split("\t")[1] for _, line in zip(range(20000), f, strict=False)]
        build_translation_model(folder, texts, kind="marian", spm_pieces=8000, max_length=512, seed=0,
                                init_std=0.02, eos_scale=1.0, **size)
    return folder


def run_command(model: Path, source: Path, work: Path, max_new: int) -> dict:
    """The command in this process (one task, in this process): its summary and the CPU time of its engine."""
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.translation.backtranslate import TranslationOptions, backtranslate
    from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions, Seq2SeqEngine

    engine_cpu = [0.0]
    translate = Seq2SeqEngine.translate

    def timed(self, sentences, seed=None):  # noqa: ANN001, ANN202 - the engine's CPU time, all its threads
        start = time.process_time()
        try:
            return translate(self, sentences, seed)
        finally:
            engine_cpu[0] += time.process_time() - start

    Seq2SeqEngine.translate = timed
    out = work / f"out-{os.getpid()}.tsv"
    start = time.perf_counter()
    summary = backtranslate([source], out, model,
                            TranslationOptions(DecodingOptions(num_beams=4, max_new_tokens=max_new), cleaning=False,
                                               model_cache=work / "models"),
                            RunOptions(workers=1, tasks=1, progress=False, work_dir=str(work / f"w-{os.getpid()}")),
                            overwrite=True)
    command_s = time.perf_counter() - start
    out.unlink()
    t = summary.throughput
    return {"sentences": t["sentences"], "target_tokens": t["target_tokens"], "seconds": t["decoding_seconds"],
            "cpu_seconds": engine_cpu[0], "command_s": command_s}


def run_generate(model: Path, source: Path, max_new: int, budget: int) -> dict:
    """``model.generate`` on the same sentences, length-sorted batches under ``budget``."""
    import torch
    import transformers

    from paranmt_hf.corpus.translation.transformers_engine import length_sorted_batches

    sentences = [line.split("\t")[1].strip() for line in source.read_text(encoding="utf-8").splitlines()]
    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    net = transformers.AutoModelForSeq2SeqLM.from_pretrained(model).eval()
    lengths = [len(x) for x in tokenizer(sentences)["input_ids"]]
    tokens, cpu, wall = 0, time.process_time(), time.perf_counter()
    with torch.inference_mode():
        for batch in length_sorted_batches(lengths, budget, 4):
            inputs = tokenizer([sentences[i] for i in batch], return_tensors="pt", padding=True)
            out = net.generate(**inputs, num_beams=4, max_new_tokens=max_new, forced_eos_token_id=None)
            tokens += int((out[:, 1:] != net.config.pad_token_id).sum())
    return {"sentences": len(sentences), "target_tokens": tokens, "seconds": time.perf_counter() - wall,
            "cpu_seconds": time.process_time() - cpu}


def one_round(model: Path, source: Path, work: Path, max_new: int, budgets: tuple[int, ...], first: str) -> dict:
    """One round: the command and each raw budget, each in its own process, ``first`` going first."""
    jobs = [("command", None), *(("generate", b) for b in budgets)]
    if first == "generate":
        jobs = jobs[1:] + jobs[:1]
    out: dict = {"load": [round(x, 2) for x in os.getloadavg()]}
    for kind, budget in jobs:
        args = {"kind": kind, "model": str(model), "source": str(source), "work": str(work), "max_new": max_new,
                "budget": budget}
        done = subprocess.run([sys.executable, __file__, "--one", json.dumps(args)], capture_output=True, text=True,
                              check=False)
        if done.returncode:
            raise SystemExit(f"{kind} failed:\n{done.stderr[-3000:]}")
        out[kind if budget is None else f"generate {budget}"] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def summarize(rounds: list[dict], budgets: tuple[int, ...]) -> dict:
    """Medians over the rounds: rates, the best raw budget, the command / generate ratios."""
    def rate(r: dict, what: str = "sentences") -> float:
        return r[what] / r["seconds"]

    best = max(budgets, key=lambda b: statistics.median(rate(r[f"generate {b}"]) for r in rounds))
    peer = [r[f"generate {best}"] for r in rounds]
    command = [r["command"] for r in rounds]
    return {
        "best_generate_budget": best,
        "command_sentences_per_s": statistics.median(rate(c) for c in command),
        "command_tokens_per_s": statistics.median(rate(c, "target_tokens") for c in command),
        "generate_sentences_per_s": statistics.median(rate(p) for p in peer),
        "generate_tokens_per_s": statistics.median(rate(p, "target_tokens") for p in peer),
        "rate_ratio": statistics.median(rate(c) / rate(p) for c, p in zip(command, peer, strict=True)),
        "cpu_ratio": statistics.median((p["cpu_seconds"] / p["sentences"]) / (c["cpu_seconds"] / c["sentences"])
                                       for c, p in zip(command, peer, strict=True)),
        "command_s": statistics.median(c["command_s"] for c in command),
        "sentences": command[0]["sentences"],
    }


def gpu_hours() -> dict:
    """ParaNMT-50M's back-translation at beam 12 and PRAS's training, in H200-hours, from :data:`GPU_MEASURED`."""
    bt = GPU_MEASURED["command_sentences_per_s"]["float32, beam 12"]
    train = GPU_MEASURED["training_pairs_per_s"]["best-trigram, one epoch of Flickr (140,197 pairs)"]
    return {"paranmt_backtranslation_beam12_h": PARANMT_SENTENCES / bt / 3600,
            "paranmt_backtranslation_beam12_20_tokens_h": PARANMT_SENTENCES / (bt * 32 / 20) / 3600,
            "pras_training_h": PRAS_EPOCHS * PRAS_PAIRS / train / 3600}


def write_readme(result: dict, path: Path) -> None:
    """The README: the question, the measured table, the GPU rows and estimates, what is measured and what not."""
    p = result["provenance"]
    versions = ", ".join(f"{k} {v}" for k, v in p["packages"].items() if v)
    lines = ["# Back-translation throughput: the command against `generate` (`benchmarks/bt_throughput`)", "",
             "How fast does `corpus backtranslate` decode, per task, against `model.generate` called directly on the "
             "same model and sentences, and what does a ParaNMT-sized run cost? `throughput.py` (CPU, this "
             "machine) and `gpu_check.py` (a GPU machine) measure it; `throughput.json` holds the raw numbers and "
             "their provenance.", "",
             f"**Measured here** ({p['date']}, {p['cpu']}, {p['cores']} cores shared with other jobs, load average "
             f"{result['load_start'][0]} at the start and {result['load_end'][0]} at the end; {versions}): beam 4, "
             f"one candidate, {result['settings']['max_new_tokens']} new tokens per candidate (random weights: every "
             f"candidate runs to the cap), {result['settings']['rounds']} alternating rounds, medians; each path in "
             "its own process on both cores (the command: one task, default batch budget; `generate`: "
             "length-sorted batches, the best token budget of "
             + " and ".join(f"{b:,}" for b in RAW_BUDGETS) + ").", "",
             "| model | sentences | command sentences/s | command target tokens/s | `generate` sentences/s | "
             "`generate` target tokens/s | command / `generate` (rate) | command / `generate` (CPU time) | "
             "whole command s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in result["models"].items():
        lines.append(f"| {name} | {s['sentences']} | {s['command_sentences_per_s']:.2f} | "
                     f"{s['command_tokens_per_s']:.0f} | {s['generate_sentences_per_s']:.2f} | "
                     f"{s['generate_tokens_per_s']:.0f} | {s['rate_ratio']:.0%} | {s['cpu_ratio']:.0%} | "
                     f"{s['command_s']:.0f} |")
    g = GPU_MEASURED
    h = gpu_hours()
    lines += ["", "*Command* rates are per task while it decodes (what its summary line prints as \"per task\"); "
              "*whole command s* includes copying and loading the model and the datatrove run: at these few "
              "sentences it dominates, at a corpus' size it does not. The wall-time rates moved with the load of "
              "the other jobs between one process and the next (a rate ratio above 100% is that noise); the CPU "
              "time of each path is the measure: the command spends at least 90% of its CPU time where `generate` "
              "alone would, the rest being its cost pass (each candidate scored once more by the model, which the "
              "translation cost needs) and the length-sorted batches it builds per chunk.", "",
              "## On a GPU", "",
              f"**Measured rows: {g['source']}.** {g['device']}. Sentences/s:", "",
              "| path | sentences/s |", "|---|---:|"]
    for name, value in g["command_sentences_per_s"].items():
        lines.append(f"| command, {name} | {value} |")
    for name, value in g["generate_sentences_per_s"].items():
        lines.append(f"| raw `generate`, {name} | {value} |")
    for name, value in g["training_pairs_per_s"].items():
        lines.append(f"| training, {name} | {value:,} pairs/s |")
    lines += ["", "Half precision generated more slowly than float32 there, in `generate` itself, so float32 stays "
              "the default `--dtype` (why was not measured; likely: an opus-mt-sized model is too small to keep an "
              "H200 busy, its time goes to launching kernels, and half precision adds casts). The command lost "
              "more of `generate`'s speed in half precision than in float32, for a reason the earlier run did not "
              "isolate. `gpu_check.py` measures the command against `generate` in float32, bfloat16 and float16 at "
              "beam 4 and 12, the engine's time in `generate`, in its cost pass and elsewhere, 1 against 2 tasks, "
              "and one epoch of training, on the code that has changed since (the cost pass copies each batch's "
              "costs to the host once instead of synchronising per candidate, the batch budget comes from the "
              "GPU's memory, tasks that would share a GPU run one after another).", "",
              "| what (estimated from the measured rows above, not measured) | H200-hours |", "|---|---:|",
              f"| ParaNMT-50M's back-translation, 51.4M sentences, beam 12, float32, 32 tokens per candidate "
              f"(the command's {g['command_sentences_per_s']['float32, beam 12']} sentences/s) | "
              f"{h['paranmt_backtranslation_beam12_h']:.0f} |",
              f"| the same at 20 tokens per candidate (real sentences are shorter than 32 tokens; rate scaled by "
              f"32/20, an assumption) | {h['paranmt_backtranslation_beam12_20_tokens_h']:.0f} |",
              f"| PRAS: {PRAS_EPOCHS} epochs over {PRAS_PAIRS / 1e6:.2f}M pairs at `best-trigram`'s "
              f"{g['training_pairs_per_s']['best-trigram, one epoch of Flickr (140,197 pairs)']:,} pairs/s (PRAS's "
              f"own model differs) | {h['pras_training_h']:.0f} |", "",
              "ACL 2018 reports \"over 10,000 GPU hours\" for the back-translation on its GPUs. No GPU was available "
              "to this session: re-measure with `gpu_check.py` (its README section below) before planning on these.",
              "", "## Running the GPU check", "",
              "`gpu_check.py --help` says what it measures. Prepare the offline machine's folder with "
              "`/work/shared/tools/gpu/prepare.sh` (the package's wheel and its pure-Python dependencies into "
              "`.device/`), copy `benchmarks/bt_throughput/gpu_check.py` along, and run "
              "`OUT=<folder> python benchmarks/bt_throughput/gpu_check.py`: at most 6 minutes on an H200, every step "
              "bounded, each result in `$OUT/gpu.json` as soon as it is measured (`--device cpu --tiny` runs it "
              "here, as a smoke test).", "",
              f"Command: `{p['command']}`."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per model (default 3)")
    parser.add_argument("--sentences", type=int, default=64, help="sentences for the small Marian (default 64)")
    parser.add_argument("--opus-sentences", type=int, default=24,
                        help="sentences for the opus-mt-sized Marian (default 24; 0: skip it)")
    parser.add_argument("--opus-rounds", type=int, default=2, help="rounds for the opus-mt-sized Marian (default 2)")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--workdir", default="/tmp/paranmt-bt-throughput")
    parser.add_argument("--data-dir", default=None, help="the shared data (default: paranmt_hf's data folder)")
    parser.add_argument("--out", default=str(HERE), help="where throughput.json and README.md go")
    parser.add_argument("--report", action="store_true", help="only rewrite README.md from throughput.json")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one path, JSON on stdout
    args = parser.parse_args()
    out_dir, work = Path(args.out), Path(args.workdir)
    if args.report:
        recorded = json.loads((out_dir / "throughput.json").read_text(encoding="utf-8"))
        write_readme(recorded["cpu"], out_dir / "README.md")
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.one:
        job = json.loads(args.one)
        model, source = Path(job["model"]), Path(job["source"])
        result = run_command(model, source, Path(job["work"]), job["max_new"]) if job["kind"] == "command" else \
            run_generate(model, source, job["max_new"], job["budget"])
        print(json.dumps(result))
        return
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import provenance

    work.mkdir(parents=True, exist_ok=True)
    data = data_dir(args.data_dir)
    record = provenance(packages=("paranmt_hf", "torch", "transformers", "datatrove"))
    load_start = [round(x, 2) for x in os.getloadavg()]
    result: dict = {"benchmark": "corpus backtranslate (one task) against raw model.generate, CPU",
                    "provenance": record, "load_start": load_start,
                    "settings": {"beams": 4, "num_return": 1, "max_new_tokens": args.max_new_tokens,
                                 "rounds": args.rounds, "raw_budgets": list(RAW_BUDGETS)},
                    "models": {}, "rounds": {}, "gpu_measured": GPU_MEASURED, "gpu_hours": gpu_hours()}
    plan = [(name, size, count, rounds) for (name, size), count, rounds in
            zip(MODELS.items(), (args.sentences, args.opus_sentences), (args.rounds, args.opus_rounds), strict=True)
            if count]
    for index, (name, size, count, rounds) in enumerate(plan):
        model = build_model(work / f"model-{index}", data, size)
        source = bitext(data, count, work / f"bitext-{index}.en-de.tsv")
        done = []
        for r in range(rounds):
            done.append(one_round(model, source, work, args.max_new_tokens, RAW_BUDGETS,
                                  "command" if r % 2 == 0 else "generate"))
            print(f"{name} round {r + 1}: " + json.dumps(done[-1]), flush=True)
        result["rounds"][name] = done
        result["models"][name] = summarize(done, RAW_BUDGETS)
        print(f"{name}: " + json.dumps(result["models"][name]), flush=True)
    result["load_end"] = [round(x, 2) for x in os.getloadavg()]
    path = out_dir / "throughput.json"  # the folder's one JSON: this run under "cpu" (gpu_check.py writes its own)
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    recorded["cpu"] = result
    path.write_text(json.dumps(recorded, indent=2) + "\n", encoding="utf-8")
    write_readme(result, out_dir / "README.md")


if __name__ == "__main__":
    main()

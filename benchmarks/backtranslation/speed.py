"""Back-translation speed on CPU: transformers vs CTranslate2 (float32, int8), 1 and 2 threads, and paranmt_hf's cost.

Usage:

    python benchmarks/backtranslation/speed.py [--sentences 256] [--hf-sentences 48] [--rounds 2] [--beams 4]

The model is opus-mt-sized (``MarianMTModel``, 6+6 layers, 512 dimensions, 8 heads, 58,101 tokens: the size of
Helsinki-NLP/opus-mt-*-en) with seeded random weights and a SentencePiece vocabulary trained on the German side of
the shared Multi30k bitext: only the speed means anything (random weights rarely stop, so every candidate runs to
--max-new-tokens and every engine generates the same number of tokens). The sentences are real German sentences
from that bitext (--hf-sentences of them for the slow transformers rows, --sentences for the others; rates are per
sentence, batches have the same token budget). Every measurement runs in its own process pinned with ``taskset``
(core 1 for one thread, cores 0-1 for two), the configurations interleaved round after round; the best round is
reported (the machine is shared: the load average before and after each run is recorded), with the CPU seconds of
each process beside the wall time. Translation rates exclude loading the model; the end-to-end comparison of the
whole command with CTranslate2 called directly includes it on both sides.

Rows (all with the same sentences, beam and length):

- ``transformers generate``: ``model.generate`` on length-sorted batches, the candidates decoded (no cost);
- ``paranmt_hf transformers``: :class:`~paranmt_hf.corpus.translation.transformers_engine.TransformersTranslator` (+
  the cost, by
  scoring the candidates);
- ``ctranslate2 direct``: the tokenizer, ``Translator.translate_batch`` (sorted, token-budget batches) and decoding,
  as a user would call CTranslate2 themselves (no cost);
- ``ctranslate2 direct + scores``: the same plus ``Translator.score_batch`` (what the cost needs);
- ``paranmt_hf ctranslate2``: :class:`~paranmt_hf.corpus.translation.ctranslate2_engine.CTranslate2Translator`;
- ``paranmt_hf backtranslate (ctranslate2)``: the whole command,
  :func:`paranmt_hf.corpus.translation.backtranslate.backtranslate`
  (datatrove run, reading the bitext, writing the TSV, in one task), model load included as for the direct row.

Records the run under ``speed`` in ``backtranslation.json`` here (with its provenance) and prints its table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CONFIGS = [
    ("transformers generate", "hf-direct", "float32"),
    ("paranmt_hf transformers", "hf-package", "float32"),
    ("ctranslate2 direct", "ct2-direct", "float32"),
    ("ctranslate2 direct + scores", "ct2-direct-scores", "float32"),
    ("paranmt_hf ctranslate2", "ct2-package", "float32"),
    ("ctranslate2 direct", "ct2-direct", "int8"),
    ("ctranslate2 direct + scores", "ct2-direct-scores", "int8"),
    ("paranmt_hf ctranslate2", "ct2-package", "int8"),
    ("paranmt_hf backtranslate (ctranslate2)", "ct2-command", "int8"),
]


def sentences(data_dir: Path, count: int) -> list[str]:
    """Real German sentences (the non-English side of the shared Multi30k en-de bitext), the first ``count``."""
    with gzip.open(data_dir / "train" / "bitext" / "multi30k-en-de.tsv.gz", "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t")[1] for _, line in zip(range(count), f, strict=False)]


def build_model(work: Path, data_dir: Path) -> Path:
    """The opus-mt-sized random Marian model (built once)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # the test fixtures
    from _synthetic_translation import OPUS_MT_SIZE, build_translation_model

    folder = work / "opus-mt-size"
    if not (folder / "config.json").is_file():
        size = {k: OPUS_MT_SIZE[k] for k in ("d_model", "layers", "heads", "ffn", "vocab_size")}
        build_translation_model(folder, sentences(data_dir, 20000), kind="marian", spm_pieces=8000,
                                max_length=512, seed=0, init_std=0.02, eos_scale=1.0, **size)
    return folder


class Clock:
    """Wall and CPU seconds since it was made, and of the part after :meth:`loaded`."""

    def __init__(self) -> None:
        self.start, self.cpu = time.perf_counter(), time.process_time()
        self.load = self.load_cpu = 0.0

    def loaded(self) -> None:
        """The model is loaded: what follows is translation."""
        self.load, self.load_cpu = time.perf_counter() - self.start, time.process_time() - self.cpu

    def result(self) -> dict:
        """``total_s``, ``wall_s`` (after loading), ``cpu_s`` (after loading)."""
        total, cpu = time.perf_counter() - self.start, time.process_time() - self.cpu
        return {"total_s": total, "wall_s": total - self.load, "cpu_s": cpu - self.load_cpu}


def measure(kind: str, compute: str, model: Path, texts: list[str], beams: int, max_new: int, threads: int,
            work: Path) -> dict:
    """One measurement in this process: seconds (with and without loading), CPU seconds, sentences, tokens."""
    import torch

    torch.set_num_threads(threads)
    from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions

    options = DecodingOptions(num_beams=beams, num_return=1, max_new_tokens=max_new, batch_tokens=4096)
    clock = Clock()
    if kind == "hf-direct":
        tokens = _hf_direct(model, texts, options, clock)
    elif kind == "hf-package":
        from paranmt_hf.corpus.translation.transformers_engine import TransformersOptions, TransformersTranslator

        translator = TransformersTranslator(model, options, TransformersOptions(threads=threads))
        clock.loaded()
        tokens = sum(h[0].tokens for h in translator.translate(texts).hypotheses)
    elif kind.startswith("ct2-direct"):
        tokens = _ct2_direct(model, texts, options, compute, threads, work, kind.endswith("scores"), clock)
    elif kind == "ct2-package":
        from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options, CTranslate2Translator

        translator = CTranslate2Translator(model, options, CTranslate2Options(compute_type=compute, threads=threads,
                                                                              cache_dir=str(work / "ct2")))
        clock.loaded()
        tokens = sum(h[0].tokens for h in translator.translate(texts).hypotheses)
    else:
        tokens = _command(model, texts, options, compute, threads, work)
    row = clock.result()
    if kind == "ct2-command":  # the command loads inside: only its end-to-end time compares
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        row["cpu_s"] += children.ru_utime + children.ru_stime
    return row | {"sentences": len(texts), "target_tokens": tokens}


def _hf_direct(model_dir: Path, texts: list[str], options: object, clock: Clock) -> int:
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from paranmt_hf.corpus.translation.transformers_engine import length_sorted_batches

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    clock.loaded()
    lengths = [len(x) for x in tokenizer(texts)["input_ids"]]
    tokens = 0
    with torch.inference_mode():
        for batch in length_sorted_batches(lengths, options.batch_tokens, options.num_beams):
            enc = tokenizer([texts[i] for i in batch], return_tensors="pt", padding=True)
            out = model.generate(**enc, num_beams=options.num_beams, max_new_tokens=options.max_new_tokens)
            tokenizer.batch_decode(out, skip_special_tokens=True)
            tokens += int((out[:, 1:] != model.config.pad_token_id).sum())
    return tokens


def _ct2_direct(model_dir: Path, texts: list[str], options: object, compute: str, threads: int, work: Path,
                scores: bool, clock: Clock) -> int:
    import ctranslate2
    from transformers import AutoTokenizer

    from paranmt_hf.corpus.translation.ctranslate2_engine import converted_model

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    translator = ctranslate2.Translator(str(converted_model(str(model_dir), work / "ct2")), compute_type=compute,
                                        intra_threads=threads)
    clock.loaded()
    source = [tokenizer.convert_ids_to_tokens(ids) for ids in tokenizer(texts)["input_ids"]]
    results = translator.translate_batch(source, beam_size=options.num_beams, max_batch_size=options.batch_tokens
                                         // options.num_beams, batch_type="tokens",
                                         max_decoding_length=options.max_new_tokens)
    hypotheses = [r.hypotheses[0] for r in results]
    [tokenizer.decode(tokenizer.convert_tokens_to_ids(h), skip_special_tokens=True) for h in hypotheses]
    if scores:
        translator.score_batch(source, hypotheses, max_batch_size=options.batch_tokens, batch_type="tokens")
    return sum(len(h) for h in hypotheses)


def _command(model_dir: Path, texts: list[str], options: object, compute: str, threads: int, work: Path) -> int:
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.translation.backtranslate import TranslationOptions, backtranslate
    from paranmt_hf.corpus.translation.ctranslate2_engine import CTranslate2Options

    bitext = work / "speed-en-de.tsv"
    bitext.write_text("".join(f"reference {i}\t{t}\n" for i, t in enumerate(texts)), encoding="utf-8")
    out = work / "speed-out.tsv"
    backtranslate([bitext], out, str(model_dir), TranslationOptions(options, CTranslate2Options(compute_type=compute)),
                  RunOptions(tasks=1, workers=1, threads=threads, progress=False, chunk_bytes=1 << 30,
                             work_dir=str(work / "speed-work"), restart=True),
                  overwrite=True)
    return sum(1 for _ in open(out, encoding="utf-8")) - 1  # (sentences; the tokens are the same as direct)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--hf-sentences", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--workdir", default="/tmp/paranmt-backtranslate-speed")
    parser.add_argument("--data-dir", default=os.environ.get("PARANMT_HF_DATA", str(ROOT.parent / "shared" / "data")))
    parser.add_argument("--json", default=str(HERE / "backtranslation.json"), help="where to record the run")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one measurement, JSON on stdout
    args = parser.parse_args()
    work, data = Path(args.workdir), Path(args.data_dir)
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    texts = sentences(data, args.sentences)
    if args.one:
        kind, compute, threads = args.one.split(":")
        model = work / "opus-mt-size"
        print(json.dumps(measure(kind, compute, model, texts, args.beams, args.max_new_tokens, int(threads), work)))
        return
    model = build_model(work, data)
    from paranmt_hf.corpus.translation.ctranslate2_engine import converted_model
    from paranmt_hf.utils.provenance import provenance

    converted_model(str(model), work / "ct2")  # once, before timing
    record = provenance(packages=("paranmt_hf", "torch", "transformers", "ctranslate2", "datatrove", "numpy"))
    runs: list[dict] = []
    for round_ in range(args.rounds):
        for threads in map(int, args.threads.split(",")):
            cores = "1" if threads == 1 else "0,1"
            for name, kind, compute in CONFIGS:
                load_before = os.getloadavg()
                count = args.hf_sentences if kind.startswith("hf") else args.sentences
                out = subprocess.run(["taskset", "-c", cores, sys.executable, __file__, "--one",
                                      f"{kind}:{compute}:{threads}", "--sentences", str(count), "--beams",
                                      str(args.beams), "--max-new-tokens", str(args.max_new_tokens), "--workdir",
                                      str(work), "--data-dir", str(data)],
                                     capture_output=True, text=True, check=True)
                row = json.loads(out.stdout.strip().splitlines()[-1])
                row.update(name=name, kind=kind, compute=compute, threads=threads, round=round_,
                           load_before=[round(x, 2) for x in load_before],
                           load_after=[round(x, 2) for x in os.getloadavg()])
                runs.append(row)
                print(f"round {round_} {name} {compute} x{threads}: {row['sentences'] / row['wall_s']:.2f} sent/s "
                      f"(cpu {row['cpu_s']:.1f} s, load {row['load_after'][0]})", flush=True)
    best = {}
    for row in runs:
        key = (row["name"], row["compute"], row["threads"])
        if key not in best or row["wall_s"] < best[key]["wall_s"]:
            best[key] = row
    rows = []
    for (name, compute, threads), row in best.items():
        same = [r for r in runs if (r["name"], r["compute"], r["threads"]) == (name, compute, threads)]
        rows.append({"name": name, "compute": compute, "threads": threads,
                     "sentences_per_s": row["sentences"] / row["wall_s"],
                     "target_tokens_per_s": row["target_tokens"] / row["wall_s"],
                     "sentences_per_cpu_s": row["sentences"] / row["cpu_s"],
                     "end_to_end_sentences_per_s": row["sentences"] / row["total_s"],
                     "wall_s_rounds": [round(r["wall_s"], 2) for r in same],
                     "median_wall_s": round(statistics.median(r["wall_s"] for r in same), 2),
                     "load_before_after": [row["load_before"], row["load_after"]]})
    result = {"benchmark": "back-translation speed, opus-mt-sized random Marian model, CPU",
              "provenance": record, "settings": {"sentences": args.sentences, "beams": args.beams,
                                                 "num_return": 1, "max_new_tokens": args.max_new_tokens,
                                                 "batch_tokens": 4096, "rounds": args.rounds},
              "rows": rows, "runs": runs, "ratios": ratios(rows)}
    record(result, Path(args.json))
    print(table(result))
    print(json.dumps(result["ratios"], indent=2))


def ratios(rows: list[dict]) -> dict:
    """The targets: CTranslate2 vs transformers at the same beam; what paranmt_hf adds over CTranslate2 directly.

    Each ratio twice: from wall time (what a user waits for) and from the process's CPU seconds (robust to the other
    jobs of a shared machine).
    """
    out: dict[str, dict] = {}
    for basis, field in (("wall", "sentences_per_s"), ("cpu", "sentences_per_cpu_s")):
        speed = {(r["name"], r["compute"], r["threads"]): r[field] for r in rows}
        part = out.setdefault(basis, {})
        for threads in sorted({r["threads"] for r in rows}):
            label = f"{threads} thread{'s' if threads > 1 else ''}"
            hf = speed.get(("transformers generate", "float32", threads))
            hf_package = speed.get(("paranmt_hf transformers", "float32", threads))
            if hf and hf_package:
                part[f"transformers generate / paranmt_hf transformers - 1 ({label})"] = round(hf / hf_package - 1, 3)
            for compute in ("float32", "int8"):
                package = speed.get(("paranmt_hf ctranslate2", compute, threads))
                direct = speed.get(("ctranslate2 direct", compute, threads))
                scored = speed.get(("ctranslate2 direct + scores", compute, threads))
                key = f"{compute}, {label}"
                if hf and package:
                    part[f"paranmt_hf ctranslate2 / transformers generate ({key})"] = round(package / hf, 2)
                if direct and package:
                    part[f"ctranslate2 direct / paranmt_hf ctranslate2 - 1 ({key})"] = round(direct / package - 1, 3)
                if scored and package:
                    part[f"ctranslate2 direct + scores / paranmt_hf ctranslate2 - 1 ({key})"] = \
                        round(scored / package - 1, 3)
    end_to_end = {(r["name"], r["compute"], r["threads"]): r["end_to_end_sentences_per_s"] for r in rows}
    part = out.setdefault("wall, end to end with loading", {})
    for threads in sorted({r["threads"] for r in rows}):
        command = end_to_end.get(("paranmt_hf backtranslate (ctranslate2)", "int8", threads))
        for name in ("ctranslate2 direct", "ctranslate2 direct + scores"):
            direct = end_to_end.get((name, "int8", threads))
            if command and direct:
                part[f"{name} / paranmt_hf backtranslate - 1 (int8, {threads} thread"
                     f"{'s' if threads > 1 else ''})"] = round(direct / command - 1, 3)
    return out


def table(result: dict) -> str:
    """The run's table for README.md."""
    lines = ["| what | compute | threads | sentences/s | target tokens/s | sentences/CPU-s | end to end with "
             "loading, sentences/s |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in result["rows"]:
        lines.append(f"| {r['name']} | {r['compute']} | {r['threads']} | {r['sentences_per_s']:.2f} | "
                     f"{r['target_tokens_per_s']:.0f} | {r['sentences_per_cpu_s']:.2f} | "
                     f"{r['end_to_end_sentences_per_s']:.2f} |")
    return "\n".join(lines)


def record(result: dict, path: Path) -> None:
    """Record ``result`` under ``speed`` in the folder's one JSON (the other keys are older records)."""
    from paranmt_hf.utils.atomic import atomic_write_json

    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    atomic_write_json(path, {**recorded, "speed": result}, indent=1)


if __name__ == "__main__":
    main()

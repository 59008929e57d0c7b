"""Back-translation speed on CPU: transformers vs CTranslate2 (float32, int8), the package vs calling each directly.

Usage:

    python benchmarks/backtranslation/speed.py [--sentences 256] [--hf-sentences 48] [--rounds 2] [--beams 4]

The model is opus-mt-sized (``marian.py``: seeded random weights, so every candidate runs to --max-new-tokens and
only the speed means anything); the sentences are real German ones of the shared Multi30k bitext (--hf-sentences of
them for the slow transformers rows). Every measurement runs in its own process pinned with ``taskset`` (core 1 for
one thread, cores 0-1 for two), the configurations interleaved round after round; the table reports the best round
and the median CPU-time rate, with the load average before and after each run in the JSON.

Rows (same sentences, beam and length; rates exclude loading the model, "end to end" includes it):

- ``transformers generate``: ``model.generate`` on length-sorted token-budget batches, decoded (no cost);
- ``paranmt_hf transformers``: ``TransformersTranslator`` (+ each candidate's cost, by scoring it);
- ``ctranslate2 direct``: the tokenizer, ``Translator.translate_batch`` (token-budget batches) and decoding, as a
  user would call CTranslate2 (no cost); ``+ scores``: plus ``Translator.score_batch`` (what the cost needs);
- ``paranmt_hf ctranslate2``: ``CTranslate2Translator``;
- ``paranmt_hf backtranslate (engine)``: the whole command (datatrove run, one task in this process, bitext read,
  TSV written); its rates are those of its engine's ``translate`` calls (its summary's "per task").

Records the run under ``speed`` in ``backtranslation.json`` here (with its provenance) and prints its table and
ratios (from wall time, from the processes' CPU seconds, which other jobs disturb least, and end to end).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from marian import BITEXT, bitext_lines, build_model, generate, german

HERE = Path(__file__).resolve().parent
CONFIGS = [
    ("transformers generate", "hf-direct", "float32"),
    ("paranmt_hf transformers", "hf-package", "float32"),
    ("paranmt_hf backtranslate (transformers)", "hf-command", "float32"),
    *((name, kind, compute) for compute in ("float32", "int8") for name, kind in (
        ("ctranslate2 direct", "ct2-direct"), ("ctranslate2 direct + scores", "ct2-direct-scores"),
        ("paranmt_hf ctranslate2", "ct2-package"))),
    ("paranmt_hf backtranslate (ctranslate2)", "ct2-command", "int8"),
]
RATIOS = [(("paranmt_hf ctranslate2", c), ("transformers generate", "float32")) for c in ("float32", "int8")] + [
    (("paranmt_hf transformers", "float32"), ("transformers generate", "float32")),
    (("paranmt_hf backtranslate (transformers)", "float32"), ("transformers generate", "float32")),
    *((("paranmt_hf ctranslate2", c), (d, c)) for c in ("float32", "int8")
      for d in ("ctranslate2 direct", "ctranslate2 direct + scores")),
    (("paranmt_hf backtranslate (ctranslate2)", "int8"), ("ctranslate2 direct", "int8")),
]
"""(row, peer) pairs, each row named (name, compute): the row's rate over its peer's, per thread count."""


def measure(kind: str, compute: str, model: Path, texts: list[str], beams: int, max_new: int, threads: int,
            work: Path) -> dict:
    """One measurement in this process: seconds with and without loading, CPU seconds, sentences, target tokens."""
    import torch

    from paranmt_hf.corpus.translation.transformers_engine import DecodingOptions

    torch.set_num_threads(threads)
    options = DecodingOptions(num_beams=beams, num_return=1, max_new_tokens=max_new, batch_tokens=4096)
    start = time.perf_counter()
    if kind.endswith("command"):
        return _command("ctranslate2" if kind.startswith("ct2") else "transformers", model, texts, options,
                        compute, threads, work) | {"total_s": time.perf_counter() - start}
    if kind == "hf-direct":
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from paranmt_hf.corpus.translation.transformers_engine import length_sorted_batches

        tokenizer, net = AutoTokenizer.from_pretrained(model), AutoModelForSeq2SeqLM.from_pretrained(model).eval()
        loaded, loaded_cpu = time.perf_counter(), time.process_time()
        lengths = [len(x) for x in tokenizer(texts)["input_ids"]]
        batches = length_sorted_batches(lengths, options.batch_tokens, beams)
        tokens = generate(net, tokenizer, ([texts[i] for i in batch] for batch in batches), beams, max_new)
    elif kind.startswith("ct2-direct"):
        import ctranslate2
        from transformers import AutoTokenizer

        from paranmt_hf.corpus.translation.ctranslate2_engine import converted_model

        tokenizer = AutoTokenizer.from_pretrained(model)
        translator = ctranslate2.Translator(str(converted_model(str(model), work / "ct2")), compute_type=compute,
                                            intra_threads=threads)
        loaded, loaded_cpu = time.perf_counter(), time.process_time()
        source = [tokenizer.convert_ids_to_tokens(ids) for ids in tokenizer(texts)["input_ids"]]
        results = translator.translate_batch(source, beam_size=beams, max_batch_size=options.batch_tokens // beams,
                                             batch_type="tokens", max_decoding_length=max_new)
        best = [r.hypotheses[0] for r in results]
        [tokenizer.decode(tokenizer.convert_tokens_to_ids(h), skip_special_tokens=True) for h in best]
        if kind.endswith("scores"):
            translator.score_batch(source, best, max_batch_size=options.batch_tokens, batch_type="tokens")
        tokens = sum(len(h) for h in best)
    else:
        from paranmt_hf.corpus.translation.engines import engine_options, get_engine

        engine = "transformers" if kind == "hf-package" else "ctranslate2"
        settings = {"threads": threads} if engine == "transformers" else {
            "compute_type": compute, "threads": threads, "cache_dir": str(work / "ct2")}
        translator = get_engine(engine)(model, options, engine_options(engine, settings))
        loaded, loaded_cpu = time.perf_counter(), time.process_time()
        tokens = sum(h[0].tokens for h in translator.translate(texts).hypotheses)
    end, end_cpu = time.perf_counter(), time.process_time()
    return {"total_s": end - start, "wall_s": end - loaded, "cpu_s": end_cpu - loaded_cpu, "sentences": len(texts),
            "target_tokens": tokens}


def _command(engine: str, model: Path, texts: list[str], options: object, compute: str, threads: int,
             work: Path) -> dict:
    """The whole command, one task in this process; the wall and CPU seconds of its engine's ``translate`` calls."""
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.translation.backtranslate import TranslationOptions, backtranslate
    from paranmt_hf.corpus.translation.engines import engine_options
    from paranmt_hf.corpus.translation.transformers_engine import Seq2SeqEngine

    spent = {"wall_s": 0.0, "cpu_s": 0.0}
    translate = Seq2SeqEngine.translate

    def timed(self, sentences, seed=None):  # noqa: ANN001, ANN202 - both engines' translate, timed
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return translate(self, sentences, seed)
        finally:
            spent["wall_s"] += time.perf_counter() - wall
            spent["cpu_s"] += time.process_time() - cpu

    Seq2SeqEngine.translate = timed  # this measuring process only
    bitext, out = work / f"speed-{os.getpid()}.en-de.tsv", work / f"speed-{os.getpid()}-out.tsv"
    bitext.write_text("".join(f"reference {i}\t{t}\n" for i, t in enumerate(texts)), encoding="utf-8")
    settings = {"compute_type": compute} if engine == "ctranslate2" else {}
    translation = TranslationOptions(decoding=options, engine=engine_options(engine, settings), cleaning=False,
                                     model_cache=work / "models")
    summary = backtranslate([bitext], out, str(model), translation,
                            RunOptions(tasks=1, workers=1, threads=threads, progress=False, chunk_bytes=1 << 30,
                                       work_dir=str(work / f"speed-work-{os.getpid()}"), restart=True),
                            overwrite=True)
    out.unlink()
    return spent | {"sentences": summary.throughput["sentences"],
                    "target_tokens": summary.throughput["target_tokens"]}


def summarize(runs: list[dict]) -> list[dict]:
    """One row per configuration: the best round's rates, the median CPU-time rate, the wall time of each round."""
    rows = []
    for key in dict.fromkeys((r["name"], r["compute"], r["threads"]) for r in runs):
        same = [r for r in runs if (r["name"], r["compute"], r["threads"]) == key]
        best = min(same, key=lambda r: r["wall_s"])
        rows.append(dict(zip(("name", "compute", "threads"), key, strict=True)) | {
            "sentences_per_s": best["sentences"] / best["wall_s"],
            "target_tokens_per_s": best["target_tokens"] / best["wall_s"],
            "sentences_per_cpu_s": statistics.median(r["sentences"] / r["cpu_s"] for r in same),
            "end_to_end_sentences_per_s": best["sentences"] / best["total_s"],
            "wall_s_rounds": [round(r["wall_s"], 2) for r in same],
            "load_before_after": [best["load_before"], best["load_after"]]})
    return rows


def ratios(rows: list[dict]) -> dict:
    """Each pair of :data:`RATIOS` per thread count: from wall time, CPU time, and end to end with loading."""
    out: dict[str, dict] = {}
    for basis, field in (("wall", "sentences_per_s"), ("cpu", "sentences_per_cpu_s"),
                         ("end to end", "end_to_end_sentences_per_s")):
        rate = {(r["name"], r["compute"], r["threads"]): r[field] for r in rows}
        for threads in sorted({r["threads"] for r in rows}):
            label = f"{threads} thread{'s' * (threads > 1)}"
            for row, peer in RATIOS:
                if (a := rate.get((*row, threads))) and (b := rate.get((*peer, threads))):
                    out.setdefault(basis, {})[f"{' '.join(row)} / {' '.join(peer)} ({label})"] = round(a / b, 3)
    return out


def table(rows: list[dict]) -> str:
    """The run's table for README.md."""
    lines = ["| what | compute | threads | sentences/s | target tokens/s | sentences/CPU-s | end to end with "
             "loading, sentences/s |", "|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['name']} | {r['compute']} | {r['threads']} | {r['sentences_per_s']:.2f} | "
              f"{r['target_tokens_per_s']:.0f} | {r['sentences_per_cpu_s']:.2f} | "
              f"{r['end_to_end_sentences_per_s']:.2f} |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--hf-sentences", type=int, default=48, help="for the transformers rows (default 48)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--only", default=None, help="comma-separated kinds to run (default: all), e.g. "
                        "hf-direct,hf-command: " + ", ".join(dict.fromkeys(k for _, k, _ in CONFIGS)))
    parser.add_argument("--workdir", default="/tmp/paranmt-backtranslate-speed")
    parser.add_argument("--data-dir", default=None, help="the shared data (default: paranmt_hf's data folder)")
    parser.add_argument("--json", default=str(HERE / "backtranslation.json"), help="where to record the run")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one measurement, JSON on stdout
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from paranmt_hf.utils.paths import data_dir

    work, data = Path(args.workdir), data_dir(args.data_dir)
    work.mkdir(parents=True, exist_ok=True)
    model = work / "opus-mt-size"
    if args.one:
        kind, compute, threads = args.one.split(":")
        texts = german(bitext_lines(data / BITEXT, args.sentences))
        print(json.dumps(measure(kind, compute, model, texts, args.beams, args.max_new_tokens, int(threads), work)))
        return
    from paranmt_hf.corpus.translation.ctranslate2_engine import converted_model
    from paranmt_hf.utils.provenance import provenance, update_record

    build_model(model, german(bitext_lines(data / BITEXT, 20000)))
    converted_model(str(model), work / "ct2")  # once, before timing
    record = provenance(packages=("paranmt_hf", "torch", "transformers", "ctranslate2", "datatrove", "numpy"))
    only = set(args.only.split(",")) if args.only else None
    runs: list[dict] = []
    for round_ in range(args.rounds):
        for threads in map(int, args.threads.split(",")):
            for name, kind, compute in (c for c in CONFIGS if only is None or c[1] in only):
                load_before = [round(x, 2) for x in os.getloadavg()]
                count = args.hf_sentences if kind.startswith("hf") else args.sentences
                out = subprocess.run(["taskset", "-c", "1" if threads == 1 else "0,1", sys.executable, __file__,
                                      "--one", f"{kind}:{compute}:{threads}", "--sentences", str(count), "--beams",
                                      str(args.beams), "--max-new-tokens", str(args.max_new_tokens), "--workdir",
                                      str(work), "--data-dir", str(data)], capture_output=True, text=True)
                if out.returncode:
                    raise SystemExit(f"{name} ({compute}, {threads} threads) failed:\n{out.stderr[-3000:]}")
                row = json.loads(out.stdout.strip().splitlines()[-1])
                row.update(name=name, kind=kind, compute=compute, threads=threads, round=round_,
                           load_before=load_before, load_after=[round(x, 2) for x in os.getloadavg()])
                runs.append(row)
                print(f"round {round_} {name} {compute} x{threads}: {row['sentences'] / row['wall_s']:.2f} sent/s "
                      f"(cpu {row['cpu_s']:.1f} s, load {row['load_after'][0]})", flush=True)
    rows = summarize(runs)
    result = {"benchmark": "back-translation speed, opus-mt-sized random Marian model, CPU",
              "provenance": record, "settings": {"sentences": args.sentences, "hf_sentences": args.hf_sentences,
                                                 "beams": args.beams, "num_return": 1,
                                                 "max_new_tokens": args.max_new_tokens, "batch_tokens": 4096,
                                                 "rounds": args.rounds},
              "rows": rows, "runs": runs, "ratios": ratios(rows)}
    update_record(args.json, "speed", result)
    print(table(rows))
    print(json.dumps(result["ratios"], indent=2))


if __name__ == "__main__":
    main()

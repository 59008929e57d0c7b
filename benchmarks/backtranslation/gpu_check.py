"""The GPU check of back-translation: the command against raw ``generate`` per dtype and beam, 1 against 2 tasks.

Usage (from the checkout's root on a GPU machine, after ``/work/shared/tools/gpu/prepare.sh`` and its install line):

    OUT=/tmp/out python benchmarks/backtranslation/gpu_check.py [--sentences 2000] [--budget-s 330]

Measures, each step bounded and its result written to ``$OUT/gpu.json`` at once (a timeout keeps what came before):

1. raw ``model.generate`` on the same sentences (length-sorted, batches of 512 / 2048 sentences, warmed up,
   synchronised) in float32, bfloat16 and float16 at beam 4, float32 and bfloat16 at beam 12 (batches of 512): the
   peer of every row;
2. the engine in this process, float32 / bfloat16 / float16: seconds in ``generate``, in the cost pass and elsewhere
   (what the command adds to ``generate``, and whether half precision loses there);
3. ``corpus backtranslate --device cuda`` (the whole command, one task): float32, bfloat16, float16 at beam 4, and
   float32 with ``--tasks 2 --workers 2`` on the one GPU (the tasks run one after another: the total must not drop)
   with a byte comparison against one task;
4. one epoch of ``train --recipe best-trigram`` on Flickr (the public command, timed);
5. the command at beam 12 (float32, bfloat16), float32 with 1 MiB chunks (larger batches), and CTranslate2 float16
   and int8_float16 where its CUDA 12 runtime loads (else the sentence saying it does not).

The model is the tests' opus-mt-sized Marian (6+6 layers, 512 dims, 58,101 tokens, seeded random weights: every
candidate runs to 32 new tokens), the sentences real German Multi30k ones. At most 6 minutes on an H200: steps
that would start after ``--budget-s`` are skipped (and listed), each command has its timeout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from marian import BITEXT, bitext_lines, build_model, generate, german

RES: dict = {}
START = time.perf_counter()
DEVICE = "cuda"
"""Where the model runs (``--device cpu`` with ``--tiny``: a smoke test of this script on a machine without GPU)."""


def sync() -> None:
    """Wait for the GPU's queued work (timings of asynchronous kernels)."""
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def log(out: Path, key: str, value: object) -> None:
    """Record one result and rewrite ``gpu.json`` at once."""
    RES[key] = value
    print(key, json.dumps(value)[:400], flush=True)
    (out / "gpu.json").write_text(json.dumps(RES, indent=1), encoding="utf-8")


def command(out: Path, name: str, args: list[str], timeout: float) -> object:
    """One CLI run in its own process: return code, seconds, its summary lines (the per-task rates)."""
    cli = [sys.executable, "-c", "import sys; from paranmt_hf.cli.main import main; sys.exit(main())"]
    start = time.perf_counter()
    try:
        done = subprocess.run(cli + args, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=False)
        rc, text = done.returncode, done.stdout[-3000:] + done.stderr[-6000:]
    except subprocess.TimeoutExpired as err:
        rc, text = "timeout", str(err)[-2000:]
    (out / f"{name}.log").write_text(text, encoding="utf-8")
    summary = [line for line in text.splitlines() if "sentences/s" in line or "pairs/s" in line][-2:]
    log(out, name, {"rc": rc, "seconds": round(time.perf_counter() - start, 1), "summary": summary,
                    "tail": text.strip().splitlines()[-3:]})
    return rc


def digest(path: Path) -> str | None:
    """The first 16 hex digits of a file's sha256 (None: no file)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None


def raw_generate(model_dir: Path, sentences: list[str], dtype: str, beams: int, batch: int) -> dict:
    """``generate`` alone: length-sorted batches of ``batch`` sentences, warmed up, timed with synchronisation."""
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(model_dir, dtype=getattr(torch, dtype))
    model = model.to(DEVICE).eval()
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    batches = [[sentences[i] for i in order[s : s + batch]] for s in range(0, len(order), batch)]
    generate(model, tokenizer, [batches[-1][:8]], beams, 32, DEVICE)  # warm-up
    sync()
    start = time.perf_counter()
    tokens = generate(model, tokenizer, batches, beams, 32, DEVICE)
    sync()
    seconds = time.perf_counter() - start
    del model
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
    return {"sentences_per_s": round(len(sentences) / seconds, 1), "tokens_per_s": round(tokens / seconds),
            "seconds": round(seconds, 2)}


def engine_breakdown(model_dir: Path, sentences: list[str], dtype: str, chunk: int) -> dict:
    """The engine as the command drives it (one ``translate`` per chunk of ``chunk`` sentences): where time goes."""
    import torch

    from paranmt_hf.corpus.translation.transformers_engine import (
        DecodingOptions,
        TransformersOptions,
        TransformersTranslator,
    )

    translator = TransformersTranslator(model_dir, DecodingOptions(num_beams=4, max_new_tokens=32),
                                        TransformersOptions(device=DEVICE, dtype=dtype))
    spent = {"generate": 0.0, "costs": 0.0}
    generate, costs = translator.model.generate, translator._costs

    def timed(name: str, fn):  # noqa: ANN001, ANN202
        def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            sync()
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                sync()
                spent[name] += time.perf_counter() - start
        return wrapper

    translator.model.generate = timed("generate", generate)
    translator._costs = timed("costs", costs)
    translator.translate(sentences[:8])
    spent.update(generate=0.0, costs=0.0)
    start = time.perf_counter()
    for s in range(0, len(sentences), chunk):
        translator.translate(sentences[s : s + chunk])
    total = time.perf_counter() - start
    budget = translator.batch_budget
    del translator
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
    return {"sentences_per_s": round(len(sentences) / total, 1), "seconds": round(total, 2),
            "generate_s": round(spent["generate"], 2), "costs_s": round(spent["costs"], 2),
            "other_s": round(total - spent["generate"] - spent["costs"], 2), "chunk": chunk,
            "budget_tokens": budget.tokens, "budget_row_tokens": budget.row_tokens}


def ctranslate2_rows(out: Path, work: Path, common: list[str], timeout: float) -> object:
    """CTranslate2 float16 and int8_float16 through the command, where its CUDA 12 runtime loads."""
    try:
        import ctranslate2  # noqa: F401

        from paranmt_hf.corpus.translation.ctranslate2_engine import missing_cuda_runtime
    except ImportError as err:
        return {"skipped": f"ctranslate2 not installed here ({err})"}
    missing = missing_cuda_runtime()
    if missing:
        return {"skipped": f"CTranslate2's CUDA 12 runtime is absent here ({missing} does not load)"}
    return {c: command(out, f"bt_ct2_{c}", ["corpus", "backtranslate", *common, "-o", str(work / f"ct2_{c}.tsv"),
                                            "--engine", "ctranslate2", "--compute-type", c, "--num-beams", "4"],
                       timeout) for c in ("float16", "int8_float16")}


def plan(out: Path, work: Path, model: Path, sentences: list[str], common: list[str], flickr: Path,
         timeout: float) -> list[tuple[str, object]]:
    """The steps, most telling first (the time budget skips the last ones)."""
    def bt(name: str, *flags: str) -> tuple[str, object]:
        return name, lambda: command(out, name, ["corpus", "backtranslate", *common, "-o", str(work / f"{name}.tsv"),
                                                 *flags], timeout)

    one_task, dtypes = ("--tasks", "1", "--workers", "1"), ("float32", "bfloat16", "float16")
    steps: list[tuple[str, object]] = [
        (f"generate_b4_{d}_batch{b}", lambda d=d, b=b: raw_generate(model, sentences, d, 4, b))
        for d in dtypes for b in (512, 2048)]
    steps += [bt(f"bt_b4_{d}", "--num-beams", "4", "--dtype", d, *one_task) for d in dtypes]
    steps += [(f"engine_b4_{d}", lambda d=d: engine_breakdown(model, sentences, d, 470)) for d in dtypes]
    steps.append(bt("bt_b4_float32_t2w2", "--num-beams", "4", "--tasks", "2", "--workers", "2"))
    one, two = work / "bt_b4_float32.tsv", work / "bt_b4_float32_t2w2.tsv"
    steps.append(("same_bytes_t1_t2", lambda: {"t1": digest(one), "t2": digest(two),
                                               "equal": digest(one) == digest(two) is not None}))
    if flickr.is_file():
        steps.append(("train_best_trigram_epoch", lambda: command(
            out, "train_best_trigram_epoch", ["train", "--recipe", "best-trigram", "--train", str(flickr),
                                              "--epochs", "1", "--dev", "none", "--output", str(work / "enc")], 120)))
    for d in ("float32", "bfloat16"):
        steps.append((f"generate_b12_{d}_batch512", lambda d=d: raw_generate(model, sentences, d, 12, 512)))
        steps.append(bt(f"bt_b12_{d}", "--num-beams", "12", "--dtype", d, *one_task))
    steps.append(bt("bt_b4_float32_chunk1mib", "--num-beams", "4", "--chunk-bytes", str(1 << 20)))
    steps.append(("ctranslate2", lambda: ctranslate2_rows(out, work, common, timeout)))
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=2000, help="Multi30k sentences per row (default 2000)")
    parser.add_argument("--budget-s", type=float, default=270,
                        help="skip the steps that would start after this many seconds (default 270: with the last "
                             "step's timeout, 6 minutes at most)")
    parser.add_argument("--skip", nargs="*", default=[], metavar="PREFIX", help="skip the steps named so")
    parser.add_argument("--data", default=".device/data",
                        help="folder with multi30k-en-de.tsv.gz and flickr30k-caption-pairs.tsv.gz (prepare.sh's; "
                             "default .device/data, else $PARANMT_HF_DATA's train/ folders)")
    parser.add_argument("--step-timeout", type=float, default=75, help="seconds per command (default 75)")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: a smoke test of this script without a GPU (with --tiny)")
    parser.add_argument("--tiny", action="store_true", help="a tiny Marian instead of the opus-mt-sized one")
    args = parser.parse_args()
    global DEVICE
    DEVICE = args.device
    out = Path(os.environ.get("OUT", "/tmp/out"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    data = Path(args.data)
    bitext, flickr = data / BITEXT.name, data / "flickr30k-caption-pairs.tsv.gz"
    if not bitext.is_file() and os.environ.get("PARANMT_HF_DATA"):
        shared = Path(os.environ["PARANMT_HF_DATA"])
        bitext, flickr = shared / BITEXT, shared / "train" / flickr.name
    import torch

    log(out, "device", {"torch": torch.__version__, "cuda": torch.cuda.is_available(),
                        "name": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                        "memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
                        if torch.cuda.is_available() else None})
    if DEVICE == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device here: this check runs on a GPU machine")
    sys.path.insert(0, ".device")
    lines = bitext_lines(bitext, 20000)
    texts = german(lines)
    model = work / "opus-mt-size"
    start = time.perf_counter()
    build_model(model, texts, tiny=args.tiny)
    log(out, "model_built_s", round(time.perf_counter() - start, 1))
    sentences = texts[: args.sentences]
    src = work / "multi30k-en-de.tsv"
    src.write_text("".join(lines[: args.sentences]), encoding="utf-8")
    common = [str(src), "--model", str(model), "--max-new-tokens", "32", "--no-source-cleaning", "--device", DEVICE,
              "--quiet"]

    steps = plan(out, work, model, sentences, common, flickr, args.step_timeout)
    skipped = []
    for name, step in steps:
        if any(name.startswith(prefix) for prefix in args.skip):
            continue
        if time.perf_counter() - START > args.budget_s:
            skipped.append(name)
            continue
        try:
            result = step()
        except Exception as err:  # noqa: BLE001 - one failed step must not lose the others
            result = {"error": f"{type(err).__name__}: {err}"[:600]}
        if name not in RES:
            log(out, name, result)
    log(out, "skipped_for_time", skipped)
    log(out, "seconds", round(time.perf_counter() - START, 1))


if __name__ == "__main__":
    main()

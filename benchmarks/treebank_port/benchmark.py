"""Whether the Treebank port (``paranmt_hf.corpus.text.treebank``) pays over calling NLTK's own tokenizer.

Checks that the port gives NLTK's tokens (``nltk.tokenize.NLTKWordTokenizer``, the tokenizer ``nltk.word_tokenize``
runs; NLTK's older ``TreebankWordTokenizer`` is reported too) on both sides of the shared ParaNMT sample, as typed and
lowercased, then measures both in fresh processes (the CPU time of each process: its import, then its tokenisation),
alternating the two in every round; the ratio is NLTK's CPU time over the port's in the same round (median).

    python benchmarks/treebank_port/benchmark.py --rounds 7
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = r"""
import json, sys, time
texts = json.load(open(sys.argv[2], encoding="utf-8"))
start = time.process_time()
if sys.argv[1] == "port":
    from paranmt_hf.corpus.text.treebank import treebank_tokenize as tokenize
else:
    from nltk.tokenize import NLTKWordTokenizer
    tokenize = NLTKWordTokenizer().tokenize
imported = time.process_time()
for text in texts:
    tokenize(text)
done = time.process_time()
print(json.dumps({"import_s": imported - start, "tokenize_s": done - imported}))
"""


def sentences(path: Path, limit: int) -> list[str]:
    """Both sides of the first ``limit`` pairs, as typed and lowercased (what the overlap tokenizes)."""
    texts = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line, row in enumerate(handle):
            if line >= limit:
                break
            for side in row.rstrip("\n").split("\t")[:2]:
                texts.extend((side, side.strip().lower()))
    return texts


def main(argv: list[str] | None = None) -> int:
    """Check the answers, measure the paths, write the JSON record and print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="ParaNMT pairs (.tsv.gz); default: the shared sample")
    parser.add_argument("--pairs", type=int, default=10_000, help="pairs to read")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds of the two processes")
    parser.add_argument("--output", type=Path, default=HERE / "treebank_port.json")
    args = parser.parse_args(argv)

    from nltk.tokenize import NLTKWordTokenizer, TreebankWordTokenizer

    from paranmt_hf.corpus.text.treebank import treebank_tokenize
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import describe, provenance, update_record

    data = args.data or data_dir() / "train" / "paranmt5m-sample-10k.tsv.gz"
    texts = sentences(data, args.pairs)
    nltk_words, old_words = NLTKWordTokenizer().tokenize, TreebankWordTokenizer().tokenize
    differ = sum(treebank_tokenize(t) != nltk_words(t) for t in texts)
    differ_old = sum(treebank_tokenize(t) != old_words(t) for t in texts)

    texts_file = HERE / ".texts.json"
    texts_file.write_text(json.dumps(texts), encoding="utf-8")
    rounds: list[dict[str, dict[str, float]]] = []
    try:
        for _ in range(args.rounds):
            run = {}
            for mode in ("port", "nltk"):
                out = subprocess.run([sys.executable, "-c", CHILD, mode, str(texts_file)], check=True,
                                     capture_output=True, text=True)
                run[mode] = json.loads(out.stdout)
            rounds.append(run)
    finally:
        texts_file.unlink(missing_ok=True)

    def median(mode: str, key: str) -> float:
        return statistics.median(r[mode][key] for r in rounds)

    def ratio(key: str) -> float:
        return statistics.median(r["nltk"][key] / r["port"][key] for r in rounds)

    record = {
        "provenance": provenance(packages=("nltk", "numpy")),
        "texts": len(texts),
        "differ_from_NLTKWordTokenizer": differ,
        "differ_from_TreebankWordTokenizer": differ_old,
        "rounds": rounds,
        "median": {mode: {"import_s": median(mode, "import_s"),
                          "us_per_text": 1e6 * median(mode, "tokenize_s") / len(texts)} for mode in ("port", "nltk")},
        "nltk_over_port": {"import": ratio("import_s"), "tokenize": ratio("tokenize_s")},
    }
    # the folder's one JSON: each run under its own key (the number of rounds and texts)
    update_record(args.output, f"{len(texts)}_texts_{args.rounds}_rounds", record, indent=2)
    summary = {k: v for k, v in record.items() if k not in ("rounds", "provenance")}
    sys.stdout.write(f"{describe(record['provenance'])}\n{json.dumps(summary, indent=2)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

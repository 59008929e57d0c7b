"""Does paranmt_hf's batched unigram search pay? NumPy search of many words at once vs tokenizers' Unigram model.

The featuriser's fast path (``paranmt_hf/model/token_ids.py``) meets new words when its chunk cache is cold: for an
SP model, each new chunk is the pre-token ``"▁" + chunk``, segmented by the model's best-path search. It hands a batch
of them to :class:`paranmt_hf.model.unigram_search.UnigramSegmenter` from 256 new words on (``_BATCHED_UNIGRAM_MIN``)
and to the model word by word below. This times both on the same words: the distinct chunks of the STS12-16 sentences
(NFKC + lower-cased, as the SP tokenizer normalises them), in their first-seen order, the first N of them for each N.

Protocol: CPU seconds of this process (what other jobs on a busy machine disturb least), the two paths alternating
within each round, the model's own word cache emptied before each of its calls; the ratio model / NumPy per round,
median over rounds. Every round checks that both give the same ids.

    python benchmarks/unigram_search/benchmark.py --rounds 7            # builds the SP tokenizer of benchmarks/speed
    python benchmarks/unigram_search/benchmark.py --tokenizer DIR       # a saved sp model (its tokenizer.json)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "speed"))

from models import english_corpus, sts_sentences  # noqa: E402 - the speed benchmark's inputs

SIZES = (64, 256, 1024, 4096, 16384, 0)
"""Numbers of new words timed (0: every distinct word)."""


def load_backend(tokenizer: str | None, data: Path) -> Any:
    """The ``tokenizers.Tokenizer`` of a saved model, or the speed benchmark's SP tokenizer trained here."""
    from tokenizers import Tokenizer

    if tokenizer:
        path = Path(tokenizer)
        return Tokenizer.from_file(str(path / "tokenizer.json" if path.is_dir() else path))
    from paranmt_hf import train_unigram_tokenizer

    return train_unigram_tokenizer(english_corpus(data), vocab_size=50_000, show_progress=False).backend_tokenizer


def model_ids(backend: Any, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The model word by word (what the fast path calls below its threshold): ids back to back, counts."""
    pieces = list(map(backend.model.tokenize, words))
    counts = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    ids = np.fromiter((t.id for p in pieces for t in p), dtype=np.int64, count=int(counts.sum()))
    return ids, counts


def measure(backend: Any, words: list[str], sizes: list[int], rounds: int) -> list[dict[str, Any]]:
    """Per size: CPU seconds of each path in every round, the per-round ratios, their median."""

    from paranmt_hf.model.unigram_search import UnigramSegmenter

    vocab = json.loads(backend.to_str())["model"]["vocab"]
    segmenter = UnigramSegmenter(vocab)

    def model(batch: list[str]) -> tuple[np.ndarray, np.ndarray]:
        if hasattr(backend.model, "_clear_cache"):  # cold: the model keeps up to 10,000 words between calls
            backend.model._clear_cache()
        return model_ids(backend, batch)

    rows = []
    for size in sizes:
        batch = words if size == 0 else words[:size]
        numpy_s, model_s = [], []
        for _ in range(rounds):
            c0 = time.process_time()
            got = segmenter.segment(batch, lambda rest: model_ids(backend, rest))
            c1 = time.process_time()
            want = model(batch)
            c2 = time.process_time()
            if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
                raise SystemExit(f"the NumPy search and the model disagree on the first {len(batch)} words")
            numpy_s.append(c1 - c0)
            model_s.append(c2 - c1)
        ratios = sorted(m / max(n, 1e-9) for m, n in zip(model_s, numpy_s, strict=True))
        rows.append({"words": len(batch), "numpy_cpu_s": numpy_s, "model_cpu_s": model_s,
                     "ratio_median": ratios[len(ratios) // 2]})
        print(f"{len(batch):>6} words: model / NumPy = {rows[-1]['ratio_median']:.2f} (median of {rounds})",  # noqa: T201
              file=sys.stderr)
    return rows


def markdown(report: dict[str, Any]) -> str:
    """The README: provenance line, the table, what it means."""
    from paranmt_hf.utils.provenance import describe

    lines = [
        "# Batched unigram search vs the `tokenizers` model (`benchmarks/unigram_search`)", "",
        describe(report["provenance"]), "",
        f"{report['distinct_words']:,} distinct words of the STS12-16 sentences (as `\"▁\" + chunk`, first-seen"
        f" order), {report['vocab_size']:,}-piece unigram vocabulary, {report['rounds']} rounds, one process, CPU"
        " seconds. Ratio = the model's time / the NumPy search's time in the same round, median over rounds (> 1:"
        " NumPy faster). Both give the same ids in every round.", "",
        "| new words | NumPy search (CPU s, median) | model word by word (CPU s, median) | model / NumPy (median) |",
        "|---:|---:|---:|---:|",
    ]
    for row in report["rows"]:
        med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        lines.append(f"| {row['words']:,} | {med(row['numpy_cpu_s']):.4f} | {med(row['model_cpu_s']):.4f} | "
                     f"{row['ratio_median']:.2f}× |")
    lines += ["", "The fast path batches from 256 new words on (`_BATCHED_UNIGRAM_MIN` in "
              "`paranmt_hf/model/token_ids.py`); below, it calls the model word by word.", ""]
    return "\n".join(lines)


def main() -> None:
    """Measure, then write ``unigram_search.json`` and ``README.md`` next to this script."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", help="a saved sp model folder or tokenizer.json (default: train one)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="new words per call (0: all)")
    parser.add_argument("--output", type=Path, default=HERE, help="folder for unigram_search.json and README.md")
    args = parser.parse_args()
    from paranmt_hf.utils.atomic import atomic_write_text
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import provenance, update_record

    backend = load_backend(args.tokenizer, data_dir())
    normalize = backend.normalizer.normalize_str
    chunks = dict.fromkeys(c for s in sts_sentences(data_dir()) for c in normalize(s).split())
    words = ["▁" + c for c in chunks if "▁" not in c]
    rows = measure(backend, words, args.sizes, args.rounds)
    report = {"provenance": provenance(), "rounds": args.rounds, "distinct_words": len(words),
              "vocab_size": backend.get_vocab_size(), "rows": rows}
    args.output.mkdir(parents=True, exist_ok=True)
    key = f"{report['distinct_words']}_words_{args.rounds}_rounds"  # the folder's one JSON: each run its own key
    update_record(args.output / "unigram_search.json", key, report)
    atomic_write_text(args.output / "README.md", markdown(report))
    print(markdown(report))  # noqa: T201


if __name__ == "__main__":
    main()

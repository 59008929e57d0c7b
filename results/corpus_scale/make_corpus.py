"""Write a synthetic corpus in the exact para-nmt-50m.txt format from real ParaNMT text (for corpus_scale).

Usage: python results/corpus_scale/make_corpus.py OUT.txt [--lines 300000] [--seed 0] [--data-dir DIR]

The real 51.4M-line corpus is not available offline. Each line here is `reference \\t back-translation \\t score`
made from the real, tokenised and lower-cased ParaNMT-5M sample (`$PARANMT_HF_DATA/train/paranmt5m-sample-10k.tsv.gz`):

- a random real pair, each side with 8% of its tokens replaced by tokens drawn from the sample's own unigram
  distribution and 1% by made-up words (names, numbers), so that sentences are new and the vocabulary keeps
  growing (the token and word caches of the filter see realistic miss rates, not 10K sentences over and over);
- detokenised (NLTK's Treebank detokenizer) and true-cased (first letter, "I"), as raw para-nmt-50m.txt text is;
- a paraphrase score drawn from the five score ranges of ParaNMT-50M's Table 3 in their proportions; in the top
  range a quarter of the back-translations are light edits of the reference (high trigram overlap, as Table 3's
  0.35 mean overlap there implies);
- 3% of the lines have a non-English side (real Tatoeba / Multi30k sentences), 0.1% are malformed lines of every
  kind the reader counts (missing column, bad score, invalid UTF-8, NUL byte, empty side).
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
from collections import Counter
from pathlib import Path

BINS = [(-0.1, 0.2, 4.0), (0.2, 0.4, 3.8), (0.4, 0.6, 6.9), (0.6, 0.8, 14.4), (0.8, 1.0, 18.0)]  # Table 3 (M pairs)
BAD = [b"no tabs on this line\n", b"a reference\ta paraphrase\tnot-a-score\n", b"a reference\ta paraphrase\tnan\n",
       b"\ta paraphrase\t0.5\n", b"caf\xe9 au lait\tcoffee\t0.5\n", b"a \x00 nul\tbyte\t0.5\n", b"\n",
       b"extra\tcolumn\t0.5\t0.1\n"]
SYLLABLES = "ka lo mi ra ten vor zu bel dan ish gro pol".split()


def detokenizer():
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    return TreebankWordDetokenizer().detokenize


def true_case(text: str) -> str:
    words = ["I" if w == "i" else ("I" + w[1:] if w.startswith("i'") else w) for w in text.split(" ")]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output")
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=os.environ.get("PARANMT_HF_DATA", "../shared/data"))
    args = parser.parse_args()
    data = Path(args.data_dir) / "train"
    with gzip.open(data / "paranmt5m-sample-10k.tsv.gz", "rt", encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t")[:2] for line in f if line.count("\t") >= 1]
    foreign = []
    for name in ("tatoeba-en-es", "tatoeba-en-fr", "tatoeba-en-de", "multi30k-en-cs"):
        with gzip.open(data / "bitext" / f"{name}.tsv.gz", "rt", encoding="utf-8") as f:
            foreign += [line.rstrip("\n").split("\t")[1] for _, line in zip(range(20_000), f)]
    unigrams = Counter(t for a, b in pairs for t in (a + " " + b).split())
    vocab, weights = zip(*unigrams.items())
    rng = random.Random(args.seed)
    detok = detokenizer()
    probs = [b[2] for b in BINS]

    def novel() -> str:
        if rng.random() < 0.3:
            return str(rng.randint(2, 99999))
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        return word.capitalize() if rng.random() < 0.5 else word

    def vary(tokens: list[str]) -> list[str]:
        draws = rng.choices(vocab, weights, k=len(tokens))
        out = []
        for token, draw in zip(tokens, draws):
            u = rng.random()
            out.append(novel() if u < 0.01 else draw if u < 0.09 and token.isalpha() else token)
        return out

    def edit(tokens: list[str]) -> list[str]:
        out = list(tokens)
        for _ in range(max(1, len(out) // 8)):
            out[rng.randrange(len(out))] = rng.choices(vocab, weights)[0]
        return out

    with open(args.output, "wb") as out:
        for _ in range(args.lines):
            if rng.random() < 0.001:
                out.write(rng.choice(BAD))
                continue
            ref, para = rng.choice(pairs)
            low, high, _ = rng.choices(BINS, probs)[0]
            score = rng.uniform(low, high)
            ref_tokens = vary(ref.split())
            para_tokens = edit(ref_tokens) if high == 1.0 and rng.random() < 0.25 else vary(para.split())
            sides = [true_case(detok(ref_tokens)), true_case(detok(para_tokens))]
            if rng.random() < 0.03:
                sides[rng.randrange(2)] = rng.choice(foreign)
            out.write(f"{sides[0]}\t{sides[1]}\t{score:.16g}\n".encode("utf-8"))


if __name__ == "__main__":
    main()

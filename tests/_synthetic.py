r"""A corpus in the exact ``para-nmt-50m.txt`` format synthesised from real ParaNMT text (benchmarks and tests).

The real 51.4M-line corpus is not available offline. :func:`write_synthetic_paranmt` writes lines
``reference \\t back-translation \\t score`` made from the real, tokenised and lower-cased ParaNMT-5M sample
(``$PARANMT_HF_DATA/train/paranmt5m-sample-10k.tsv.gz``):

- a random real pair, each side with 8% of its words replaced by words drawn from the sample's own word
  distribution and 1% by made-up words (names, numbers), so that sentences are new and the vocabulary keeps
  growing (the token and word caches of the tools meet realistic miss rates, not 10K sentences over and over);
- detokenised (NLTK's Treebank detokenizer) and true-cased (first letter, "I"), as raw ``para-nmt-50m.txt`` text is;
- a paraphrase score drawn from the five score ranges of ParaNMT-50M's Table 3 in their proportions; in the top
  range a quarter of the back-translations are light edits of the reference (high trigram overlap, as Table 3's
  0.35 mean overlap there implies);
- 3% of the lines have a non-English side (real Tatoeba / Multi30k sentences), 0.1% are malformed lines of every
  kind the reader counts (missing or extra column, bad score, invalid UTF-8, NUL byte, empty side, empty line).
"""

from __future__ import annotations

import gzip
import itertools
import os
import random
from collections import Counter
from pathlib import Path

from paranmt_hf.utils.imports import require

# Table 3 of ParaNMT-50M: score range and millions of pairs in it
SCORE_BINS = [(-0.1, 0.2, 4.0), (0.2, 0.4, 3.8), (0.4, 0.6, 6.9), (0.6, 0.8, 14.4), (0.8, 1.0, 18.0)]
BAD_LINES = [b"no tabs on this line\n", b"a reference\ta paraphrase\tnot-a-score\n",
             b"a reference\ta paraphrase\tnan\n", b"\ta paraphrase\t0.5\n", b"caf\xe9 au lait\tcoffee\t0.5\n",
             b"a \x00 nul\tbyte\t0.5\n", b"\n", b"extra\tcolumn\t0.5\t0.1\n"]
_SYLLABLES = "ka lo mi ra ten vor zu bel dan ish gro pol".split()
FOREIGN = ("tatoeba-en-es", "tatoeba-en-fr", "tatoeba-en-de", "multi30k-en-cs")


def _true_case(text: str) -> str:
    words = ["I" if w == "i" else ("I" + w[1:] if w.startswith("i'") else w) for w in text.split(" ")]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def write_synthetic_paranmt(path: str | os.PathLike[str], lines: int, data_dir: str | os.PathLike[str],
                            seed: int = 0) -> Path:
    """Write ``lines`` lines in the ``para-nmt-50m.txt`` format to ``path`` (see the module docstring).

    Args:
        path: the file to write.
        lines: how many lines.
        data_dir: the shared data folder (``$PARANMT_HF_DATA``) holding ``train/paranmt5m-sample-10k.tsv.gz`` and
            ``train/bitext/``.
        seed: random seed (the same seed gives the same file).
    """
    detokenize = require("nltk.tokenize.treebank", "data").TreebankWordDetokenizer().detokenize
    train = Path(data_dir) / "train"
    with gzip.open(train / "paranmt5m-sample-10k.tsv.gz", "rt", encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t")[:2] for line in f if "\t" in line]
    foreign: list[str] = []
    for name in FOREIGN:
        with gzip.open(train / "bitext" / f"{name}.tsv.gz", "rt", encoding="utf-8") as f:
            foreign += [line.rstrip("\n").split("\t")[1] for line in itertools.islice(f, 20_000)]
    counts = Counter(t for a, b in pairs for t in (a + " " + b).split())
    vocab, weights = list(counts), list(counts.values())
    cumulative = list(itertools.accumulate(weights))
    rng = random.Random(seed)
    bins = [b[2] for b in SCORE_BINS]

    def novel() -> str:
        if rng.random() < 0.3:
            return str(rng.randint(2, 99999))
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        return word.capitalize() if rng.random() < 0.5 else word

    def vary(tokens: list[str]) -> list[str]:
        draws = rng.choices(vocab, cum_weights=cumulative, k=len(tokens))
        out = []
        for token, draw in zip(tokens, draws, strict=True):
            u = rng.random()
            out.append(novel() if u < 0.01 else draw if u < 0.09 and token.isalpha() else token)
        return out

    def edit(tokens: list[str]) -> list[str]:
        out = list(tokens)
        for _ in range(max(1, len(out) // 8)):
            out[rng.randrange(len(out))] = rng.choices(vocab, cum_weights=cumulative)[0]
        return out

    path = Path(path)
    with open(path, "wb") as out:
        for _ in range(lines):
            if rng.random() < 0.001:
                out.write(rng.choice(BAD_LINES))
                continue
            ref, para = rng.choice(pairs)
            low, high, _ = rng.choices(SCORE_BINS, bins)[0]
            score = rng.uniform(low, high)
            ref_tokens = vary(ref.split())
            para_tokens = edit(ref_tokens) if high == 1.0 and rng.random() < 0.25 else vary(para.split())
            sides = [_true_case(detokenize(ref_tokens)), _true_case(detokenize(para_tokens))]
            if rng.random() < 0.03:
                sides[rng.randrange(2)] = rng.choice(foreign)
            out.write(f"{sides[0]}\t{sides[1]}\t{score:.16g}\n".encode())
    return path

"""Split the shared German-English bitext for the end-to-end run (results/make_paranmt/README.md).

From Tatoeba en-de and Multi30k en-de (``PARANMT_HF_DATA/train/bitext``), seeded:

* ``mt-test.tsv``: 1,000 + 1,000 held-out pairs (German TAB English) for the translation model's BLEU;
* ``bt-mining.tsv``: 14,000 + 6,000 pairs whose German side is back-translated and paired with its English
  reference (EMNLP 2017's "mining" pool: the pairs the filters select from);
* ``bt-heldout.tsv``: 7,000 + 3,000 more, back-translated too, that train the language model (their English
  references) and the reference classifier (references vs back-translations), kept apart from the mining pool as
  E17 keeps 50,000 per dataset apart;
* ``mt-train.tsv``: the rest, without any pair that shares a sentence (either language, case- and
  whitespace-insensitively) with the three held-out sets, so the translation model never saw the German it
  back-translates.

Also writes ``flickr.tsv`` and ``pivot.tsv`` (the other two sources of the data-source comparison, drawn later to
the same size): the Flickr30k caption pairs and the English paraphrases pivoted through the Tatoeba bitext
(`paranmt-hf corpus pivot`), both without pairs that share a sentence with the held-out sets.

    python results/make_paranmt/prepare.py runs/make_paranmt/data [--data-dir ../shared/data] [--seed 0]
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
from pathlib import Path

from paranmt_hf.corpus.output.pivot import pivot_files
from paranmt_hf.utils.atomic import atomic_output, atomic_write_json
from paranmt_hf.utils.paths import data_dir as default_data_dir
from paranmt_hf.utils.provenance import provenance

HELD_OUT = {"tatoeba": {"test": 1000, "mining": 14000, "heldout": 7000},
            "multi30k": {"test": 1000, "mining": 6000, "heldout": 3000}}


def key(text: str) -> str:
    """Case- and whitespace-insensitive form of a sentence."""
    return " ".join(text.split()).lower()


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """The two-column rows of a gzip'd TSV (rows with another column count or an empty side skipped)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle]
    return [(r[0].strip(), r[1].strip()) for r in rows if len(r) == 2 and r[0].strip() and r[1].strip()]


def write_tsv(path: Path, rows: list[tuple[str, str]]) -> None:
    """Write rows as TSV, atomically."""
    with atomic_output(path, overwrite=True) as tmp:
        tmp.write_text("".join(f"{a}\t{b}\n" for a, b in rows), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="folder for the split files (not committed: e.g. runs/...)")
    parser.add_argument("--data-dir", type=Path, default=None, help="the shared data (default: PARANMT_HF_DATA)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    data = args.data_dir or default_data_dir()
    bitext = data / "train" / "bitext"
    rng = random.Random(args.seed)
    splits: dict[str, list[tuple[str, str]]] = {"test": [], "mining": [], "heldout": []}
    train: list[tuple[str, str]] = []
    stats: dict[str, dict[str, int]] = {}
    for name, sizes in HELD_OUT.items():
        pairs = [(de, en) for en, de in read_pairs(bitext / f"{name}-en-de.tsv.gz")]  # files are English first
        # held-out German sentences are distinct, and each occurs once in its file
        counts: dict[str, int] = {}
        for de, _ in pairs:
            counts[key(de)] = counts.get(key(de), 0) + 1
        single = [i for i, (de, _) in enumerate(pairs) if counts[key(de)] == 1]
        rng.shuffle(single)
        start = 0
        held: set[int] = set()
        for split, size in sizes.items():
            chosen = single[start : start + size]
            start += size
            splits[split].extend(pairs[i] for i in chosen)
            held.update(chosen)
        train.extend(p for i, p in enumerate(pairs) if i not in held)
        stats[name] = {"pairs": len(pairs), **sizes}
    held_keys = {key(s) for rows in splits.values() for pair in rows for s in pair}
    before = len(train)
    train = [p for p in train if key(p[0]) not in held_keys and key(p[1]) not in held_keys]
    rng.shuffle(train)
    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    write_tsv(out / "mt-train.tsv", train)
    for split, rows in splits.items():
        write_tsv(out / {"test": "mt-test.tsv", "mining": "bt-mining.tsv", "heldout": "bt-heldout.tsv"}[split], rows)
    english_held = {key(en) for rows in splits.values() for _, en in rows}
    flickr = [p for p in read_pairs(data / "train" / "flickr30k-caption-pairs.tsv.gz")
              if key(p[0]) not in english_held and key(p[1]) not in english_held]
    write_tsv(out / "flickr.tsv", flickr)
    pivots = [p for p in pivot_files(sorted(bitext.glob("tatoeba-en-*.tsv.gz")), progress=False)
              if key(p[0]) not in english_held and key(p[1]) not in english_held]
    write_tsv(out / "pivot.tsv", pivots)
    record = {"sources": stats, "mt_train": len(train), "mt_train_dropped_for_overlap": before - len(train),
              "mt_test": len(splits["test"]), "bt_mining": len(splits["mining"]),
              "bt_heldout": len(splits["heldout"]), "flickr_pairs": len(flickr), "pivot_pairs": len(pivots),
              "seed": args.seed, "provenance": provenance()}
    atomic_write_json(out / "splits.json", record)
    print({k: v for k, v in record.items() if k != "provenance"})
    return 0


if __name__ == "__main__":
    sys.exit(main())

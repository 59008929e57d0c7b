"""Hold out a bitext-mining DEV set from the TRAINING bitext (never from the LASER Tatoeba test files).

For each Tatoeba training file (en-es, en-fr, en-de) it draws ``--pairs`` pairs whose English and foreign sentences
each occur once in that file, writes them in the LASER layout (``dev/tatoeba.<xxx>-eng.<xxx>`` and ``.eng``: the
same reader and metric as the test), and writes copies of every bitext file without any pair that shares a
sentence (case- and whitespace-insensitively, English or foreign side) with a dev pair. Exploration runs train on
those copies and read mining error on ``dev/``; the final model trains on the full files.

    python results/bitext/dev_split.py ../shared/data/train/bitext runs/data/split [--pairs 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import random
from pathlib import Path

from paranmt_hf.utils.atomic import atomic_output, atomic_write_json, atomic_write_text
from paranmt_hf.utils.provenance import provenance

LASER = {"es": "spa", "fr": "fra", "de": "deu"}


def key(text: str) -> str:
    """Case- and whitespace-insensitive form of a sentence."""
    return " ".join(text.split()).lower()


def read(path: Path) -> list[tuple[str, str]]:
    """The (English, foreign) pairs of a two-column gzip'd TSV (bad lines skipped)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle]
    return [(r[0], r[1]) for r in rows if len(r) >= 2 and r[0].strip() and r[1].strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bitext_dir", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    files = sorted(args.bitext_dir.glob("*-en-*.tsv.gz"))
    data = {f.name: read(f) for f in files}
    rng = random.Random(args.seed)
    held_en: set[str] = set()
    held_xx: set[str] = set()
    stats: dict[str, dict[str, int]] = {}
    for lang, laser in LASER.items():
        pairs = data[f"tatoeba-en-{lang}.tsv.gz"]
        en_count = collections.Counter(key(e) for e, _ in pairs)
        xx_count = collections.Counter(key(x) for _, x in pairs)
        unique = [p for p in pairs if en_count[key(p[0])] == 1 and xx_count[key(p[1])] == 1]
        unique = [p for p in unique if key(p[0]) not in held_en]  # one English sentence in one dev set only
        dev = rng.sample(unique, args.pairs)
        held_en |= {key(e) for e, _ in dev}
        held_xx |= {key(x) for _, x in dev}
        atomic_write_text(args.output / "dev" / f"tatoeba.{laser}-eng.{laser}", "".join(f"{x}\n" for _, x in dev),
                          overwrite=args.overwrite)
        atomic_write_text(args.output / "dev" / f"tatoeba.{laser}-eng.eng", "".join(f"{e}\n" for e, _ in dev),
                          overwrite=args.overwrite)
        stats[laser] = {"dev_pairs": len(dev), "candidates": len(unique)}
    for name, pairs in data.items():
        kept = [p for p in pairs if key(p[0]) not in held_en and key(p[1]) not in held_xx]
        with atomic_output(args.output / "train" / name, overwrite=args.overwrite) as tmp:
            with gzip.open(tmp, "wt", encoding="utf-8") as out:
                out.writelines(f"{e}\t{x}\n" for e, x in kept)
        stats[name] = {"pairs": len(pairs), "kept": len(kept), "removed": len(pairs) - len(kept)}
    atomic_write_json(args.output / "split.json", {"provenance": provenance(), "seed": args.seed, **stats})
    print(json.dumps(stats, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

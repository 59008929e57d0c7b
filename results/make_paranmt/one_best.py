"""The 1-best candidate of each source sentence of a back-translation file (ACL 2018: "selected the highest
scoring translation from the beam"), all columns kept, header included.

``corpus backtranslate --num-return K`` writes each sentence's K candidates best first; this keeps the first of each
(reference, source) group, so one run of the n-best decoding serves both EMNLP 2017's n-best mining and ACL 2018's
1-best pairs.

    python results/make_paranmt/one_best.py runs/make_paranmt/annotated.tsv runs/make_paranmt/one-best.tsv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path, help="a backtranslate / annotate output with a header and a source column")
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    from paranmt_hf.utils.atomic import atomic_output

    lines = args.input.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    if "source" not in header:
        raise SystemExit(f"{args.input}: no source column (back-translate with --with-source)")
    source = header.index("source")
    seen: set[tuple[str, str]] = set()
    kept = [lines[0]]
    for line in lines[1:]:
        fields = line.split("\t")
        key = (fields[0], fields[source])
        if key not in seen:
            seen.add(key)
            kept.append(line)
    with atomic_output(args.output, [args.input], overwrite=True) as tmp:
        tmp.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print(f"{len(kept) - 1:,} sentences (1-best) of {len(lines) - 1:,} candidates -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Print the evaluation of several models side by side (the main job: the English model and the bitext model).

    python benchmarks/quality/side_by_side.py english=outputs/main/eval bitext=outputs/main/bitext/eval \
        [--targets bitext] [--json out.json]

Each ``NAME=DIR`` is a ``paranmt-hf eval --output`` folder. Rows: STS12-16 and STS-B (papers' protocol, Pearson x100),
STS17 per track (Pearson x100; es-en is track 4a) and Tatoeba error (%, mean of both directions; lower is better).
``--targets NAME`` checks the cross-lingual model's targets (benchmarks/quality/README.md) on that model's column.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paranmt_hf.hub.eval_results import eval_tables, load_eval_results

STS17 = ["en-en", "es-es", "es-en", "ar-ar", "ar-en", "tr-en"]
TATOEBA = ["spa", "fra", "deu", "ara", "cmn", "rus", "tur"]
TARGETS = [  # (row, comparison, bound)
    ("Tatoeba spa err", "<=", 5.0), ("Tatoeba fra err", "<=", 5.0), ("Tatoeba deu err", "<=", 5.0),
    ("STS17 es-en (4a)", ">=", 70.0), ("STS17 es-es", ">=", 80.0), ("STS12-16 (papers)", ">=", 68.0),
]


def rows(eval_dir: str) -> dict[str, float | None]:
    """The compared numbers of one evaluation folder (``None`` where a task was not run)."""
    tables = eval_tables(load_eval_results(eval_dir))
    out: dict[str, float | None] = {"STS12-16 (papers)": tables["average"][0] if tables["average"] else None}
    other = {(task, subset): pearson for task, split, subset, pearson, _ in tables["other_sts"] if split == "test"}
    out["STS-B test"] = other.get(("STSBenchmark", "default"))
    for track in STS17:
        out[f"STS17 {track}" + (" (4a)" if track == "es-en" else "")] = other.get(("STS17", track))
    bitext = {subset.split("-")[0]: (a, b) for _, subset, a, b in tables["bitext"]}
    for lang in TATOEBA:
        a, b = bitext.get(lang, (None, None))
        out[f"Tatoeba {lang} err"] = None if a is None or b is None else (a + b) / 2
    return out


def check(values: dict[str, float | None]) -> list[tuple[str, str, float, float | None, bool]]:
    """Each target with the model's value and whether it is met."""
    out = []
    for row, op, bound in TARGETS:
        value = values.get(row)
        met = value is not None and (value <= bound if op == "<=" else value >= bound)
        out.append((row, op, bound, value, met))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help="NAME=EVAL_DIR")
    parser.add_argument("--targets", default=None, help="check the cross-lingual targets on this model's column")
    parser.add_argument("--json", default=None, help="also write the table as JSON")
    args = parser.parse_args(argv)
    columns: dict[str, dict[str, Any]] = {}
    for spec in args.models:
        name, sep, folder = spec.partition("=")
        if not sep:
            parser.error(f"{spec!r}: expected NAME=EVAL_DIR")
        columns[name] = rows(folder)
    names = list(columns)
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for row in columns[names[0]]:
        cells = ["-" if columns[n].get(row) is None else f"{columns[n][row]:.2f}" for n in names]
        print(f"| {row} | " + " | ".join(cells) + " |")
    result: dict[str, Any] = {"models": columns}
    if args.targets:
        checks = check(columns[args.targets])
        print(f"\nCross-lingual targets, checked on the {args.targets} model (benchmarks/quality/README.md):")
        for row, op, bound, value, met in checks:
            shown = "-" if value is None else f"{value:.2f}"
            print(f"  {row} {op} {bound}: {shown} {'met' if met else 'NOT met'}")
        result["targets"] = [dict(zip(("row", "op", "bound", "value", "met"), c, strict=True)) for c in checks]
    if args.json:
        from paranmt_hf.utils.atomic import atomic_write_json
        from paranmt_hf.utils.provenance import provenance

        atomic_write_json(args.json, {"provenance": provenance(), **result})
    return 0


if __name__ == "__main__":
    sys.exit(main())

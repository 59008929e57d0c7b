"""Helpers of results/bt_resume/run.sh: the first lines of a bitext, and the byte comparison it reports.

    python results/bt_resume/resume.py head SRC N OUT
    python results/bt_resume/resume.py report WORK OUT KILLS_TRANSFORMERS KILLS_CTRANSLATE2 TRAINING_SECONDS
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import sys
from pathlib import Path


def head(source: str, lines: int, output: str) -> None:
    """Write the first ``lines`` lines of ``source`` (gzip or plain) to ``output``."""
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rt", encoding="utf-8") as src, open(output, "w", encoding="utf-8") as out:
        out.writelines(itertools.islice(src, lines))


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every Parquet file under ``folder``, by relative path."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}


def report(work: Path, out: Path, kills: dict[str, int], trained: int) -> bool:
    """Compare the one-task and the killed-and-resumed four-task folders of both engines; write ``out``."""
    import pyarrow.parquet as pq

    from paranmt_hf.utils.provenance import provenance

    result = {"command": "bash results/bt_resume/run.sh", "provenance": provenance(),
              "translator": json.loads((work / "mt" / "translator_metrics.json").read_text()),
              "translator_training_seconds": trained, "engines": {}}
    for engine, killed in kills.items():
        one, four = digest(work / f"one-{engine}"), digest(work / f"four-{engine}")
        rows = sum(pq.read_metadata(work / f"one-{engine}" / name).num_rows for name in one)
        result["engines"][engine] = {"kills_while_running": killed, "rows": rows, "parquet_files": len(one),
                                     "byte_identical": one == four}
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["engines"], indent=2))
    return all(e["byte_identical"] for e in result["engines"].values())


def main() -> None:
    """Parse the command line and run ``head`` or ``report``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    first = commands.add_parser("head", help="the first lines of a bitext")
    first.add_argument("source")
    first.add_argument("lines", type=int)
    first.add_argument("output")
    compare = commands.add_parser("report", help="compare the folders of both engines, write the JSON")
    compare.add_argument("work", type=Path)
    compare.add_argument("output", type=Path)
    compare.add_argument("kills_transformers", type=int)
    compare.add_argument("kills_ctranslate2", type=int)
    compare.add_argument("training_seconds", type=int)
    args = parser.parse_args()
    if args.command == "head":
        head(args.source, args.lines, args.output)
        return
    kills = {"transformers": args.kills_transformers, "ctranslate2": args.kills_ctranslate2}
    sys.exit(0 if report(args.work, args.output, kills, args.training_seconds) else 1)


if __name__ == "__main__":
    main()

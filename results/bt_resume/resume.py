"""Helpers of results/bt_resume/run.sh: the first lines of a bitext, and the byte comparison it reports.

    python results/bt_resume/resume.py head SRC N OUT
    python results/bt_resume/resume.py report WORK OUT KILLS_TRANSFORMERS KILLS_CTRANSLATE2 TRAINING_SECONDS
"""

from __future__ import annotations

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


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "head":
        head(args[0], int(args[1]), args[2])
    else:
        same = report(Path(args[0]), Path(args[1]), {"transformers": int(args[2]), "ctranslate2": int(args[3])},
                      int(args[4]))
        sys.exit(0 if same else 1)

"""Clean training pairs: drop every pair with a side found in an evaluation set, and duplicate pairs.

The rule of the project's shared data (its README), checked here to reproduce ``../shared/data/train`` exactly
from the same upstream files:

- each side is stripped of surrounding whitespace; a pair with an empty side, or a side holding a tab or a line
  break, is malformed and dropped;
- a pair is dropped when either side equals, case- and whitespace-insensitively (``" ".join(s.lower().split())``),
  a sentence of any evaluation set: every sentence of STS 2012-2016 (all input lines, scored or not), STS-B
  (train, dev and test), STS17 (all tracks), LASER Tatoeba (both sides, all languages), the SimLex-999 words, and
  the held-out SICK set (mteb's SICK-R);
- a pair whose normalised ``(side a, side b)`` was already kept is a duplicate and dropped (order-sensitive).

Kept pairs are written as stripped, otherwise unchanged, in source order.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..data.eval_sets import EVAL_SETS
from ..data.reader import read_text_lines

_BREAKS = re.compile(r"[\t\n\r]")


def normalize(text: str) -> str:
    """The comparison key: lower-cased, whitespace runs collapsed, stripped."""
    return " ".join(text.lower().split())


@dataclass
class CleanStats:
    """What cleaning removed (``read`` = ``pairs`` + the three removals)."""

    read: int = 0
    pairs: int = 0
    removed_eval: int = 0
    removed_duplicate: int = 0
    removed_malformed: int = 0

    @property
    def removed(self) -> int:
        """All pairs dropped."""
        return self.removed_eval + self.removed_duplicate + self.removed_malformed

    def as_dict(self) -> dict[str, int]:
        """``STATS.json`` entry: ``pairs`` and ``removed`` (as in ../shared/data) plus the breakdown."""
        return {"pairs": self.pairs, "removed": self.removed, "removed_eval": self.removed_eval,
                "removed_duplicate": self.removed_duplicate, "removed_malformed": self.removed_malformed}


def clean_pairs(pairs: Iterable[tuple[str, str]], held_out: set[str], stats: CleanStats) -> Iterator[tuple[str, str]]:
    """The pairs that survive the rule above; ``held_out`` holds normalised evaluation sentences."""
    seen: set[tuple[str, str]] = set()
    for a, b in pairs:
        stats.read += 1
        a, b = a.strip(), b.strip()
        if not a or not b or _BREAKS.search(a) or _BREAKS.search(b):
            stats.removed_malformed += 1
            continue
        key = (normalize(a), normalize(b))
        if key[0] in held_out or key[1] in held_out:
            stats.removed_eval += 1
            continue
        if key in seen:
            stats.removed_duplicate += 1
            continue
        seen.add(key)
        stats.pairs += 1
        yield a, b


def _lines(path: Path) -> list[str]:
    return read_text_lines(path)


def eval_sentences(eval_root: Path) -> set[str]:
    """Normalised sentences of every evaluation set installed below ``eval_root``, and the SimLex-999 words.

    The sets are those of :data:`~paranmt_hf.data.eval_sets.EVAL_SETS`, every input line, scored or not.

    Raises:
        FileNotFoundError: a set is missing (decontamination needs all of them).
    """
    simlex = eval_root / "simlex" / "SimLex-999.txt"
    missing = [name for name, spec in EVAL_SETS.items() if not all((eval_root / f).is_dir() for f in spec.folders)]
    missing += [] if simlex.is_file() else ["SimLex-999"]
    if missing:
        raise FileNotFoundError(f"evaluation sets missing under {eval_root}: {missing}; the training data cannot be "
                                "decontaminated without them (fetch them first)")
    found = {normalize(s) for spec in EVAL_SETS.values() for s in spec.held_out(eval_root)}
    for line in _lines(simlex)[1:]:
        found.update(normalize(s) for s in line.split("\t")[:2])
    found.discard("")
    return found


def sick_sentences(path: Path) -> set[str]:
    """Normalised ``sentence_A`` / ``sentence_B`` of a SICK file (a SemEval-2014 split file, or ``SICK.zip``).

    Raises:
        ValueError: the file has no such columns.
    """
    if zipfile.is_zipfile(path):  # the full release: SICK.zip holding SICK.txt
        from .archives import Archive

        with Archive(path) as archive:
            text = archive.read("SICK.txt").decode("utf-8-sig")
    else:
        text = path.read_text(encoding="utf-8-sig")
    rows = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(rows, [])
    if "sentence_A" not in header or "sentence_B" not in header:
        raise ValueError(f"{path}: no sentence_A / sentence_B columns (header {header[:6]})")
    a, b = header.index("sentence_A"), header.index("sentence_B")
    found = {normalize(row[i]) for row in rows for i in (a, b) if len(row) > max(a, b)}
    found.discard("")
    return found

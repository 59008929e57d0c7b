"""SimLex-999 (the original release): word pairs with their similarity scores."""

from __future__ import annotations


def read_simlex(path: str) -> list[tuple[str, str, float]]:
    """``(word1, word2, SimLex999 score)`` rows of the original SimLex-999 release (10-column TSV with header)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:4] != ["word1", "word2", "POS", "SimLex999"]:
            raise ValueError(f"{path} is not SimLex-999.txt (header {header[:4]})")
        for line in f:
            if line.strip():
                w1, w2, _, score = line.rstrip("\n").split("\t")[:4]
                rows.append((w1, w2, float(score)))
    return rows

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from paranmt_hf import load_paranmt


@pytest.mark.data
def test_real_paranmt_5m_sample_streams_completely(data_dir: Path) -> None:
    path = data_dir / "train" / "paranmt5m-sample-10k.tsv.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n").split("\t") for line in f]
    rows = list(load_paranmt("processed-5m", str(path), strict=True))
    assert len(rows) == len(lines) == 9997
    assert [[r["reference"], r["paraphrase"]] for r in rows] == lines


@pytest.mark.data
def test_real_sample_as_pairs_with_overlap(data_dir: Path) -> None:
    path = data_dir / "train" / "paranmt5m-sample-10k.tsv.gz"
    rows = list(load_paranmt("pairs", str(path), compute_overlap=True, tokenizer="whitespace").take(500))
    assert len(rows) == 500
    assert all(r["score"] is None for r in rows)
    overlaps = [r["trigram_overlap"] for r in rows]
    assert all(0.0 <= o <= 1.0 for o in overlaps)
    assert 0.0 < sum(overlaps) / len(overlaps) < 0.7  # the 5M release was filtered for diverse pairs


@pytest.mark.data
def test_real_bitext_file(data_dir: Path) -> None:
    path = data_dir / "train" / "bitext" / "tatoeba-en-es.tsv.gz"
    rows = list(load_paranmt("bitext", str(path)).take(3))
    assert rows[0] == {"english": "Go.", "foreign": "Ve.", "lang": "es"}

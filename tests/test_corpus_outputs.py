"""Every `paranmt-hf corpus` output (TSV, JSON, PNG, folders) is atomic and never replaces an input or an existing
result without --overwrite."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from paranmt_hf.cli.main import main

PAIRS = "a b c d\ta b c e\t0.9\nx y z w\tq r s t\t0.3\n"


@pytest.fixture
def pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.tsv"
    path.write_text(PAIRS)
    return path


def test_histogram_json_and_plot(pairs: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    js, png = tmp_path / "h.json", tmp_path / "h.png"
    args = ["corpus", "histogram", str(pairs), "--tokenizer", "whitespace", "--quiet"]
    assert main([*args, "--json", str(pairs)]) == 1 and pairs.read_text() == PAIRS  # output = input
    assert main([*args, "--json", str(js), "--plot", str(png)]) == 0
    assert json.loads(js.read_text())["total"] == 2 and png.read_bytes()[:4] == b"\x89PNG"
    js.write_text("precious")
    assert main([*args, "--json", str(js)]) == 1 and js.read_text() == "precious"
    assert "already exists" in capsys.readouterr().err
    assert main([*args, "--json", str(js), "--overwrite"]) == 0 and json.loads(js.read_text())["total"] == 2
    assert main([*args, "--plot", str(pairs), "--overwrite"]) == 1 and pairs.read_text() == PAIRS


def test_lexicon_json(pairs: Path, tmp_path: Path) -> None:
    js = tmp_path / "lex.json"
    args = ["corpus", "lexicon", str(pairs), "--word", "a", "--min-score", "0", "--quiet"]
    assert main([*args, "--json", str(pairs), "--overwrite"]) == 1 and pairs.read_text() == PAIRS
    assert main([*args, "--json", str(js)]) == 0 and json.loads(js.read_text())["pairs_used"] == 2
    assert main([*args, "--json", str(js)]) == 1
    assert main([*args, "--json", str(js), "--overwrite"]) == 0


def test_pivot_output(tmp_path: Path) -> None:
    bitext = tmp_path / "tatoeba-en-es.tsv.gz"
    bitext.write_bytes(gzip.compress(b"Go.\tVete.\nGo away.\tVete.\n"))
    before = bitext.read_bytes()
    out = tmp_path / "pivots.tsv.gz"
    assert main(["corpus", "pivot", str(bitext), "-o", str(bitext), "--overwrite"]) == 1
    assert bitext.read_bytes() == before
    assert main(["corpus", "pivot", str(bitext), "-o", str(out), "--quiet"]) == 0
    assert gzip.decompress(out.read_bytes()).decode() == "Go.\tGo away.\n"
    assert main(["corpus", "pivot", str(bitext), "-o", str(out), "--quiet"]) == 1
    assert main(["corpus", "pivot", str(bitext), "-o", str(out), "--quiet", "--overwrite"]) == 0


def test_export_folder_that_holds_an_input_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "hub"
    folder.mkdir()
    src = folder / "pairs.tsv"
    src.write_text(PAIRS)
    assert main(["corpus", "export", str(src), "--config", "pairs", "-o", str(folder), "--overwrite",
                 "--quiet"]) == 1
    assert src.read_text() == PAIRS


def test_export_of_nothing_valid_fails_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "bad.tsv"
    src.write_text("no tabs here\nnor here\n")
    assert main(["corpus", "export", str(src), "--config", "pairs", "-o", str(tmp_path / "hub"), "--quiet"]) == 1
    assert not (tmp_path / "hub").exists()

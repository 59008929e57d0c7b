"""Pivot paraphrases: English sentences that translate the same foreign sentence, from bitext files."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from paranmt_hf.cli.main import main
from paranmt_hf.corpus.output.pivot import PivotStats, pivot_files, pivot_groups


def _write(path: Path, rows: list[tuple[str, str]]) -> str:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in rows)
    return str(path)


def test_pivot_groups_pairs_distinct_translations_once():
    bitext = [
        ("es", "I am fine.", "Estoy bien."),
        ("es", "I'm doing well.", "Estoy  bien."),  # same foreign sentence up to whitespace
        ("es", "i am fine.", "Estoy bien."),  # same English up to case: not a pair
        ("fr", "I am fine.", "Je vais bien."),
        ("fr", "I'm doing well.", "Je vais bien."),  # the same pair through French: emitted once
        ("de", "Go.", "Geh."),
        ("es", "Go away.", "Geh."),  # the same string in another language does not group
        ("es", "Hello.", ""),  # empty side: ignored
    ]
    stats = PivotStats()
    assert list(pivot_groups(bitext, stats=stats)) == [("I am fine.", "I'm doing well.")]
    assert (stats.bitext_pairs, stats.groups, stats.pairs, stats.duplicates) == (8, 2, 1, 1)


def test_pivot_groups_caps_large_groups():
    bitext = [("es", f"sentence {i}.", "Hola.") for i in range(6)]
    stats = PivotStats()
    pairs = list(pivot_groups(bitext, max_group=3, stats=stats))
    assert pairs == [("sentence 0.", "sentence 1."), ("sentence 0.", "sentence 2."), ("sentence 1.", "sentence 2.")]
    assert stats.capped_groups == 1
    with pytest.raises(ValueError, match="max_group"):
        list(pivot_groups(bitext, max_group=1))


def test_pivot_files_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    es = _write(tmp_path / "tatoeba-en-es.tsv.gz", [("Who owns this house?", "¿De quién es esta casa?"),
                                                   ("Whose house is this?", "¿De quién es esta casa?"),
                                                   ("Hi.", "Hola.")])
    de = _write(tmp_path / "de-en.tsv.gz", [("Das ist mein Hund.", "That is my dog."),
                                            ("Das ist mein Hund.", "This is my dog.")])  # English second
    expected = [("Who owns this house?", "Whose house is this?"), ("That is my dog.", "This is my dog.")]
    assert list(pivot_files([es, de])) == expected
    out = tmp_path / "pivots.tsv.gz"
    assert main(["corpus", "pivot", es, de, "-o", str(out)]) == 0
    with gzip.open(out, "rt", encoding="utf-8") as f:
        assert [tuple(line.rstrip("\n").split("\t")) for line in f] == expected
    assert "-> 2 English paraphrase pairs" in capsys.readouterr().out

"""Ordinary mistakes end in one sentence, before any slow work: a training file that cannot hold pairs (empty, a
NumPy array, one column), ``export --format static`` of a model StaticEmbedding cannot reproduce; and the documented
chain ``corpus annotate ... --measure bleu`` into ``corpus histogram`` runs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf import build_encoder
from paranmt_hf.cli.main import main

CORPUS = ["a man plays the guitar .", "a woman slices an onion .", "two dogs run in the park ."] * 3


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    blank_gz = tmp_path / "blank.tsv.gz"
    blank_gz.write_bytes(gzip.compress(b"\n\n"))
    array = tmp_path / "vectors.npy"
    np.save(array, np.ones((3, 4), dtype=np.float32))
    one_column = tmp_path / "sentences.txt"
    one_column.write_text("a man plays the guitar .\na woman slices an onion .\n")
    binary = tmp_path / "data.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    return {"empty": (empty, "is empty"), "blank": (blank_gz, "is empty"),
            "npy": (array, "is a NumPy array (.npy), not text"), "one column": (one_column, "has one column"),
            "binary": (binary, "is binary, not UTF-8 text")}


@pytest.mark.parametrize("case", ["empty", "blank", "npy", "one column", "binary"])
def test_a_training_file_that_cannot_hold_pairs_is_one_sentence(case: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    path, expected = _bad_files(tmp_path)[case]
    with pytest.raises(SystemExit) as err:
        main(["train", "--kind", "word", "--train", str(path), "--output", str(tmp_path / "m"), "--dev", "none"])
    line = _one_line(capsys.readouterr().err)
    assert err.value.code == 1 and line.startswith("paranmt-hf train: training file ") and expected in line, line
    assert "two tab-separated sentences" in line
    assert not (tmp_path / "m").exists()


def test_good_training_files_pass_the_check(tmp_path: Path) -> None:
    from paranmt_hf.training.data import check_training_file

    pairs = tmp_path / "pairs.tsv.gz"
    pairs.write_bytes(gzip.compress(b"a man plays .\tsomeone plays .\n" * 3))
    check_training_file(str(pairs))
    (tmp_path / "header.tsv").write_text("reference\tparaphrase\tparaphrase_score\nx .\ty .\t0.5\n")
    check_training_file(str(tmp_path / "header.tsv"))


def test_a_repeat_count_below_one_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("a man plays .\tsomeone plays .\n")
    with pytest.raises(SystemExit) as err:
        main(["train", "--kind", "word", "--train", f"{pairs}@0", "--output", str(tmp_path / "m"), "--dev", "none"])
    line = _one_line(capsys.readouterr().err)
    assert err.value.code == 2 and f"{pairs}@0" in line and "repeat count after '@' must be 1 or more" in line, line
    assert not (tmp_path / "m").exists()


def test_two_columns_read_as_full_are_refused_before_loading(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``full`` reads reference, paraphrase and score: a two-column file is named, with the config that reads it."""
    import paranmt_hf.dataset_scripts.loading as loading

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was loaded before the check")

    monkeypatch.setattr(loading, "load_paranmt", never)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("a man plays .\tsomeone plays .\n" * 3)
    with pytest.raises(SystemExit) as err:
        main(["train", "--kind", "word", "--train", f"full:{pairs}", "--output", str(tmp_path / "m"), "--dev",
              "none"])
    line = _one_line(capsys.readouterr().err)
    assert err.value.code == 1 and str(pairs) in line and "the full config reads 3" in line, line
    assert f"pairs:{pairs}" in line and not (tmp_path / "m").exists()


def test_a_training_file_without_a_valid_pair_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Lines that look like pairs but are all bad (a score that is no number) are counted by the builder: then
    the file is named in one sentence."""
    scored = tmp_path / "scored.tsv"
    scored.write_text("a man plays .\tsomeone plays .\tnot-a-number\n" * 3)
    with pytest.raises(SystemExit) as err:
        main(["train", "--kind", "word", "--train", f"full:{scored}", "--output", str(tmp_path / "m"), "--dev",
              "none", "--no-progress"])
    line = _one_line(capsys.readouterr().err)
    assert err.value.code == 1 and f"{scored}: no valid pair to load for config 'full'" in line, line


@pytest.mark.parametrize(("kind", "found"), [("trigram", "is a trigram model"),
                                             ("trigram+word", "is a trigram+word combination"),
                                             ("lstm", "is a recurrent lstm model")])
def test_export_static_refuses_from_the_config_before_loading(kind: str, found: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture) -> None:
    model = tmp_path / "model"
    build_encoder(kind, CORPUS, embedding_dim=4, seed=0).save_pretrained(model, sentence_transformers=False)
    from paranmt_hf.model.encoder import ParaNMTEncoder

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was loaded before the check")

    monkeypatch.setattr(ParaNMTEncoder, "from_pretrained", never)
    capsys.readouterr()  # the save's progress bar
    with pytest.raises(SystemExit) as err:
        main(["export", str(model), "--format", "static", "--output", str(tmp_path / "out")])
    line = _one_line(capsys.readouterr().err)
    assert err.value.code == 2 and found in line and "--format fp16" in line, line
    assert not (tmp_path / "out").exists()


def test_annotate_output_goes_into_histogram(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("sacrebleu")
    model = tmp_path / "model"
    build_encoder("word", CORPUS, embedding_dim=4, seed=0).save_pretrained(model, sentence_transformers=False)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("a man plays the guitar .\ta man plays a guitar .\n"
                     "two dogs run in the park .\tthe dogs are running .\n"
                     "a woman slices an onion .\tsomeone cuts an onion .\n")
    scored = tmp_path / "scored.tsv"
    assert main(["corpus", "annotate", str(pairs), "-o", str(scored), "--model", str(model), "--measure", "bleu",
                 "--quiet"]) == 0
    header = scored.read_text().splitlines()[0].split("\t")
    assert header[:3] == ["reference", "paraphrase", "paraphrase_score"] and "bleu" in header
    capsys.readouterr()
    assert main(["corpus", "histogram", str(scored), "--json", str(tmp_path / "h.json"), "--quiet"]) == 0
    histogram = json.loads((tmp_path / "h.json").read_text())
    assert histogram["total"] == 3  # the header is not a pair, nor a bad line
    assert "bad" not in capsys.readouterr().err
    no_score = tmp_path / "bt.tsv"
    no_score.write_text("reference\tparaphrase\ttranslation_cost\na .\tb .\t0.5\n")
    assert main(["corpus", "histogram", str(no_score), "--quiet"]) == 1
    assert "has no paraphrase_score column" in _one_line(capsys.readouterr().err)

"""`paranmt-hf train-translator`: a Marian trained from scratch on a tiny bitext built in code (a few steps), its
BLEU on held-out pairs in translator_metrics.json, a folder that both back-translation engines run (its position
table covers the generation cap, which both read), and the outputs it refuses."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from paranmt_hf.cli.errors import CommandFailed
from paranmt_hf.cli.main import main

pytest.importorskip("torch")
pytest.importorskip("sacrebleu")

WORDS = {"der": "the", "die": "the", "Katze": "cat", "Hund": "dog", "Haus": "house", "sieht": "sees",
         "rennt": "runs", "gross": "big", "klein": "small", "rot": "red", "und": "and", "nicht": "not"}
TINY = ["--size", "tiny", "--vocab-size", "80", "--max-steps", "6", "--batch-size", "16", "--warmup-steps", "2",
        "--max-length", "24", "--no-progress"]


def _bitext(path: Path, lines: int = 120, seed: int = 0) -> Path:
    rng = random.Random(seed)
    rows = []
    for _ in range(lines):
        source = rng.choices(list(WORDS), k=rng.randint(2, 7))
        rows.append(" ".join(source) + "\t" + " ".join(WORDS[w] for w in source) + "\n")
    rows += rows[:5]  # exact duplicates: dropped, counted
    path.write_text("".join(rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("translator")
    src = _bitext(root / "tiny.de-en.tsv")
    assert main(["train-translator", str(src), "--source-lang", "de", "-o", str(root / "mt"), "--held-out", "12",
                 *TINY]) == 0
    return root / "mt"


def test_no_progress_is_silent(trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = _bitext(tmp_path / "tiny.de-en.tsv", lines=40)
    capsys.readouterr()
    assert main(["train-translator", str(src), "--source-lang", "de", "-o", str(tmp_path / "mt"), *TINY]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("trained 6 steps on") and "train_runtime" not in out.out + out.err


def test_the_folder_holds_the_model_its_tokenizer_and_bleu(trained: Path) -> None:
    from transformers import AutoConfig, AutoTokenizer, GenerationConfig

    metrics = json.loads((trained / "translator_metrics.json").read_text())
    assert metrics["source_lang"] == "de" and metrics["target_lang"] == "en"
    duplicates = metrics["data"]["duplicates"]
    assert duplicates >= 5 and metrics["data"]["held_out_pairs"] == 12
    assert metrics["data"]["training_pairs"] + 12 == metrics["data"]["lines"] - duplicates
    assert metrics["training"]["steps"] == 6
    assert metrics["bleu"]["sentences"] == 12 and 0 <= metrics["bleu"]["score"] <= 100
    assert metrics["bleu"]["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    config, generation = AutoConfig.from_pretrained(trained), GenerationConfig.from_pretrained(trained)
    assert config.model_type == "marian" and config.max_position_embeddings >= 24 + 2
    assert generation.max_new_tokens is None and generation.max_length == 25  # one cap, both engines read it
    tokenizer = AutoTokenizer.from_pretrained(trained)
    assert tokenizer.model_max_length == 24 and "Katze" in tokenizer.decode(tokenizer("Katze")["input_ids"])
    assert not [p.name for p in trained.iterdir() if p.name.startswith(".") or p.name == "model"]


@pytest.mark.parametrize("engine", ["transformers", "ctranslate2"])
def test_both_back_translation_engines_run_the_trained_folder(trained: Path, tmp_path: Path, engine: str) -> None:
    if engine == "ctranslate2":
        pytest.importorskip("ctranslate2")
    src = _bitext(tmp_path / "other.de-en.tsv", lines=12, seed=3)
    out = tmp_path / "pairs.tsv"
    assert main(["corpus", "backtranslate", str(src), "--model", str(trained), "--engine", engine, "--num-beams",
                 "2", "--tasks", "1", "--quiet", "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("reference\tparaphrase\ttranslation_cost") and len(lines) > 5


def _fails(args: list[str], capsys: pytest.CaptureFixture) -> str:
    with pytest.raises(CommandFailed) as caught:
        main(args)
    err = capsys.readouterr().err.strip()
    assert caught.value.code == 1 and len(err.splitlines()) == 1, err
    return err


def test_the_output_is_never_an_input(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = _bitext(tmp_path / "tiny.de-en.tsv")
    before = src.read_bytes()
    for output in (src, tmp_path):  # the bitext, the folder holding it
        err = _fails(["train-translator", str(src), "--source-lang", "de", "-o", str(output), "--overwrite", *TINY],
                     capsys)
        assert "is the input" in err and src.read_bytes() == before


def test_a_bitext_without_a_known_source_column_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = _bitext(tmp_path / "pairs.tsv")
    err = _fails(["train-translator", str(src), "--source-lang", "de", "-o", str(tmp_path / "mt"), *TINY], capsys)
    assert "pass --source-column 1|2" in err and not (tmp_path / "mt").exists()
    err = _fails(["train-translator", str(src), "--source-lang", "de", "-o", str(tmp_path / "mt"), "--held-out", "500",
                  "--source-column", "1", *TINY], capsys)
    assert "leaves no training pair" in err

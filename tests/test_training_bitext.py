"""Cross-lingual training: a tiny SP model trained on bitext + English paraphrases mines its own translations."""

from __future__ import annotations

import gzip
import itertools
import json

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")

from paranmt_hf import ParaNMTEncoder  # noqa: E402
from paranmt_hf.cli.main import main as cli  # noqa: E402
from paranmt_hf.data.configs import bitext_sides  # noqa: E402
from paranmt_hf.evaluation.metrics import bitext_error_rates  # noqa: E402
from paranmt_hf.training.data import load_pairs  # noqa: E402
from paranmt_hf.training.initial_model import vocab_corpus  # noqa: E402
from paranmt_hf.training.recipes import get_recipe  # noqa: E402
from paranmt_hf.training.trainer import run_folder  # noqa: E402

SUBJECTS = [("the man", "el hombre"), ("the woman", "la mujer"), ("the dog", "el perro"), ("the cat", "el gato"),
            ("the boy", "el niño"), ("my teacher", "mi maestro")]
VERBS = [("eats", "come"), ("sees", "ve"), ("wants", "quiere"), ("has", "tiene"), ("buys", "compra")]
OBJECTS = [("an apple", "una manzana"), ("the house", "la casa"), ("a book", "un libro"), ("the car", "el coche"),
           ("bread", "pan"), ("water", "agua")]
PARAPHRASES = [("the man eats bread .", "a man is eating bread ."),
               ("the dog sees the car .", "a dog looks at a car ."),
               ("my teacher has a book .", "my teacher owns a book ."),
               ("the cat wants water .", "a cat needs water .")]


def bitext() -> list[tuple[str, str]]:
    """180 English-Spanish translations: every subject x verb x object (each bag of words is unique)."""
    return [(f"{s} {v} {o} .", f"{fs} {fv} {fo} .")
            for (s, fs), (v, fv), (o, fo) in itertools.product(SUBJECTS, VERBS, OBJECTS)]


def write(path, rows) -> str:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(f"{a}\t{b}\n" for a, b in rows)
    return str(path)


def mining_error(model_dir, pairs) -> dict[str, float]:
    encoder = ParaNMTEncoder.from_pretrained(model_dir)
    return bitext_error_rates(encoder.encode([b for _, b in pairs]), encoder.encode([a for a, _ in pairs]))


def test_bitext_helpers(tmp_path):
    assert bitext_sides("data/tatoeba-en-es.tsv.gz") == (True, "es")
    assert bitext_sides("/x/fra-en.tsv") == (False, "fra") and bitext_sides("flickr30k-pairs.tsv.gz") is None
    translations = write(tmp_path / "tiny-en-es.tsv.gz", bitext()[:20])
    paraphrases = write(tmp_path / "pairs.tsv.gz", PARAPHRASES)
    ds = load_pairs([translations, f"pairs:{paraphrases}@2"], seed=0)
    kinds = dict(zip(ds["anchor"], ds["label"], strict=False))
    assert len(ds) == 28 and kinds["the man eats an apple ."] == 1 and kinds["my teacher has a book ."] == 0
    assert len(vocab_corpus(ds, 7)) == 8 and len(vocab_corpus(ds)) == 56  # both sides of ceil(7 / 2) pairs
    with pytest.raises(ValueError, match="vocab_sentences"):
        vocab_corpus(ds, 0)


@pytest.mark.timeout(300)
def test_tiny_bitext_model_trains_saves_and_mines_its_translations(tmp_path):
    pairs = bitext()
    translations = write(tmp_path / "tiny-en-es.tsv.gz", pairs)
    paraphrases = write(tmp_path / "paraphrases.tsv.gz", PARAPHRASES)
    out = tmp_path / "model"
    args = ["train", "--recipe", "pras-bitext", "--train", translations, f"pairs:{paraphrases}@5",
            "--output", str(out), "--vocab-size", "120", "--vocab-sentences", "300", "--embedding-dim", "32",
            "--batch-size", "16", "--megabatch-size", "3", "--anneal", "10", "--lr", "0.05", "--epochs", "12",
            "--dev", "--save-steps", "1000", "--no-progress", "--keep-checkpoints"]
    assert cli(args) == 0
    before, after = mining_error(run_folder(out) / "initial-model", pairs), mining_error(out, pairs)
    assert before["error"] > 50  # the untrained model cannot mine: the test measures learning
    assert after["error_xx2en"] <= 5 and after["error_en2xx"] <= 5, after
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["recipe"]["name"] == "pras-bitext" and summary["recipe"]["vocab_sentences"] == 300
    assert summary["sources"][0].startswith("bitext:")
    assert summary["loss_stats"]["minibatches_seen"] == summary["steps"]
    # one shared vocabulary: the Spanish words are pieces of the same tokenizer
    encoder = ParaNMTEncoder.from_pretrained(out)
    assert len(encoder.tokenizer) <= 120
    assert encoder.tokenizer("el perro quiere agua .")["input_ids"] != encoder.tokenizer("the dog wants water .")[
        "input_ids"]
    # the evaluation command reads the same model and mines in the LASER layout
    data = tmp_path / "data" / "eval" / "tatoeba"
    data.mkdir(parents=True)
    (data / "tatoeba.spa-eng.spa").write_text("".join(f"{b}\n" for _, b in pairs))
    (data / "tatoeba.spa-eng.eng").write_text("".join(f"{a}\n" for a, _ in pairs))
    assert cli(["eval", str(out), "--tasks", "Tatoeba:spa", "--data-dir", str(tmp_path / "data"),
                "--output", str(tmp_path / "eval")]) == 0
    result = json.loads(next((tmp_path / "eval").rglob("Tatoeba.json")).read_text())["paranmt_hf"]["scores"]
    assert np.isclose(result["test"][0]["error"], after["error"])
    assert get_recipe("pras-bitext").kind == "sp"

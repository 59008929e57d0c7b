"""``paranmt-hf build`` and ``paranmt-hf build-tokenizer`` on a small TSV file."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from transformers import AutoTokenizer

from paranmt_hf import ParaNMTEncoder
from paranmt_hf.cli.main import main

LINES = ["a man plays the guitar .\tsomeone is playing a guitar .", "two dogs run .\tthe dogs are running ."] * 20


def _corpus(tmp_path):
    path = tmp_path / "pairs.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(LINES) + "\n")
    return str(path)


def test_build_writes_a_model_of_the_requested_kind(tmp_path):
    out = tmp_path / "model"
    assert (
        main(
            [
                "build",
                "--kind",
                "bilstm",
                "--input",
                _corpus(tmp_path),
                "--embedding-dim",
                "8",
                "--rnn-hidden-size",
                "6",
                "--pooling",
                "max",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    enc = ParaNMTEncoder.from_pretrained(out)
    assert (enc.config.kind, enc.config.rnn_hidden_size, enc.config.pooling, enc.embedding_dim) == (
        "bilstm",
        6,
        "max",
        6,
    )
    assert enc.encode(["a man plays"]).shape == (1, 6)


def test_build_combination_is_seeded(tmp_path):
    corpus = _corpus(tmp_path)
    for name in ("a", "b"):
        assert (
            main(
                [
                    "build",
                    "--kind",
                    "trigram+word",
                    "--input",
                    corpus,
                    "--embedding-dim",
                    "8",
                    "--combination",
                    "add",
                    "--seed",
                    "3",
                    "--output",
                    str(tmp_path / name),
                ]
            )
            == 0
        )
    a, b = (ParaNMTEncoder.from_pretrained(tmp_path / n).encode(["two dogs"]) for n in ("a", "b"))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (1, 8)


TRIGRAMS = [" tw", "two", "wo ", "o d", " do", "dog", "ogs", "gs "]


@pytest.mark.parametrize(
    "kind, model_type, tokens",
    [
        ("word", "WordLevel", ["two", "dogs"]),
        ("trigram", None, TRIGRAMS),  # paranmt_tokenizer.json (remote code), no tokenizer.json
        ("sp", "Unigram", None),  # pieces of a 28-piece unigram model: they spell "▁two▁dogs"
        ("subword", "WordPiece", ["two", "dogs"]),
    ],
)
def test_build_tokenizer_kinds(tmp_path, kind, model_type, tokens):
    out = tmp_path / kind
    args = ["build-tokenizer", "--kind", kind, "--input", _corpus(tmp_path), "--output", str(out)]
    assert main(args + (["--vocab-size", "40"] if kind == "sp" else [])) == 0
    tok = AutoTokenizer.from_pretrained(out)
    assert tok.convert_ids_to_tokens(0) == "[PAD]"
    pieces = tok.convert_ids_to_tokens(tok("two dogs")["input_ids"])
    saved = out / "tokenizer.json"
    assert (json.loads(saved.read_text())["model"]["type"] if saved.is_file() else None) == model_type
    if kind == "sp":
        assert "".join(pieces) == "▁two▁dogs" and len(pieces) > 2
    else:
        assert pieces == tokens


def test_build_never_replaces_an_existing_model_without_overwrite(tmp_path):
    out = tmp_path / "model"
    args = ["build", "--kind", "word", "--input", _corpus(tmp_path), "--embedding-dim", "8", "--output", str(out)]
    assert main(args) == 0
    before = (out / "model.safetensors").read_bytes()
    with pytest.raises(SystemExit, match="--overwrite"):
        main([*args[:-2], "--embedding-dim", "4", "--output", str(out)])
    assert (out / "model.safetensors").read_bytes() == before
    assert main([*args, "--embedding-dim", "4", "--overwrite"]) == 0
    assert ParaNMTEncoder.from_pretrained(out).embedding_dim == 4


def test_build_tokenizer_says_when_the_corpus_gives_fewer_pieces(tmp_path, capsys, caplog):
    out = tmp_path / "sp"
    assert main(["build-tokenizer", "--kind", "sp", "--input", _corpus(tmp_path), "--vocab-size", "50000",
                 "--output", str(out)]) == 0
    size = len(AutoTokenizer.from_pretrained(out))
    assert size < 1000  # a 40-line corpus cannot give 50,000 pieces
    assert f"({size} tokens, fewer than the 50000 asked" in capsys.readouterr().out
    assert f"asked for 50000 pieces, the corpus gave {size}" in caplog.text

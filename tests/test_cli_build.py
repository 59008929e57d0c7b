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


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _bad_corpus(tmp_path, case):
    """(input files, extra flags) of one bad corpus."""
    if case == "bad utf-8":
        (tmp_path / "bad.txt").write_bytes(b"a man plays .\n\xff\xfe two dogs\n")
        return [str(tmp_path / "bad.txt")], []
    if case == "folder":
        (tmp_path / "folder").mkdir()
        return [str(tmp_path / "folder")], []
    if case == "empty":
        (tmp_path / "empty.txt").write_bytes(b"\n \n")
        return [str(tmp_path / "empty.txt")], []
    return [_corpus(tmp_path)], {"column past the last": ["--columns", "0,5"],
                                 "rare tokens": ["--min-count", "100000000"]}[case]


BAD_CORPORA = {
    "bad utf-8": "bad.txt:2: not valid UTF-8",
    "folder": "folder is a folder",
    "empty": "no sentence in ",
    "column past the last": "pairs.tsv.gz:1: the line has 2 column(s), --columns 0,5 asks for column 5",
    "rare tokens": "no word token seen at least --min-count 100000000 times",
}


@pytest.mark.parametrize("command", ["build-tokenizer", "build"])
@pytest.mark.parametrize("case", list(BAD_CORPORA))
def test_a_corpus_that_gives_no_vocabulary_is_one_sentence(command, case, tmp_path, capsys):
    inputs, flags = _bad_corpus(tmp_path, case)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as status:
        main([command, "--kind", "word", "--input", *inputs, *flags, "--output", str(out)])
    line = _one_line(capsys.readouterr().err)
    assert status.value.code == 1 and line.startswith(f"paranmt-hf {command}: ") and BAD_CORPORA[case] in line, line
    assert not out.exists()


@pytest.mark.parametrize("command", ["build-tokenizer", "build"])
@pytest.mark.parametrize(("flag", "value", "says"), [
    ("--columns", "x,y", "is not 'all' or a comma-separated list of column numbers"),
    ("--columns", "-1", "is not 'all' or a comma-separated list of column numbers"),
    ("--limit", "0", "must be > 0"),
    ("--limit", "-1", "must be > 0"),
    ("--vocab-size", "0", "must be"),
    ("--vocab-size", "-5", "must be"),
    ("--min-count", "-1", "must be >= 0"),
])
def test_out_of_range_corpus_flags_are_refused_when_parsed(command, flag, value, says, tmp_path, capsys):
    with pytest.raises(SystemExit) as status:
        main([command, "--kind", "word", "--input", _corpus(tmp_path), f"{flag}={value}", "--output",
              str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status.value.code == 2 and f"argument {flag}: " in err and says in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["build-tokenizer", "build"])
def test_an_sp_vocabulary_smaller_than_the_characters_names_vocab_size(command, tmp_path, capsys):
    with pytest.raises(SystemExit) as status:
        main([command, "--kind", "sp", "--input", _corpus(tmp_path), "--vocab-size", "5", "--output",
              str(tmp_path / "out")])
    line = _one_line(capsys.readouterr().err)
    assert status.value.code == 1 and line.startswith(f"paranmt-hf {command}: --vocab-size 5 is smaller than "), line


def test_iter_sentences_reads_asked_columns_and_refuses_what_it_cannot_read(tmp_path):
    from paranmt_hf.data.reader import InputError
    from paranmt_hf.data.sentences import iter_sentences
    from paranmt_hf.model.tokenization import VocabularyError, build_tokenizer

    path = tmp_path / "c.tsv"
    path.write_bytes("\ufeffa\tb\tc\n\n d \t\te\n".encode())
    assert list(iter_sentences([str(path)])) == ["a", "b", "c", " d ", "e"]
    assert list(iter_sentences([str(path)], "2,0", limit=1)) == ["c", "a"]
    for columns in ("1;2", "one", "", "0,-1"):
        with pytest.raises(InputError, match="column numbers"):
            list(iter_sentences([str(path)], columns))
    blank = tmp_path / "blank.tsv"
    blank.write_text("a\t \nb\t\n")
    with pytest.raises(InputError, match="no sentence in columns 1 of "):
        list(iter_sentences([str(blank)], "1"))
    with pytest.raises(ValueError, match="limit must be >= 1"):
        list(iter_sentences([str(path)], limit=0))
    with pytest.raises(VocabularyError, match="vocab_size=2 leaves no room"):
        build_tokenizer("word", ["a b"], vocab_size=2)

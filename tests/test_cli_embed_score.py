"""``paranmt-hf embed`` and ``paranmt-hf score`` on real files (streaming in small chunks)."""

from __future__ import annotations

import numpy as np
import pytest

from paranmt_hf.cli.main import main
from paranmt_hf.evaluation.metrics import paired_cosine
from paranmt_hf.evaluation.streaming import InputLineError, count_lines, embed_file

pytestmark = pytest.mark.data  # every test here reads the shared real data


@pytest.fixture(scope="module")
def tiny(data_dir, tmp_path_factory):
    from paranmt_hf import ParaNMTEncoder, build_encoder

    lines = (data_dir / "eval" / "tatoeba" / "tatoeba.fra-eng.eng").read_text(encoding="utf-8").splitlines()
    path = tmp_path_factory.mktemp("tiny_embed")
    build_encoder("word", corpus=lines, vocab_size=1500, embedding_dim=12).save_pretrained(path)
    return path, ParaNMTEncoder.from_pretrained(path)


def test_embed_npy_streams_in_chunks(tiny, data_dir, tmp_path, capsys):
    model_dir, encoder = tiny
    src = data_dir / "eval" / "tatoeba" / "tatoeba.fra-eng.eng"
    out = tmp_path / "emb.npy"
    assert main(["embed", str(model_dir), "--input", str(src), "--output", str(out), "--chunk-size", "128",
                 "--batch-size", "50"]) == 0
    assert "wrote 1000 x 12" in capsys.readouterr().out
    emb = np.load(out, mmap_mode="r")
    lines = src.read_text(encoding="utf-8").splitlines()
    assert emb.shape == (1000, 12) and emb.dtype == np.float32
    np.testing.assert_allclose(emb, encoder.encode(lines), rtol=1e-5, atol=1e-6)


def test_embed_raw_normalized_and_edge_cases(tiny, tmp_path):
    model_dir, encoder = tiny
    src = tmp_path / "s.txt"
    src.write_text("a man plays\n\nthe dog runs .", encoding="utf-8")  # empty line kept, no final newline
    assert count_lines(src) == 3
    raw = tmp_path / "emb.raw"
    main(["embed", str(model_dir), "--input", str(src), "--output", str(raw), "--format", "raw", "--normalize",
          "--chunk-size", "2"])
    emb = np.fromfile(raw, dtype=np.float32).reshape(-1, 12)
    expected = encoder.encode(["a man plays", "", "the dog runs ."], normalize_embeddings=True)
    np.testing.assert_allclose(emb, expected, rtol=1e-5, atol=1e-6)
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputLineError, match="is empty"):  # not a (0, 0) array that looks like a result
        embed_file(encoder, empty, tmp_path / "e.npy")
    assert not (tmp_path / "e.npy").exists()


def test_score_real_pairs(tiny, data_dir, tmp_path):
    model_dir, encoder = tiny
    src = data_dir / "eval" / "sts" / "STS16-en-test" / "STS.input.headlines.txt"  # 4 columns: 2 ignored
    out = tmp_path / "scored.tsv"
    assert main(["score", str(model_dir), "--input", str(src), "--output", str(out), "--chunk-size", "300"]) == 0
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    inputs = [line.split("\t") for line in src.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(inputs) == 1498 and all(len(r) == 3 for r in rows)
    assert [r[:2] for r in rows] == [i[:2] for i in inputs]
    expected = paired_cosine(encoder.encode([i[0] for i in inputs]), encoder.encode([i[1] for i in inputs]))
    np.testing.assert_allclose([float(r[2]) for r in rows], expected, atol=2e-6)


def test_score_stdout_and_bad_line(tiny, tmp_path, capsys):
    model_dir, _ = tiny
    good = tmp_path / "p.tsv"
    good.write_text("a man plays\ta man plays\n\nthe dog\ta cat\n", encoding="utf-8")
    main(["score", str(model_dir), "--input", str(good)])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("a man plays\ta man plays\t1.0")
    assert lines[1] == "\t\tnan" and "line(s) 2" in captured.err  # the blank line keeps its row
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nno tab\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"bad.tsv:2"):
        main(["score", str(model_dir), "--input", str(bad)])


def test_embed_rows_line_up_with_lines(tiny, tmp_path):
    model_dir, encoder = tiny
    src = tmp_path / "cr.txt"
    src.write_bytes(b"a man\nfirst\rsecond\nthe dog\r\nruns\n")  # a \r inside a line; a CRLF ending
    out = tmp_path / "cr.npy"
    assert main(["embed", str(model_dir), "--input", str(src), "--output", str(out), "--chunk-size", "2"]) == 0
    emb = np.load(out)
    assert emb.shape == (4, 12)
    np.testing.assert_allclose(emb, encoder.encode(["a man", "first\rsecond", "the dog", "runs"]), atol=1e-6)


def test_embed_invalid_utf8_names_the_line_and_leaves_no_output(tiny, tmp_path):
    model_dir, _ = tiny
    src = tmp_path / "bad.txt"
    src.write_bytes(b"a man\nthe dog\n" * 3 + b"caf\xe9 au lait\n" + b"a man\n" * 5)
    for fmt in ("npy", "raw"):
        out = tmp_path / f"out.{fmt}"
        with pytest.raises(SystemExit, match=r"bad.txt:7: not valid UTF-8"):
            main(["embed", str(model_dir), "--input", str(src), "--output", str(out), "--format", fmt,
                  "--chunk-size", "2"])
        assert not out.exists()  # no partial file that looks valid
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]


def test_outputs_never_replace_inputs_or_results_without_overwrite(tiny, tmp_path):
    import gzip

    model_dir, _ = tiny
    text = tmp_path / "s.txt.gz"
    with gzip.open(text, "wt", encoding="utf-8") as f:
        f.write("a man\tthe dog\n")
    link = tmp_path / "link.gz"
    link.symlink_to(text)
    before = text.read_bytes()
    for command in ("embed", "score"):
        for out in (text, link):
            with pytest.raises(SystemExit, match="is the input"):
                main([command, str(model_dir), "--input", str(text), "--output", str(out), "--overwrite"])
    assert text.read_bytes() == before
    out = tmp_path / "scored.tsv"
    assert main(["score", str(model_dir), "--input", str(text), "--output", str(out)]) == 0
    with pytest.raises(SystemExit, match="--overwrite"):
        main(["score", str(model_dir), "--input", str(text), "--output", str(out)])
    assert main(["score", str(model_dir), "--input", str(text), "--output", str(out), "--overwrite"]) == 0
    assert out.read_text().startswith("a man\tthe dog\t")


def test_score_keeps_a_row_for_whitespace_pairs(tiny, tmp_path, capsys):
    model_dir, encoder = tiny
    src = tmp_path / "p.tsv"
    src.write_text("a man\tthe dog\n \t \nthe dog\t\n\ntwo kids\ta man\n", encoding="utf-8")
    out = tmp_path / "o.tsv"
    assert main(["score", str(model_dir), "--input", str(src), "--output", str(out)]) == 0
    rows = [r.split("\t") for r in out.read_text(encoding="utf-8").split("\n")[:-1]]
    assert len(rows) == 5 and [r[2] for r in rows[1:4]] == ["nan", "nan", "nan"]
    assert rows[4][:2] == ["two kids", "a man"]
    expected = paired_cosine(encoder.encode(["two kids"]), encoder.encode(["a man"]))[0]
    assert abs(float(rows[4][2]) - expected) < 2e-6
    err = capsys.readouterr().err
    assert "3 line(s)" in err and "line(s) 2, 3, 4" in err


# ---- outputs never replace a model file; damaged inputs are named ---------------------------------------------
def test_a_file_of_the_model_folder_is_never_an_output(tiny, tmp_path):
    import shutil

    model_dir = tmp_path / "model"
    shutil.copytree(tiny[0], model_dir)
    before = {p.name: p.read_bytes() for p in model_dir.iterdir() if p.is_file()}
    src = tmp_path / "in.tsv"
    src.write_text("a man plays\ta dog runs\n", encoding="utf-8")
    for command, name in (("embed", "model.safetensors"), ("embed", "config.json"), ("score", "tokenizer.json")):
        with pytest.raises(SystemExit, match="is the input"):
            main([command, str(model_dir), "--input", str(src), "--output", str(model_dir / name), "--overwrite"])
    assert {p.name: p.read_bytes() for p in model_dir.iterdir() if p.is_file()} == before
    # a new file next to the model is not a file of the model
    assert main(["embed", str(model_dir), "--input", str(src), "--output", str(model_dir / "emb.npy")]) == 0


def test_an_empty_input_is_an_error(tiny, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    for command, out in (("embed", "e.npy"), ("score", "s.tsv")):
        with pytest.raises(SystemExit, match=f"paranmt-hf {command}: .*empty.txt is empty"):
            main([command, str(tiny[0]), "--input", str(empty), "--output", str(tmp_path / out)])
        assert not (tmp_path / out).exists()


def test_a_folder_or_a_missing_input_is_one_sentence(tiny, tmp_path):
    (tmp_path / "texts").mkdir()
    for command, out in (("embed", "e.npy"), ("score", "s.tsv")):
        for given, says in (("texts", "is a folder: give a text file"), ("missing.txt", "does not exist")):
            with pytest.raises(SystemExit) as err:
                main([command, str(tiny[0]), "--input", str(tmp_path / given), "--output", str(tmp_path / out)])
            assert str(err.value) == f"paranmt-hf {command}: --input {tmp_path / given} {says}" + (
                " (one line per sentence or pair)" if given == "texts" else "")
        assert not (tmp_path / out).exists()


def test_a_closed_stdout_pipe_ends_quietly(tiny, tmp_path):
    import subprocess
    import sys

    src = tmp_path / "pairs.tsv"
    src.write_text("a man plays the guitar\ta dog runs in the park\n" * 20000, encoding="utf-8")
    command = [sys.executable, "-m", "paranmt_hf.cli.main", "score", str(tiny[0]), "--input", str(src)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"a man plays")
    proc.stdout.close()  # `| head -1`
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr and "Exception ignored" not in stderr


def test_embed_help_says_what_a_very_long_line_costs(capsys):
    with pytest.raises(SystemExit):
        main(["embed", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "very long line" in help_text and "10 MB line adds" in help_text


def test_outputs_next_to_the_model_can_be_replaced(tiny, tmp_path):
    import shutil

    from paranmt_hf.utils.content_hash import model_files

    model_dir = tmp_path / "model"
    shutil.copytree(tiny[0], model_dir)
    src = tmp_path / "in.txt"
    src.write_text("a man plays\n", encoding="utf-8")
    for _ in range(2):  # an embedding file and an export inside the model folder are not model files
        assert main(["embed", str(model_dir), "--input", str(src), "--output", str(model_dir / "e.npy"),
                     "--overwrite"]) == 0
        assert main(["export", str(model_dir), "--format", "fp16", "--output", str(model_dir / "fp16"),
                     "--overwrite"]) == 0
    names = {p.relative_to(model_dir).as_posix() for p in model_files(model_dir)}
    assert "model.safetensors" in names and "config.json" in names
    assert not any(n.startswith("fp16/") or n == "e.npy" for n in names)

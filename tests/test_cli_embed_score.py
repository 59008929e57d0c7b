"""``paranmt-hf embed`` and ``paranmt-hf score`` on real files (streaming in small chunks)."""

from __future__ import annotations

import numpy as np
import pytest

from paranmt_hf.cli.main import main
from paranmt_hf.evaluation.metrics import paired_cosine
from paranmt_hf.evaluation.streaming import count_lines, embed_file


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
    expected = encoder.encode(["a man plays", "", "the dog runs ."], normalize=True)
    np.testing.assert_allclose(emb, expected, rtol=1e-5, atol=1e-6)
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert embed_file(encoder, empty, tmp_path / "e.npy") == (0, 0)
    assert np.load(tmp_path / "e.npy").shape == (0, 0)


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
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("a man plays\ta man plays\t1.0")
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nno tab\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"bad.tsv:2"):
        main(["score", str(model_dir), "--input", str(bad)])

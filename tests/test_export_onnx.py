"""ONNX export of averaging encoders, checked with onnxruntime against PyTorch (fp32 and int8)."""

from __future__ import annotations

import numpy as np
import pytest
from _unknown_rows import assert_unknown_rows, randomise_unknown_rows

from paranmt_hf import build_encoder
from paranmt_hf.cli.main import main as cli_main
from paranmt_hf.evaluation.metrics import paired_cosine
from paranmt_hf.model.onnx import OnnxEncoder, export_onnx

pytest.importorskip("onnxruntime")

CORPUS = [
    "A man is playing a guitar.",
    "A woman is slicing an onion.",
    "I don't think it's 3.5 dollars.",
    "Two dogs run in the park!",
    "Café owners say ΣΟΦΙΑ is naïve.",
] * 3
SENTENCES = CORPUS + ["", "   ", "zzz qqq unseen", "a man slices the park", "x"] + [" ".join(CORPUS[:5]) * 3]
CASES = [
    ("word", {}),
    ("trigram", {}),
    ("sp", {"vocab_size": 60}),
    ("subword", {"vocab_size": 80}),
    ("word", {"pooling": "max"}),
    ("trigram", {"drop_unknown_tokens": True}),
    ("trigram+word", {}),
    ("word+trigram", {"combination": "add", "pooling": "max"}),
    ("trigram+sp", {"vocab_size": 60, "drop_unknown_tokens": True}),
]


@pytest.mark.parametrize(("kind", "extra"), CASES)
def test_onnx_fp32_and_int8_match_pytorch(tmp_path, kind, extra):
    encoder = build_encoder(kind, CORPUS, embedding_dim=32, seed=2, **extra)
    unk_rows = randomise_unknown_rows(encoder.model)  # new models start with zero [UNK] rows
    expected = encoder.encode(SENTENCES)
    # empty sentences (and components given only unknown tokens) embed as the [UNK] rows
    ids = encoder.featurizer.reference_ids(SENTENCES)
    assert assert_unknown_rows(encoder.model, unk_rows, ids, expected) >= 2  # at least "" and "   "
    fp32 = OnnxEncoder(export_onnx(encoder, tmp_path / "fp32"))
    got = fp32.encode(SENTENCES, batch_size=7)
    assert got.shape == expected.shape and got.dtype == np.float32
    assert np.abs(got - expected).max() <= 1e-5
    assert_unknown_rows(encoder.model, unk_rows, ids, got, atol=1e-5)
    int8_path = export_onnx(encoder, tmp_path / "int8", int8=True)
    assert int8_path.name == "model_int8.onnx"
    got8 = OnnxEncoder(tmp_path / "int8").encode(SENTENCES)
    assert paired_cosine(got8, expected).min() >= 0.999  # the empty sentences too: their [UNK] rows
    assert np.abs(got8 - expected).max() > 0  # really quantised


def test_int8_file_is_smaller(tmp_path):
    encoder = build_encoder("trigram", CORPUS, embedding_dim=256, seed=0)
    fp32 = export_onnx(encoder, tmp_path / "a")
    int8 = export_onnx(encoder, tmp_path / "b", int8=True)
    assert int8.stat().st_size < 0.4 * fp32.stat().st_size


def test_recurrent_models_and_their_combinations_are_refused(tmp_path):
    with pytest.raises(ValueError, match="averaging"):
        export_onnx(build_encoder("word+lstm", CORPUS, embedding_dim=8), tmp_path / "combo")


def test_recurrent_models_are_refused(tmp_path):
    encoder = build_encoder("lstm", CORPUS, embedding_dim=8)
    with pytest.raises(ValueError, match="averaging"):
        export_onnx(encoder, tmp_path)


def test_cli_export_onnx(tmp_path, capsys):
    encoder = build_encoder("word", CORPUS, embedding_dim=8)
    encoder.save_pretrained(tmp_path / "model", sentence_transformers=False)
    assert cli_main(["export", str(tmp_path / "model"), "--format", "onnx", "--output", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "model.onnx" in out and "max abs diff" in out
    np.testing.assert_allclose(OnnxEncoder(tmp_path / "out").encode(SENTENCES), encoder.encode(SENTENCES), atol=1e-5)

"""``paranmt-hf export``: never replaces its input, needs --overwrite for an existing output, writes atomically, and
fails (writing nothing) when the export does not reproduce the PyTorch model."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from paranmt_hf import ParaNMTEncoder, build_encoder
from paranmt_hf.cli.main import main as cli

CORPUS = ["a man is playing a guitar .", "two dogs are running through a field of snow !"] * 3


@pytest.fixture()
def model_dir(tmp_path):
    path = tmp_path / "model"
    build_encoder("word", CORPUS, embedding_dim=8).save_pretrained(path)
    return path


def test_fp16_export_over_its_own_fp32_directory_is_refused(model_dir):
    before = (model_dir / "model.safetensors").read_bytes()
    for extra in ([], ["--overwrite"]):
        with pytest.raises(SystemExit, match="is the input"):
            cli(["export", str(model_dir), "--format", "fp16", "--output", str(model_dir), *extra])
    assert (model_dir / "model.safetensors").read_bytes() == before  # float32 weights, not rounded


def test_an_existing_output_needs_overwrite(model_dir, tmp_path, capsys):
    out = tmp_path / "fp16"
    assert cli(["export", str(model_dir), "--format", "fp16", "--output", str(out)]) == 0
    with pytest.raises(SystemExit, match="--overwrite"):
        cli(["export", str(model_dir), "--format", "int8", "--output", str(out)])
    assert cli(["export", str(model_dir), "--format", "int8", "--output", str(out), "--overwrite"]) == 0
    assert (out / "model_int8.safetensors").is_file() and not (out / "model.safetensors").exists()
    assert sorted(os.listdir(tmp_path)) == ["fp16", "model"]  # no temporary folder left


def test_the_check_accepts_an_empty_sentence_and_reports_a_true_minimum(model_dir, tmp_path, capsys):
    # the empty sentence embeds as the (zero) unknown-token row in both models: that is agreement, not cosine 0
    assert cli(["export", str(model_dir), "--format", "fp16", "--output", str(tmp_path / "o")]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("check vs PyTorch")][0]
    assert float(line.rsplit(" ", 1)[1]) > 0.9999


def test_a_failed_check_exits_non_zero_and_writes_nothing(model_dir, tmp_path, monkeypatch):
    import paranmt_hf.model.storage as storage

    real = storage.store_weights

    def broken(model, directory, dtype):  # an export bug: the embedding table comes out scrambled
        weight = model.components[0].embedding.weight
        saved = weight.detach().clone()
        weight.data = weight.data[np.random.default_rng(0).permutation(len(weight))]
        try:
            return real(model, directory, dtype)
        finally:
            weight.data = saved

    monkeypatch.setattr(storage, "store_weights", broken)
    out = tmp_path / "bad"
    with pytest.raises(SystemExit, match="check vs PyTorch failed, nothing written"):
        cli(["export", str(model_dir), "--format", "fp16", "--output", str(out)])
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["model"]
    assert ParaNMTEncoder.from_pretrained(model_dir).embedding_dim == 8


# ---- the check sees every row and non-finite values ---------------------------------------------
RARE = ["the violin player tunes her instrument .", "a zebra grazes near the waterhole ."]


@pytest.fixture()
def rare_model(tmp_path):
    """A model whose vocabulary holds words none of the check's sentences use (violin, zebra, waterhole)."""
    path = tmp_path / "rare"
    build_encoder("word", CORPUS + RARE * 3, embedding_dim=8, seed=1).save_pretrained(path)
    return path


def _row(encoder, word):
    return encoder.tokenizer.convert_tokens_to_ids(word)


def _corrupting(monkeypatch, change):
    """Make the export write a table changed by ``change(weight)`` (as a storage bug would)."""
    import paranmt_hf.model.storage as storage

    real = storage.store_weights

    def broken(model, directory, dtype):
        weight = model.components[0].embedding.weight
        saved = weight.detach().clone()
        with torch.no_grad():
            change(weight)
        try:
            return real(model, directory, dtype)
        finally:
            weight.data = saved

    monkeypatch.setattr(storage, "store_weights", broken)


def test_a_corrupted_row_that_the_sample_sentences_never_use_is_caught(rare_model, tmp_path, monkeypatch):
    encoder = ParaNMTEncoder.from_pretrained(rare_model)
    row = _row(encoder, "violin")
    table = encoder.model.components[0].embedding.weight.detach()
    noise = torch.randn(table.shape[1], generator=torch.Generator().manual_seed(0))
    corrupted = 0.8 * table[row] + 0.6 * table[row].norm() * noise / noise.norm()
    text = ["the violin player tunes her instrument ."]
    expected = encoder.encode(text)

    def corrupt(weight):
        weight[row] = corrupted

    _corrupting(monkeypatch, corrupt)
    for fmt in ("fp16", "int8"):
        out = tmp_path / fmt
        with pytest.raises(SystemExit, match=rf"check vs PyTorch failed.*components\.0\.embedding\.weight row {row}"):
            cli(["export", str(rare_model), "--format", fmt, "--output", str(out)])
        assert not out.exists()
    # what the check protects: the corrupted row changes the text that uses it (cosine well below 1)
    with torch.no_grad():
        encoder.model.components[0].embedding.weight[row] = corrupted
    got = encoder.encode(text)
    assert float((got * expected).sum() / np.linalg.norm(got) / np.linalg.norm(expected)) < 0.99


def test_a_float16_overflow_is_caught(rare_model, tmp_path):
    encoder = ParaNMTEncoder.from_pretrained(rare_model)
    row = _row(encoder, "zebra")
    with torch.no_grad():
        encoder.model.components[0].embedding.weight[row, 3] = 1e5  # > 65504: inf in float16
    encoder.save_pretrained(tmp_path / "big")
    with pytest.raises(SystemExit, match=rf"row {row} holds values beyond float16's range"):
        cli(["export", str(tmp_path / "big"), "--format", "fp16", "--output", str(tmp_path / "fp16")])
    assert not (tmp_path / "fp16").exists()
    assert cli(["export", str(tmp_path / "big"), "--format", "int8", "--output", str(tmp_path / "int8")]) == 0


def test_the_onnx_check_compares_every_row(rare_model, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    import paranmt_hf.model.onnx as onnx_module

    encoder = ParaNMTEncoder.from_pretrained(rare_model)
    row = _row(encoder, "waterhole")
    real = onnx_module.build_graph

    def broken(enc):  # an export bug in one row of the graph's table
        weight = enc.model.components[0].embedding.weight
        saved = weight.detach().clone()
        with torch.no_grad():
            weight[row] *= -1
        try:
            return real(enc)
        finally:
            weight.data = saved

    monkeypatch.setattr(onnx_module, "build_graph", broken)
    for fmt in ("onnx", "onnx-int8"):
        with pytest.raises(SystemExit, match=rf"check vs PyTorch failed.*token id {row}"):
            cli(["export", str(rare_model), "--format", fmt, "--output", str(tmp_path / fmt)])
    monkeypatch.setattr(onnx_module, "build_graph", real)
    for fmt in ("onnx", "onnx-int8"):
        assert cli(["export", str(rare_model), "--format", fmt, "--output", str(tmp_path / fmt)]) == 0

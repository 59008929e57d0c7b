"""``paranmt-hf export``: never replaces its input, needs --overwrite for an existing output, writes atomically, and
fails (writing nothing) when the export does not reproduce the PyTorch model."""

from __future__ import annotations

import os

import numpy as np
import pytest

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

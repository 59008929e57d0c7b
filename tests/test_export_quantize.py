"""float16 / int8 weight storage: float32 compute after loading, small changes, clear failures elsewhere."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from _unknown_rows import assert_unknown_rows, randomise_unknown_rows

from paranmt_hf import ParaNMTEncoder, build_encoder
from paranmt_hf.cli.main import main as cli_main
from paranmt_hf.evaluation.metrics import paired_cosine
from paranmt_hf.model.storage import (
    INT8_FILE,
    dequantize_rows,
    quantize_rows,
    storage_bytes,
)

CORPUS = ["A man is playing a guitar.", "A woman is slicing an onion.", "Two dogs run in the park!"] * 3
SENTENCES = CORPUS + ["", "zzz unseen", "a dog slices a guitar"]


def test_row_quantisation_round_trip():
    w = torch.randn(50, 16) * torch.linspace(0.01, 3, 50)[:, None]
    w[3] = 0
    q, scale = quantize_rows(w)
    assert q.dtype == torch.int8 and scale.shape == (50,)
    err = (dequantize_rows(q, scale) - w).abs().max(dim=1).values
    assert torch.all(err <= scale / 2 + 1e-7)
    assert torch.all(dequantize_rows(q, scale)[3] == 0)


def _save(encoder, directory, dtype):
    encoder.save_pretrained(directory, weight_dtype=dtype)
    return directory


@pytest.mark.parametrize("kind", ["word", "trigram", "lstm"])
def test_float16_and_int8_storage(tmp_path, kind):
    encoder = build_encoder(kind, CORPUS, embedding_dim=32, seed=4)
    unk_rows = randomise_unknown_rows(encoder.model)  # new models start with zero [UNK] rows
    expected = encoder.encode(SENTENCES)
    empty = SENTENCES.index("")
    full = _save(encoder, tmp_path / "fp32", "float32")
    for dtype, atol, min_cos in (("float16", 2e-3, 0.99999), ("int8", 5e-2, 0.999)):
        d = _save(encoder, tmp_path / dtype, dtype)
        loaded = ParaNMTEncoder.from_pretrained(d)
        assert all(p.dtype == torch.float32 for p in loaded.model.parameters())
        got = loaded.encode(SENTENCES)
        assert got.dtype == np.float32
        assert 0 < np.abs(got - expected).max() <= atol
        assert paired_cosine(got, expected).min() >= min_cos  # the empty sentence too: its [UNK] row
        # the empty sentence embeds exactly as the stored [UNK] token (averaging: the stored [UNK] row)
        stored_rows = [c.embedding.weight[c.unk_token_id].detach().clone() for c in loaded.model.components]
        torch.testing.assert_close(stored_rows[0], unk_rows[0], rtol=0, atol=atol)
        unk_id = loaded.model.components[0].unk_token_id
        with torch.no_grad():
            as_unknown = loaded.model(input_ids=torch.tensor([[unk_id]])).pooler_output[0].numpy()
        np.testing.assert_allclose(got[empty], as_unknown, rtol=0, atol=1e-6)
        if kind != "lstm":
            ids = loaded.featurizer.reference_ids(SENTENCES)
            assert assert_unknown_rows(loaded.model, stored_rows, ids, got) >= 1
        assert json.loads((d / "config.json").read_text())["paranmt_weight_storage"] == dtype
    assert storage_bytes(tmp_path / "float16") < 0.6 * storage_bytes(full)
    if kind != "lstm":  # LSTM weights stay float32 in the int8 file
        assert storage_bytes(tmp_path / "int8") < 0.4 * storage_bytes(full)


def test_int8_directory_is_refused_by_automodel(tmp_path):
    from transformers import AutoModel

    _save(build_encoder("word", CORPUS, embedding_dim=8), tmp_path, "int8")
    assert (tmp_path / INT8_FILE).is_file() and not (tmp_path / "model.safetensors").exists()
    with pytest.raises(OSError):
        AutoModel.from_pretrained(tmp_path)


def test_float16_directory_loads_in_automodel_as_float32(tmp_path):
    from transformers import AutoModel

    encoder = build_encoder("word", CORPUS, embedding_dim=8)
    _save(encoder, tmp_path, "float16")
    model = AutoModel.from_pretrained(tmp_path)
    assert model.dtype == torch.float32
    expected = encoder.model.components[0].embedding.weight.half().float()
    torch.testing.assert_close(model.components[0].embedding.weight, expected)


def test_bad_dtype(tmp_path):
    with pytest.raises(ValueError, match="dtype"):
        _save(build_encoder("word", CORPUS, embedding_dim=8), tmp_path, "int4")


def test_cli_export_int8(tmp_path, capsys):
    build_encoder("word", CORPUS, embedding_dim=8).save_pretrained(tmp_path / "m", sentence_transformers=False)
    assert cli_main(["export", str(tmp_path / "m"), "--format", "int8", "--output", str(tmp_path / "q")]) == 0
    assert "min cosine" in capsys.readouterr().out
    assert ParaNMTEncoder.from_pretrained(tmp_path / "q").encode(["a man"]).shape == (1, 8)

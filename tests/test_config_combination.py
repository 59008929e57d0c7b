"""A combination's config.json describes it by its components only: no stale top-level kind / vocab_size /
embedding_dim; configs written before (with them) load to the same model."""

from __future__ import annotations

import json

import numpy as np

from paranmt_hf import ParaNMTConfig, ParaNMTEncoder, build_encoder

CORPUS = ["a man plays the guitar", "two dogs run in the park", "a woman slices an onion"]


def test_combination_config_json_holds_only_components(tmp_path):
    encoder = build_encoder("trigram+word", corpus=CORPUS, embedding_dim=6, seed=0)
    encoder.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert not {"kind", "vocab_size", "embedding_dim"} & set(saved)
    assert [(c["kind"], c["embedding_dim"]) for c in saved["components"]] == [("trigram", 6), ("word", 6)]
    assert saved["hidden_size"] == 12
    loaded = ParaNMTEncoder.from_pretrained(tmp_path)
    assert loaded.config.kind == "trigram+word"
    assert loaded.config.vocab_size == sum(c["vocab_size"] for c in saved["components"])
    np.testing.assert_allclose(loaded.encode(CORPUS), encoder.encode(CORPUS), atol=1e-6)
    single = build_encoder("word", corpus=CORPUS, embedding_dim=6)  # single models keep their top-level fields
    assert {"kind": "word", "embedding_dim": 6}.items() <= single.config.to_dict().items()


def test_earlier_combination_configs_mean_the_same():
    old = {"kind": "sp", "vocab_size": 50002, "embedding_dim": 300, "combination": "concat",
           "components": [{"kind": "trigram", "vocab_size": 40, "embedding_dim": 8},
                          {"kind": "word", "vocab_size": 30}]}
    config = ParaNMTConfig(**old)  # the second component took the top-level embedding size, as before
    assert [(c["kind"], c["vocab_size"], c["embedding_dim"]) for c in config.resolved_components()] == [
        ("trigram", 40, 8), ("word", 30, 300)]
    assert config.hidden_size == 308
    again = ParaNMTConfig.from_dict(config.to_dict())
    assert again.resolved_components() == config.resolved_components() and "kind" not in config.to_dict()

"""Clear errors in the Python API: a lone surrogate in ``encode``; a missing local model folder (not a Hub error)."""

from __future__ import annotations

import pytest

from paranmt_hf import ParaNMTEncoder, build_encoder


@pytest.fixture(scope="module")
def encoder():
    return build_encoder("word", ["a man plays a guitar .", "un café au lait"] * 3, embedding_dim=4)


def test_a_lone_surrogate_is_a_clear_error(encoder):
    sentences = ["a man plays"] * 9000 + ["un café", "x\ud800y", "ok"]
    with pytest.raises(ValueError, match=r"sentence 9001 is not valid Unicode text: lone surrogate '\\ud800' at "
                                         r"character 1"):
        encoder.encode(sentences)
    with pytest.raises(ValueError, match="sentence 0"):
        encoder.encode("\udcff")
    assert encoder.encode(["un café au lait", "日本語 😀"]).shape == (2, 4)  # valid non-ASCII text is fine


@pytest.mark.parametrize("name", ["./no-such-model", "/tmp/paranmt-no-such/model", "models/nope", "a/b/c", "x/"])
def test_a_missing_local_model_is_reported_as_missing(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()  # "models/nope": a local folder was meant, not the Hub repo "models/nope"
    with pytest.raises(FileNotFoundError, match="not found .*the Hub was not asked"):
        ParaNMTEncoder.from_pretrained(name)


def test_hub_ids_still_go_to_the_hub(tmp_path, monkeypatch):
    from paranmt_hf.utils.paths import looks_local

    monkeypatch.chdir(tmp_path)
    assert not looks_local("paranmt-hf/trigram") and not looks_local("bert-base-uncased")

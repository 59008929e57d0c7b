"""No code from a model directory runs without the user's explicit trust_remote_code / --trust-remote-code."""

from __future__ import annotations

import json
import shutil

import pytest

from paranmt_hf import build_encoder
from paranmt_hf.cli.main import main as cli
from paranmt_hf.evaluation.encoders import load_encoder
from paranmt_hf.model.remote_code import RemoteCodeError, remote_code_reasons

CORPUS = ["a man plays a guitar .", "two dogs run ."] * 3


@pytest.fixture()
def saved(tmp_path):
    out = {}
    for kind in ("word", "trigram"):
        out[kind] = tmp_path / kind
        build_encoder(kind, CORPUS, embedding_dim=4).save_pretrained(out[kind])
    return out


def _hostile(source, target, marker):
    """The issue's directory: an unregistered model_type whose shipped configuration file runs a command."""
    shutil.copytree(source, target)
    config = json.loads((target / "config.json").read_text())
    config["model_type"] = "paranmt-custom"
    (target / "config.json").write_text(json.dumps(config))
    code = (target / "configuration_paranmt.py").read_text()
    (target / "configuration_paranmt.py").write_text(code + f"\nopen({str(marker)!r}, 'w').write('ran')\n")
    return target


def test_a_directory_whose_code_would_run_needs_the_flag(saved, tmp_path):
    marker = tmp_path / "code-ran"
    hostile = _hostile(saved["word"], tmp_path / "hostile", marker)
    assert any("paranmt-custom" in r for r in remote_code_reasons(hostile))
    with pytest.raises(RemoteCodeError, match="trust-remote-code"):
        load_encoder(hostile)
    for command in (["embed", str(hostile), "--input", str(hostile / "config.json"), "--output", str(tmp_path / "e")],
                    ["score", str(hostile), "--input", str(hostile / "config.json")],
                    ["eval", str(hostile), "--tasks", str(tmp_path)],
                    ["export", str(hostile), "--format", "fp16", "--output", str(tmp_path / "x")]):
        with pytest.raises(SystemExit, match="would run code from the directory"):
            cli(command)
    assert not marker.exists()  # nothing ran
    # with consent the gate lets the load go on (sentence-transformers imports the input module shipped in the
    # folder, whose code then runs)
    assert load_encoder(hostile, trust_remote_code=True).encode(["a man plays"]).shape == (1, 4)


def test_custom_sentence_transformers_modules_need_the_flag(saved, tmp_path):
    custom = tmp_path / "custom"
    shutil.copytree(saved["word"], custom)
    config = json.loads((custom / "config.json").read_text())
    config["model_type"] = "bert-like"
    config.pop("auto_map")
    (custom / "config.json").write_text(json.dumps(config))
    (custom / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "", "type": "bag.BagEncoder"}]))
    reasons = remote_code_reasons(custom)
    assert len(reasons) == 1 and "bag.BagEncoder" in reasons[0]
    with pytest.raises(RemoteCodeError, match="modules.json"):
        load_encoder(custom)


def test_paranmt_directories_load_without_the_flag(saved):
    for kind, path in saved.items():
        # model_type and tokenizer registered by import paranmt_hf; ParaNMTEncoder never reads modules.json
        assert remote_code_reasons(path) == [], kind
        assert load_encoder(path).encode(["a man plays"]).shape == (1, 4)

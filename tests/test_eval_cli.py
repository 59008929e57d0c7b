"""``paranmt-hf eval`` on a tiny saved ParaNMT model and the real data."""

from __future__ import annotations

import json

import pytest

from paranmt_hf.cli.main import main
from paranmt_hf.evaluation import load_sts_year

pytestmark = pytest.mark.data  # every test here reads the shared real data


@pytest.fixture(scope="module")
def tiny_model_dir(data_dir, tmp_path_factory):
    from paranmt_hf import build_encoder

    corpus = [s for d in load_sts_year(data_dir / "eval" / "sts", "STS13") for s in d.sentences1 + d.sentences2]
    path = tmp_path_factory.mktemp("tiny_word")
    build_encoder("word", corpus=corpus, vocab_size=2000, embedding_dim=16).save_pretrained(path)
    return path


def test_eval_cli_writes_mteb_layout(tiny_model_dir, data_dir, tmp_path, capsys):
    sts_dir = data_dir / "eval" / "sts" / "STS16-en-test"
    rc = main(["eval", str(tiny_model_dir), "--tasks", "STS13", "STS17:en-en", "Tatoeba:deu", str(sts_dir),
               "--data-dir", str(data_dir), "--output", str(tmp_path), "--name", "me/tiny", "--revision", "r1",
               "--max-pairs", "200"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "# me/tiny" in out and "headlines" in out and "deu-eng" in out and "results written to" in out
    folder = tmp_path / "me__tiny" / "r1"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["STS13.json", "STS17.json", "STSDir-STS16-en-test.json", "Tatoeba.json", "model_meta.json"]
    meta = json.loads((folder / "model_meta.json").read_text())
    assert meta["name"] == "me/tiny" and meta["embed_dim"] == 16 and meta["training_datasets"] == []
    sts13 = json.loads((folder / "STS13.json").read_text())["paranmt_hf"]["scores"]["test"]
    assert [e["n_pairs"] for e in sts13] == [189, 200, 200, 589]


def test_eval_cli_clear_errors(tiny_model_dir, tmp_path):
    with pytest.raises(SystemExit, match="--data-dir"):
        main(["eval", str(tiny_model_dir), "--tasks", "STS12", "--data-dir", str(tmp_path)])
    with pytest.raises(SystemExit, match="unknown task"):
        main(["eval", str(tiny_model_dir), "--tasks", "STS99"])
    with pytest.raises(SystemExit, match="no-model not found"):  # a clear message, not a traceback
        main(["eval", str(tmp_path / "no-model"), "--tasks", "STS12"])

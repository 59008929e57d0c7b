"""A Hub id works wherever a model folder does (``eval``, ``embed``, ``score``, ``export``), pinned with
``ID@REV`` or ``--model-revision``, and offline from the Hub's cache; a name that is neither a folder nor a model the
Hub gives is one sentence, in the CLI and in ``ParaNMTEncoder.from_pretrained``.

The Hub's cache is built in code, laid out as huggingface_hub lays it out (``models--org--name/refs/main`` naming a
commit, the files in ``snapshots/<commit>/``), with ``HF_HUB_OFFLINE=1``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf import ParaNMTEncoder, build_encoder
from paranmt_hf.cli.main import main

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OLD = "fedcba9876543210fedcba9876543210fedcba98"
CORPUS = ["a man plays the guitar .", "a dog runs in the park ."] * 3


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> Path:
    """``me/tiny`` in a Hub cache: ``main`` at :data:`COMMIT`, and an older commit :data:`OLD` (another model)."""
    import huggingface_hub

    cache = tmp_path / "hub"
    repo = cache / "models--me--tiny"
    build_encoder("word", corpus=CORPUS, embedding_dim=6).save_pretrained(repo / "snapshots" / COMMIT)
    build_encoder("word", corpus=CORPUS, embedding_dim=4).save_pretrained(repo / "snapshots" / OLD)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(tmp_path)  # no folder named like the id
    return repo


def test_embed_score_and_export_take_a_hub_id(hub_cache, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("a man plays .\n")
    assert main(["embed", "me/tiny", "--input", str(text), "--output", "main.npy", "--no-progress"]) == 0
    assert np.load("main.npy").shape == (1, 6)
    for pinned in (["me/tiny@" + OLD], ["me/tiny", "--model-revision", OLD]):
        out = f"old-{len(pinned)}.npy"
        assert main(["embed", *pinned, "--input", str(text), "--output", out, "--no-progress"]) == 0
        assert np.load(out).shape == (1, 4)  # the older commit's model
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("a man plays .\ta dog runs .\n")
    assert main(["score", "me/tiny", "--input", str(pairs), "--output", "s.txt", "--no-progress"]) == 0
    assert main(["export", "me/tiny", "--format", "fp16", "--output", "fp16"]) == 0
    assert ParaNMTEncoder.from_pretrained("fp16").embedding_dim == 6


def test_eval_names_its_results_by_the_id_and_the_commit(hub_cache, tmp_path):
    sts = tmp_path / "sts"
    sts.mkdir()
    (sts / "STS.input.toy.txt").write_text("a man plays .\ta man plays .\na dog runs .\ta man plays .\n"
                                            "a dog runs .\ta dog runs in the park .\n")
    (sts / "STS.gs.toy.txt").write_text("5\n0\n4\n")
    assert main(["eval", "me/tiny", "--tasks", str(sts), "--output", "results", "--no-progress"]) == 0
    meta = json.loads((tmp_path / "results" / "me__tiny" / COMMIT / "model_meta.json").read_text())
    assert meta["name"] == "me/tiny" and meta["revision"] == COMMIT


@pytest.mark.parametrize(("name", "says"), [
    ("me/absent", "not in the Hub's local cache"),
    ("me/tiny@v9", "not in the Hub's local cache"),
    ("me/tiny@" + COMMIT, None),
])
def test_a_name_the_hub_cache_does_not_hold_is_one_sentence(hub_cache, tmp_path, capsys, name, says):
    text = tmp_path / "in.txt"
    text.write_text("a man plays .\n")
    argv = ["embed", name, "--input", str(text), "--output", "e.npy", "--no-progress"]
    if says is None:
        assert main(argv) == 0
        return
    with pytest.raises(SystemExit) as status:
        main(argv)
    assert status.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith(f"paranmt-hf embed: {name} is not a folder here") and says in err[0]


def test_a_revision_for_a_local_folder_is_refused(hub_cache, tmp_path, capsys):
    folder = tmp_path / "local"
    shutil.copytree(hub_cache / "snapshots" / COMMIT, folder)
    text = tmp_path / "in.txt"
    text.write_text("a man plays .\n")
    with pytest.raises(SystemExit) as status:
        main(["embed", str(folder), "--model-revision", OLD, "--input", str(text), "--output", "e.npy"])
    assert status.value.code == 2 and "is for a Hub id" in capsys.readouterr().err


def test_a_mistyped_name_is_one_sentence_in_from_pretrained(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as err:
        ParaNMTEncoder.from_pretrained("my-mdoel")
    message = str(err.value)
    assert message.startswith("my-mdoel is not a folder here, and it is not in the Hub's local cache")
    assert "\n" not in message
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_static_encoder_says_the_sentence_paranmt_encoder_says(hub_cache):
    from paranmt_hf import StaticEncoder

    said = []
    for loader in (StaticEncoder, ParaNMTEncoder):
        with pytest.raises(FileNotFoundError) as err:
            loader.from_pretrained("me/absent")
        assert err.value.__cause__ is None and err.value.__suppress_context__
        said.append(str(err.value))
    assert said[0] == said[1] and said[0].startswith("me/absent is not a folder here, and it is not in the Hub's "
                                                     "local cache")
    np.testing.assert_allclose(StaticEncoder.from_pretrained("me/tiny").encode(["a man plays ."]),
                               ParaNMTEncoder.from_pretrained("me/tiny").encode(["a man plays ."]), atol=1e-6)


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_tokenizer_to_adapt_that_cannot_be_read_is_one_sentence(hub_cache, tmp_path, capsys):
    text = tmp_path / "s.txt"
    text.write_text("a man plays .\n")
    for source, says in (("me/absent", "me/absent is not a folder here, and it is not in the Hub's local cache"),
                         (str(text), f"{text} is not a tokenizer.json that the tokenizers library reads")):
        with pytest.raises(SystemExit) as status:
            main(["build-tokenizer", "--kind", "subword", "--from", source, "--output", str(tmp_path / "out")])
        line = _one_line(capsys.readouterr().err)
        assert status.value.code == 1 and line.startswith(f"paranmt-hf build-tokenizer: {says}"), line
    assert main(["build-tokenizer", "--kind", "subword", "--from", "me/tiny", "--output", str(tmp_path / "out")]) == 0
    assert "saved subword tokenizer" in capsys.readouterr().out  # a Hub id in the cache is adapted


@pytest.mark.parametrize("command", ["build", "train"])
def test_a_teacher_the_hub_cache_does_not_hold_is_one_sentence(command, hub_cache, tmp_path, capsys):
    pytest.importorskip("model2vec.distill")
    corpus = tmp_path / "pairs.tsv"
    corpus.write_text("a man plays .\tsomeone plays .\n" * 4)
    data = ["--input", str(corpus)] if command == "build" else ["--train", str(corpus), "--dev", "none"]
    with pytest.raises(SystemExit) as status:
        main([command, "--kind", "trigram+subword", "--teacher", "me/absent", *data, "--output", str(tmp_path / "m")])
    err = capsys.readouterr().err  # train says where its checkpoints go first
    line = err.strip().splitlines()[-1]
    assert "Traceback" not in err and sum(line.startswith("paranmt-hf ") for line in err.splitlines()) == 1, err
    assert status.value.code == 1, line
    assert line.startswith(f"paranmt-hf {command}: me/absent is not a folder here, and it is not in the Hub's local "
                           "cache"), line

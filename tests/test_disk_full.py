"""A full device is one sentence for every command that writes a model or embeddings (``train`` at its initial
model or a checkpoint, ``embed --output``, ``export``), as for the corpus tools: what was not written and what to
do, exit status 1, no traceback and nothing half-written in place.

The device is filled in code: the one function that writes a safetensors file (``serialize_file``, in Rust: the
``OSError`` never reaches Python) raises safetensors' own error for os error 28, and ``embed``'s writes raise
``ENOSPC``."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
import safetensors.torch
from safetensors import SafetensorError

from paranmt_hf import build_encoder
from paranmt_hf.cli.main import main
from tests.test_training import write_pairs

FULL = 'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })'
TRAIN = ["--kind", "word", "--embedding-dim", "8", "--batch-size", "4", "--megabatch-size", "3", "--no-progress",
         "--save-steps", "2", "--max-steps", "4", "--dev"]


def _fill_device_at(monkeypatch, part: str) -> None:
    """Make writing a safetensors file whose path contains ``part`` fail as a full device does."""
    real = safetensors.torch.serialize_file

    def serialize_file(tensors, filename, *args, **kwargs):
        if part in os.fspath(filename):
            raise SafetensorError(FULL)
        return real(tensors, filename, *args, **kwargs)

    monkeypatch.setattr(safetensors.torch, "serialize_file", serialize_file)


def _one_line(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as status:
        main(argv)
    assert status.value.code == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("paranmt-hf")]
    assert len(err) == 1, err
    assert "no space left on the device" in err[0] and "free some space" in err[0], err
    return err[0]


@pytest.mark.parametrize("where", ["initial-model", "checkpoint-2"])
def test_train_says_it_in_one_sentence_and_how_to_go_on(tmp_path, monkeypatch, capsys, where):
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    out = tmp_path / "model"
    _fill_device_at(monkeypatch, where)
    line = _one_line(capsys, ["train", "--train", data, "--output", str(out), *TRAIN])
    assert line.startswith("paranmt-hf train: ") and f"{out} was not written" in line and "--resume" in line
    assert not (out / "model.safetensors").exists()
    monkeypatch.undo()  # space freed: the advice works, with or without a complete checkpoint
    assert main(["train", "--train", data, "--output", str(out), *TRAIN, "--resume"]) == 0
    assert (out / "model.safetensors").is_file()


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("full") / "model"
    build_encoder("word", corpus=["a man plays the guitar .", "a dog runs ."], embedding_dim=6).save_pretrained(folder)
    return folder


def test_export_says_it_in_one_sentence(model, tmp_path, monkeypatch, capsys):
    out = tmp_path / "fp16"
    _fill_device_at(monkeypatch, "")
    line = _one_line(capsys, ["export", str(model), "--format", "fp16", "--output", str(out)])
    assert line.startswith("paranmt-hf export: ") and f"{out} was not written" in line
    assert sorted(os.listdir(tmp_path)) == []  # no temporary folder left


def test_embed_says_it_in_one_sentence(model, tmp_path, monkeypatch, capsys):
    import paranmt_hf.evaluation.streaming as streaming

    class FullFile:
        def __new__(cls, path, mode="r", *args, **kwargs):
            if "w" not in mode:
                return open(path, mode, *args, **kwargs)  # noqa: SIM115 - the caller's
            return super().__new__(cls)

        def __init__(self, path, mode="r", *args, **kwargs):
            self.file = open(path, mode)  # noqa: SIM115 - closed in __exit__

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

    text = tmp_path / "in.txt"
    text.write_text("a man plays .\n")
    out = tmp_path / "e.npy"
    monkeypatch.setattr(streaming, "open", FullFile, raising=False)
    line = _one_line(capsys, ["embed", str(model), "--input", str(text), "--output", str(out), "--no-progress"])
    assert line.startswith("paranmt-hf embed: ") and f"{out} was not written" in line
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]

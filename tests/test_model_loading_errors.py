"""A model folder whose weights do not match, or whose files are damaged, is refused with the file named: never a
model that silently runs on freshly initialised weights."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from paranmt_hf import ParaNMTEncoder, build_encoder
from paranmt_hf.cli.main import main
from paranmt_hf.modeling.modeling_paranmt import WeightsMismatchError
from paranmt_hf.utils.integrity import DamagedFileError

CORPUS = ["a man plays the guitar .", "a dog runs in the park ."] * 3


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("model") / "model"
    build_encoder("trigram+word", corpus=CORPUS, embedding_dim=6).save_pretrained(folder)
    return folder


def _copy(saved: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(saved, folder)
    return folder


def _rewrite(folder: Path, change) -> None:
    path = folder / "model.safetensors"
    save_file(change(load_file(path)), str(path), metadata={"format": "pt"})


def renamed(tensors):  # another version's names
    return {k.replace("components.", "encoder_layers."): v for k, v in tensors.items()}


def one_missing(tensors):
    return {k: v for k, v in tensors.items() if not k.startswith("components.1.")}


def one_extra(tensors):
    return {**tensors, "pooler.dense.weight": torch.zeros(2, 2)}


@pytest.mark.parametrize(("change", "expected"), [
    (renamed, ["missing components.0.embedding.weight", "unexpected encoder_layers.0.embedding.weight"]),
    (one_missing, ["missing components.1.embedding.weight"]),
    (one_extra, ["unexpected pooler.dense.weight"]),
])
def test_weights_that_do_not_match_are_refused_by_every_loader(saved, tmp_path, change, expected):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel

    folder = _copy(saved, tmp_path)
    _rewrite(folder, change)
    for load in (ParaNMTEncoder.from_pretrained, AutoModel.from_pretrained,
                 lambda f: SentenceTransformer(str(f), device="cpu", trust_remote_code=True)):
        with pytest.raises(ValueError) as err:  # (through sentence-transformers: the folder's copy of the class)
            load(folder)
        assert type(err.value).__name__ == WeightsMismatchError.__name__
        message = str(err.value)
        assert str(folder / "model.safetensors") in message
        assert all(part in message for part in expected), message


def test_the_int8_loader_refuses_them_too(saved, tmp_path):
    encoder = ParaNMTEncoder.from_pretrained(saved)
    folder = tmp_path / "int8"
    encoder.save_pretrained(folder, weight_dtype="int8")
    path = folder / "model_int8.safetensors"
    save_file(renamed(load_file(path)), str(path))
    with pytest.raises(WeightsMismatchError, match=r"model_int8.safetensors.*missing components\.0\.embedding"):
        ParaNMTEncoder.from_pretrained(folder)


def test_the_weights_of_earlier_releases_still_load(saved, tmp_path):
    folder = _copy(saved, tmp_path)
    _rewrite(folder, lambda t: {k.replace("components.", "encoders."): v for k, v in t.items()})  # before 0.2
    expected = ParaNMTEncoder.from_pretrained(saved).encode(CORPUS[:2])
    torch.testing.assert_close(torch.from_numpy(ParaNMTEncoder.from_pretrained(folder).encode(CORPUS[:2])),
                               torch.from_numpy(expected))


@pytest.mark.parametrize("command", ["embed", "score", "eval", "export", "publish"])
def test_the_commands_stop_with_one_sentence(saved, tmp_path, command, capsys):
    folder = _copy(saved, tmp_path)
    _rewrite(folder, renamed)
    src = tmp_path / "in.tsv"
    src.write_text("a man plays\ta dog runs\n")
    argv = {"embed": ["--input", str(src), "--output", str(tmp_path / "out.npy")],
            "score": ["--input", str(src), "--output", str(tmp_path / "out.tsv")],
            "eval": ["--tasks", "STS12"],
            "export": ["--format", "fp16", "--output", str(tmp_path / "out.npy")],
            "publish": ["--output", str(tmp_path / "out.npy")]}[command]
    with pytest.raises(SystemExit) as err:
        main([command, str(folder), *argv])
    message = str(err.value)
    assert message.startswith(f"paranmt-hf {command}: ") and "model.safetensors" in message
    assert "missing components.0.embedding.weight" in message and "\n" not in message
    assert not (tmp_path / "out.npy").exists() and not (tmp_path / "out.tsv").exists()


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize(("name", "damage"), [
    ("model.safetensors", _truncate),
    ("model.safetensors", lambda p: p.write_bytes(b"")),
    ("config.json", lambda p: p.write_text("{not json")),
    ("tokenizer_config.json", lambda p: p.write_text("{not json")),
    ("paranmt_tokenizer.json", _truncate),
])
def test_a_damaged_model_file_is_named(saved, tmp_path, name, damage, capsys):
    folder = _copy(saved, tmp_path)
    damage(folder / name)
    with pytest.raises(DamagedFileError, match=rf"{folder / name} is damaged"):
        ParaNMTEncoder.from_pretrained(folder)
    src = tmp_path / "in.txt"
    src.write_text("a man plays\n")
    with pytest.raises(SystemExit, match=rf"^paranmt-hf embed: {folder / name} is damaged") as err:
        main(["embed", str(folder), "--input", str(src), "--output", str(tmp_path / "out.npy")])
    assert "\n" not in str(err.value)


def test_load_encoder_names_the_damaged_file_of_a_model2vec_folder(tmp_path):
    # model2vec (and sentence-transformers) read their files themselves: the library's loader, not only the CLI,
    # turns their error into one sentence naming the damaged file
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    from paranmt_hf.evaluation.encoders import load_encoder

    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "[PAD]": 1, "a": 2, "man": 3}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    folder = tmp_path / "m2v"
    StaticModel(np.ones((4, 8), dtype=np.float32), tokenizer).save_pretrained(str(folder))
    assert load_encoder(folder).encode(["a man"]).shape == (1, 8)
    _truncate(folder / "model.safetensors")
    with pytest.raises(DamagedFileError, match=rf"^{folder / 'model.safetensors'} is damaged") as err:
        load_encoder(folder)
    assert "\n" not in str(err.value)

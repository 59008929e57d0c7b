"""A model folder whose only weights are a pickle naming code is refused in one sentence naming the file, by every
command that loads a model (``embed``, ``score``, ``corpus annotate --model``, ``corpus backtranslate --model``)
and by ``ParaNMTEncoder.from_pretrained``: nothing ran, and torch's advice to load it unsafely is never repeated."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from safetensors.torch import load_file  # noqa: E402

from paranmt_hf import ParaNMTEncoder, build_encoder  # noqa: E402
from paranmt_hf.cli.main import main  # noqa: E402
from paranmt_hf.utils.safe_pickle import UnsafePickleError  # noqa: E402

CORPUS = ["a man plays the guitar .", "a dog runs in the park ."] * 3


def _pickled(folder: Path) -> Path:
    """Replace the folder's safetensors weights by a ``pytorch_model.bin`` that also pickles an object."""
    weights = load_file(folder / "model.safetensors")
    os.remove(folder / "model.safetensors")
    torch.save({**weights, "args": argparse.Namespace(lr=0.1)}, folder / "pytorch_model.bin")
    return folder / "pytorch_model.bin"


@pytest.fixture(scope="module")
def pickled_model(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("pickled") / "model"
    build_encoder("word", corpus=CORPUS, embedding_dim=6).save_pretrained(folder)
    return folder, _pickled(folder)


def _one_sentence(capsys, path: Path) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("paranmt-hf")]
    assert len(err) == 1, err
    assert path.name in err[0] and "nothing ran" in err[0], err
    assert "weights_only" not in err[0]
    return err[0]


def test_from_pretrained_names_the_pickle_and_runs_nothing(pickled_model):
    folder, path = pickled_model
    with pytest.raises(UnsafePickleError) as err:
        ParaNMTEncoder.from_pretrained(folder)
    message = str(err.value)
    assert str(path) in message and "argparse.Namespace" in message and "weights_only" not in message
    assert err.value.__cause__ is None and err.value.__suppress_context__  # no torch traceback behind it


@pytest.mark.parametrize("command", ["embed", "score", "annotate"])
def test_the_commands_say_it_in_one_sentence(pickled_model, tmp_path, capsys, command):
    folder, path = pickled_model
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("a man plays .\ta guy plays .\n")
    argv = {
        "embed": ["embed", str(folder), "--input", str(pairs), "--output", str(tmp_path / "e.npy")],
        "score": ["score", str(folder), "--input", str(pairs), "--output", str(tmp_path / "s.txt")],
        "annotate": ["corpus", "annotate", str(pairs), "--format", "pairs", "-o", str(tmp_path / "a.tsv"),
                     "--model", str(folder), "--workers", "1", "--quiet"],
    }[command]
    with pytest.raises(SystemExit) as status:
        main(argv)
    assert status.value.code == 1
    assert str(path) in _one_sentence(capsys, path)
    assert not list(tmp_path.glob("[esa].*"))


def test_backtranslate_says_it_in_one_sentence(tmp_path, capsys):
    pytest.importorskip("sentencepiece")
    from _synthetic_translation import build_translation_model, model_sentences

    model = build_translation_model(tmp_path / "marian", model_sentences(60, seed=0), kind="marian", seed=1)
    path = _pickled(Path(model))
    src = tmp_path / "bitext.de-en.tsv"
    src.write_text("".join(f"{s}\t{s}\n" for s in model_sentences(3, seed=2)))
    with pytest.raises(SystemExit) as status:
        main(["corpus", "backtranslate", str(src), "-o", str(tmp_path / "out.tsv"), "--model", str(model),
              "--quiet", "--workers", "1"])
    assert status.value.code == 1
    _one_sentence(capsys, path)  # the file named is the run's copy of the model (corpus tools copy it first)

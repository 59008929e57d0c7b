"""The command line speaks in flags, the Python API in keywords: the same refusal reads ``--overwrite`` in a
command's error line and ``overwrite=True`` when raised by the function, never both at once."""

from __future__ import annotations

import re

import pytest

from paranmt_hf import build_encoder
from paranmt_hf.cli.errors import cli_wording
from paranmt_hf.cli.main import main
from paranmt_hf.training.recipes import get_recipe
from paranmt_hf.training.trainer import train
from paranmt_hf.utils.atomic import OutputExistsError
from tests.test_training import write_pairs

KEYWORD = re.compile(r"\b[a-z]+(?:_[a-z]+)*=True\b|\boutput_dir\b|\bmax_steps\b")
FLAG = re.compile(r"(?<![\w-])--[a-z]")
TRAIN = ["--kind", "word", "--embedding-dim", "8", "--batch-size", "4", "--megabatch-size", "3", "--no-progress",
         "--save-steps", "3", "--max-steps", "3", "--keep-checkpoints", "--dev"]


def _line(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(argv)
    return capsys.readouterr().err.strip()


def test_train_refusals_in_flags_and_in_keywords(tmp_path, capsys):
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    out = tmp_path / "model"
    assert main(["train", "--train", data, "--output", str(out), *TRAIN]) == 0
    line = _line(capsys, ["train", "--train", data, "--output", str(out), *TRAIN])
    assert "pass --resume to continue it, --overwrite to replace it" in line and "another --output" in line
    assert not KEYWORD.search(line), line
    line = _line(capsys, ["train", "--train", data, "--output", str(out), *TRAIN, "--resume"])
    assert line.startswith("paranmt-hf train: --resume: the run of") and "a larger --max-steps" in line
    assert not KEYWORD.search(line), line
    recipe = get_recipe("acl2018-word")
    with pytest.raises(OutputExistsError) as err:
        train(recipe, [data], out, max_steps=3)
    assert "resume=True" in str(err.value) and "overwrite=True" in str(err.value)
    assert not FLAG.search(str(err.value)), err.value


def test_an_existing_output_in_flags_and_in_keywords(tmp_path, capsys):
    folder = tmp_path / "m"
    build_encoder("word", ["a man plays .", "a dog runs ."], embedding_dim=4).save_pretrained(folder)
    text = tmp_path / "in.txt"
    text.write_text("a man plays .\n")
    (tmp_path / "e.npy").write_bytes(b"")
    line = _line(capsys, ["embed", str(folder), "--input", str(text), "--output", str(tmp_path / "e.npy")])
    assert "pass --overwrite to replace it" in line and "overwrite=True" not in line
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / "x").write_text("x")
    line = _line(capsys, ["publish", str(folder), "--output", str(tmp_path / "hub")])
    assert line.endswith("replace it with --overwrite") and not KEYWORD.search(line), line
    from paranmt_hf.hub import publish

    with pytest.raises(FileExistsError) as err:
        publish(folder, tmp_path / "hub")
    assert str(err.value).endswith("replace it with overwrite=True") and not FLAG.search(str(err.value))


def test_only_the_commands_own_flags_replace_keywords():
    flags = ["--overwrite", "--max-steps", "--output"]
    assert cli_wording("pass --overwrite (overwrite=True) to replace it", flags) == "pass --overwrite to replace it"
    assert cli_wording("pass max_steps=6; output_dir x", flags, {"output_dir": "--output"}) == \
        "pass --max-steps 6; --output x"
    assert cli_wording("model_type=paranmt, trust_remote_code=True", flags) == \
        "model_type=paranmt, trust_remote_code=True"  # not flags of this command: left as they are
    assert cli_wording("recipe.max_steps: 3; max_steps (train --max-steps) 3", flags) == \
        "recipe.max_steps: 3; max_steps (train --max-steps) 3"  # a field, and a keyword that names its flag

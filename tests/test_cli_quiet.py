"""``--no-progress`` is quiet everywhere (the libraries' bars too); a warning is said once; no internal noise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paranmt_hf.training.trainer import run_folder

BARS = ("Generating train split", "Loading weights", "Writing model shards", "Computing widget examples",
        "Flattening the indices", "it/s]", "%|")
NOISE = ("mtime may not be reliable", "Traceback", "'train_runtime'")  # the trainer's log dict, printed without a bar


def cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "paranmt_hf.cli.main", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "pairs.tsv"
    rows = [f"a man number {i} plays the guitar\tsomeone number {i} plays a guitar" for i in range(60)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.data
def test_no_progress_is_silent_in_build_train_eval_score(pairs, data_dir, tmp_path):
    model, trained = tmp_path / "built", tmp_path / "trained"
    outputs = [
        cli("build", "--kind", "word", "--embedding-dim", "8", "--input", str(pairs), "--output", str(model),
            "--no-progress", cwd=tmp_path),
        cli("train", "--kind", "word", "--embedding-dim", "8", "--train", str(pairs), "--output", str(trained),
            "--batch-size", "8", "--max-steps", "4", "--save-steps", "1", "--dev", "STS17:en-en", "--data-dir",
            str(data_dir), "--no-progress", cwd=tmp_path),  # checkpoints within a second: transformers' mtime note
        cli("eval", str(trained), "--tasks", "STS17:en-en", "--data-dir", str(data_dir), "--no-progress",
            cwd=tmp_path),
    ]
    for done in outputs:
        assert done.returncode == 0, done.stderr
        text = done.stdout + done.stderr
        assert not [bar for bar in BARS + NOISE if bar in text], text
    assert not run_folder(trained).exists() and not (trained / "checkpoints").exists()  # removed once saved


def test_score_says_its_nan_rows_once(tmp_path):
    from paranmt_hf import build_encoder

    model = tmp_path / "m"
    build_encoder("word", corpus=["a man plays", "the dog runs"], embedding_dim=4).save_pretrained(model)
    scored = tmp_path / "in.tsv"
    scored.write_text("a man\ta man\n\nthe dog\t\n", encoding="utf-8")
    done = cli("score", str(model), "--input", str(scored), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[1] == "\t\tnan"
    assert done.stderr.count("are empty or have an empty sentence") == 1, done.stderr
    assert done.stderr.strip() == (f"paranmt-hf score: 2 line(s) of {scored} are empty or have an empty sentence: "
                                   "scored nan (row kept so rows line up with lines): line(s) 2, 3")

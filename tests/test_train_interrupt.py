"""Ctrl-C during ``train`` ends in one line that names the command and how to resume, with the shell's status of an
interrupted command (130), as the corpus tools do; the resumed run then finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.test_training import write_pairs

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ["--kind", "word", "--embedding-dim", "8", "--batch-size", "4", "--megabatch-size", "3", "--no-progress",
         "--save-steps", "2", "--max-steps", "6", "--dev"]

# the driver sends itself a real SIGINT (as Ctrl-C does) when the trainer starts its fourth step
DRIVER = """
import os, signal, sys
import transformers
from paranmt_hf.cli.main import main

real, calls = transformers.Trainer.training_step, []

def training_step(self, *args, **kwargs):
    calls.append(1)
    if len(calls) == 4:
        os.kill(os.getpid(), signal.SIGINT)
    return real(self, *args, **kwargs)

transformers.Trainer.training_step = training_step
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_is_one_line_with_status_130_and_the_run_resumes(tmp_path):
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    out = tmp_path / "model"
    argv = ["train", "--train", data, "--output", str(out), *TRAIN]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 128 + signal.SIGINT, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("paranmt-hf")]
    assert lines == [f"paranmt-hf train: interrupted; {out} was not written: run the same command again with "
                     "--resume (it continues from the last checkpoint)"], done.stderr
    assert not (out / "model.safetensors").exists()
    resumed = subprocess.run([sys.executable, "-m", "paranmt_hf.cli.main", *argv, "--resume"], capture_output=True,
                             text=True, env=env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert '"resumed_from_step": 2' in resumed.stdout

"""A core install (no torch, no transformers) runs ``embed``, ``score`` and ``eval`` on an averaging model: the CLI
loads it as a ``StaticEncoder``, as Python can, with the torch model's embeddings; a recurrent model names the extra
(tests/test_static_encoder.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
from _core_install import WITHOUT_TORCH

from paranmt_hf import ParaNMTEncoder, build_encoder

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ["a man plays the guitar .", "someone is playing a guitar .", "two dogs run in the snow ."] * 3

CORE = WITHOUT_TORCH + textwrap.dedent(
    """
    import json

    from paranmt_hf.cli.main import main

    status = main(json.loads(sys.argv[1]))
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))
    print("RESULT " + json.dumps({"status": status, "loaded": loaded}))
    """
)


def _core(argv: list[str]) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CORE, json.dumps(argv)], capture_output=True, text=True, env=env,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "RESULT " in done.stdout, done.stderr[-3000:]
    return json.loads(done.stdout.rsplit("RESULT ", 1)[1])


def test_embed_and_score_an_averaging_model_without_torch(tmp_path):
    folder = tmp_path / "model"
    encoder = build_encoder("trigram+word", CORPUS, embedding_dim=8)
    encoder.save_pretrained(folder)
    texts = ["a man plays guitar .", "dogs in the snow", "unseen words here"]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n")
    result = _core(["embed", str(folder), "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "e.npy"),
                    "--no-progress"])
    assert result == {"status": 0, "loaded": []}
    expected = ParaNMTEncoder.from_pretrained(folder).encode(texts)
    assert np.abs(np.load(tmp_path / "e.npy") - expected).max() <= 1e-6
    (tmp_path / "pairs.tsv").write_text(f"{texts[0]}\t{texts[1]}\n")
    result = _core(["score", str(folder), "--input", str(tmp_path / "pairs.tsv"), "--output",
                    str(tmp_path / "s.tsv"), "--no-progress"])
    assert result == {"status": 0, "loaded": []}
    score = float((tmp_path / "s.tsv").read_text().split("\t")[-1])
    cos = expected[0] @ expected[1] / np.linalg.norm(expected[0]) / np.linalg.norm(expected[1])
    assert abs(score - cos) <= 1e-5

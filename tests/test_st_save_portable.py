"""A model loaded with ``SentenceTransformer(dir, trust_remote_code=True)`` and saved by ``SentenceTransformer.save``
is a folder that loads everywhere: its ``modules.json`` names the shipped input module (sentence-transformers copies
the remote-code files), so it loads without paranmt_hf (``trust_remote_code=True``) and, where paranmt_hf is
installed, through the same lookup; its weights are readable as every other file (not safetensors' 0600). No
sentence-transformers code is patched for it: the module's own ``save`` writes its files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf import build_encoder

pytest.importorskip("sentence_transformers")

PORTABLE_REF = "input_module_paranmt.ParaNMTInputModule"
CORPUS = ["A man is playing a guitar.", "Two dogs run in the park!", "A woman is slicing an onion."] * 3
SENTENCES = ["A man plays the guitar.", "Dogs are running!"]

WITHOUT_PARANMT_HF = """
import importlib.abc, json, sys
import numpy as np

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "paranmt_hf" or name.startswith("paranmt_hf."):
            raise ModuleNotFoundError("blocked: " + name)

sys.meta_path.insert(0, Block())
from sentence_transformers import SentenceTransformer

model = SentenceTransformer(sys.argv[1], trust_remote_code=True, device="cpu")
np.save(sys.argv[2], model.encode(json.loads(sys.argv[3])))
assert not any(m.startswith("paranmt_hf") for m in sys.modules)
"""


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_saved_after_import_loads_without_paranmt_hf_and_is_readable(tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    source, out = tmp_path / "model", tmp_path / "resaved"
    build_encoder("trigram+word", CORPUS, embedding_dim=8, seed=1).save_pretrained(source)
    model = SentenceTransformer(str(source), device="cpu", trust_remote_code=True)  # sentence-transformers' rule
    expected = model.encode(SENTENCES)
    model.save(str(out))

    (entry,) = json.loads((out / "modules.json").read_text())
    assert entry["type"] == PORTABLE_REF
    assert (out / "input_module_paranmt.py").is_file()
    assert (out / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~_umask()

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(WITHOUT_PARANMT_HF), str(out),
                           str(tmp_path / "got.npy"), json.dumps(SENTENCES)], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "got.npy"), expected, atol=1e-6)
    again = SentenceTransformer(str(out), device="cpu", trust_remote_code=True)  # paranmt_hf installed and imported
    np.testing.assert_allclose(again.encode(SENTENCES), expected, atol=1e-6)


@pytest.mark.parametrize(("model_kwargs", "dtype"), [({"torch_dtype": "float16"}, "float16"),
                                                     ({"dtype": "bfloat16"}, "bfloat16"), ({}, "float32")])
def test_model_kwargs_dtype_loads_the_weights_in_that_dtype(model_kwargs: dict, dtype: str, tmp_path: Path) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    source = tmp_path / "model"
    build_encoder("trigram+word", CORPUS, embedding_dim=8, seed=1).save_pretrained(source)
    full = SentenceTransformer(str(source), device="cpu", trust_remote_code=True).encode(SENTENCES)
    # model_kwargs as for a Transformer module
    model = SentenceTransformer(str(source), device="cpu", trust_remote_code=True, model_kwargs=model_kwargs)
    assert next(model.parameters()).dtype == getattr(torch, dtype)
    np.testing.assert_allclose(model.encode(SENTENCES).astype(np.float32), full, atol=3e-2)

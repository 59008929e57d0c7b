"""A model re-saved by sentence-transformers after ``import paranmt_hf`` stays a folder that loads everywhere: its
``modules.json`` names the shipped input module (not the installed ``paranmt_hf...`` class), so it loads without
paranmt_hf (``trust_remote_code=True``), and its weights are readable as every other file (not safetensors' 0600)."""

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
from paranmt_hf.model.registration import INSTALLED_REF, PORTABLE_REF, make_portable

pytest.importorskip("sentence_transformers")

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
    model = SentenceTransformer(str(source), device="cpu")  # no flag: paranmt_hf is imported
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
    np.testing.assert_allclose(SentenceTransformer(str(out), device="cpu").encode(SENTENCES), expected, atol=1e-6)


def test_make_portable_rewrites_only_the_installed_class(tmp_path: Path) -> None:
    other = {"idx": 1, "name": "1", "path": "1_Normalize", "type": "sentence_transformers.models.Normalize"}
    (tmp_path / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "", "type": INSTALLED_REF},
                                                       other]))
    assert make_portable(tmp_path)
    assert json.loads((tmp_path / "modules.json").read_text()) == [
        {"idx": 0, "name": "0", "path": "", "type": PORTABLE_REF}, other]
    assert not make_portable(tmp_path)  # nothing left to change
    assert not make_portable(tmp_path / "nowhere")


def test_make_portable_by_two_writers_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes saving one folder (sentence-transformers' trainer had every ``torchrun`` rank do it) take turns
    at ``modules.json``: between one writer's write and its rename another cannot start (with a temporary name shared
    by all writers and no lock, the second took the first one's temporary away: a CI run failed on it)."""
    import threading

    from paranmt_hf.utils.atomic import OutputBusyError, output_lock

    modules_json = tmp_path / "modules.json"
    modules_json.write_text(json.dumps([{"idx": 0, "name": "0", "path": "", "type": INSTALLED_REF}]))
    modules_json.chmod(0o640)
    rename, other_writer = os.replace, []

    def try_to_write():  # another writer (its own lock file handle, as another process has)
        try:
            with output_lock(modules_json):
                other_writer.append("wrote")
        except OutputBusyError:
            other_writer.append("waits")

    def replace(source, target):
        if not other_writer:
            thread = threading.Thread(target=try_to_write)
            thread.start()
            thread.join()
        rename(source, target)

    monkeypatch.setattr(os, "replace", replace)
    assert make_portable(modules_json.parent)
    assert other_writer == ["waits"]
    assert json.loads(modules_json.read_text())[0]["type"] == PORTABLE_REF
    assert modules_json.stat().st_mode & 0o777 == 0o640  # the file's permissions are kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["modules.json"]  # no temporary or lock left


@pytest.mark.parametrize(("model_kwargs", "dtype"), [({"torch_dtype": "float16"}, "float16"),
                                                     ({"dtype": "bfloat16"}, "bfloat16"), ({}, "float32")])
def test_model_kwargs_dtype_loads_the_weights_in_that_dtype(model_kwargs: dict, dtype: str, tmp_path: Path) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    source = tmp_path / "model"
    build_encoder("trigram+word", CORPUS, embedding_dim=8, seed=1).save_pretrained(source)
    full = SentenceTransformer(str(source), device="cpu").encode(SENTENCES)
    model = SentenceTransformer(str(source), device="cpu", model_kwargs=model_kwargs)  # as for a Transformer module
    assert next(model.parameters()).dtype == getattr(torch, dtype)
    np.testing.assert_allclose(model.encode(SENTENCES).astype(np.float32), full, atol=3e-2)

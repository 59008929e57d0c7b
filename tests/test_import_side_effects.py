"""``import paranmt_hf`` changes nothing in sentence-transformers: no attribute of any of its modules or classes is
replaced, and a sentence-transformers model that has nothing to do with paranmt_hf saves to the same bytes before
and after the import (and after paranmt_hf has built, saved and loaded a model of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")

SCRIPT = """
import hashlib, inspect, json, os, sys
import sentence_transformers
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize, StaticEmbedding
from tokenizers import Tokenizer, models, pre_tokenizers
import torch

def snapshot():
    seen = {}
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("sentence_transformers") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            seen[f"{name}:{attr}"] = id(value)
            if inspect.isclass(value) and value.__module__.startswith("sentence_transformers"):
                for key, item in list(vars(value).items()):
                    seen[f"{name}:{attr}.{key}"] = id(item)
    return seen

def tiny():  # a sentence-transformers model built in code, unrelated to paranmt_hf
    vocab = {"[UNK]": 0, "a": 1, "man": 2, "plays": 3}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    torch.manual_seed(0)
    return SentenceTransformer(modules=[StaticEmbedding(tok, embedding_dim=4), Normalize()], device="cpu")

def saved(folder):
    tiny().save(folder)
    paths = [os.path.join(r, f) for r, _, files in os.walk(folder) for f in files]
    return {os.path.relpath(p, folder): hashlib.sha256(open(p, "rb").read()).hexdigest() for p in paths}

before = snapshot()
files_before = saved("before")
import paranmt_hf
from paranmt_hf import ParaNMTEncoder, build_encoder
enc = build_encoder("trigram+word", ["a man plays a guitar .", "a dog runs ."] * 3, embedding_dim=4, seed=1)
enc.save_pretrained("paranmt")
ParaNMTEncoder.from_pretrained("paranmt").encode(["a man plays"])
SentenceTransformer("paranmt", trust_remote_code=True, device="cpu").encode(["a man plays"])
after = snapshot()
files_after = saved("after")
changed = sorted(k for k in before if after.get(k) != before[k])
print(json.dumps({"changed": changed, "same_files": files_before == files_after, "files": sorted(files_before)}))
"""


def test_import_changes_no_sentence_transformers_attribute_and_no_saved_byte(tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "modules.json" in report["files"] and "model.safetensors" in report["files"]
    assert report["changed"] == []
    assert report["same_files"]

"""The ONNX export folder: its README's snippet runs without torch, transformers or paranmt_hf and gives the
model's embeddings; the int8 export prints no advice that does not apply."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import yaml

from paranmt_hf import build_encoder
from paranmt_hf.model.onnx import ONNX_README_SENTENCES, export_onnx

pytest.importorskip("onnxruntime")

CORPUS = ["A man is playing a guitar.", "A woman is slicing an onion.", "Two dogs run in the park!",
          "Café owners say ΣΟΦΙΑ is naïve."] * 3
SENTENCES = [*ONNX_README_SENTENCES, "", "zzz unseen qqq", "Café owners say ΣΟΦΙΑ is naïve."]
RUN = textwrap.dedent("""
    import json, re, sys
    for name in ("torch", "transformers", "paranmt_hf", "sentence_transformers"):
        sys.modules[name] = None  # the snippet must not need them
    text = open("README.md", encoding="utf-8").read()
    code = re.search(r"```python\\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "README.md", "exec"))
    print("EMBEDDINGS " + json.dumps(encode(json.loads(sys.argv[1])).tolist()))
""")


@pytest.mark.parametrize(("kind", "extra"), [("word", {}), ("sp", {"vocab_size": 60}), ("subword", {"vocab_size": 80}),
                                             ("trigram", {}), ("trigram+word", {"pooling": "max"})])
@pytest.mark.parametrize("int8", [False, True])
def test_readme_snippet_runs_without_torch(tmp_path, kind, extra, int8):
    encoder = build_encoder(kind, CORPUS, embedding_dim=16, seed=1, **extra)
    folder = tmp_path / "onnx"
    onnx_file = export_onnx(encoder, folder, int8=int8)
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert f'InferenceSession("{onnx_file.name}"' in readme and "onnxruntime tokenizers numpy" in readme
    front = yaml.safe_load(readme.split("---\n")[1])  # the Hub reads the folder's README front matter
    assert readme.startswith("---\n") and front["library_name"] == "onnx" and "onnx" in front["tags"]
    done = subprocess.run([sys.executable, "-c", RUN, json.dumps(SENTENCES)], cwd=folder, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[[")  # the README's own example printed its similarity matrix
    got = np.array(json.loads(done.stdout.split("EMBEDDINGS ", 1)[1]), dtype=np.float32)
    expected = encoder.encode(SENTENCES)
    assert got.shape == expected.shape
    if int8:
        cos = (got * expected).sum(1) / np.maximum(np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1),
                                                   1e-12)
        assert cos[np.linalg.norm(expected, axis=1) > 0].min() > 0.99
    else:
        assert np.abs(got - expected).max() <= 1e-5


def test_int8_export_prints_no_preprocessing_hint(tmp_path, caplog):
    encoder = build_encoder("word", CORPUS, embedding_dim=16, seed=1)
    with caplog.at_level(logging.WARNING):
        export_onnx(encoder, tmp_path / "int8", int8=True)
        logging.warning("Please consider to run pre-processing before quantization? not inside the export")
    assert [r.getMessage()[:30] for r in caplog.records] == ["Please consider to run pre-pro"]  # only ours

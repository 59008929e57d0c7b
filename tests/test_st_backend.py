"""``SentenceTransformer(dir, backend="onnx")`` of a ParaNMT model refuses clearly, never silently runs torch."""

from __future__ import annotations

import pytest

from paranmt_hf import build_encoder

st = pytest.importorskip("sentence_transformers")


def test_onnx_backend_is_refused_with_the_way_to_onnx(tmp_path):
    build_encoder("word", corpus=["a man plays the guitar", "two dogs run"], embedding_dim=4).save_pretrained(tmp_path)
    for backend in ("onnx", "openvino"):
        with pytest.raises(ValueError, match=rf"backend='{backend}'.*paranmt-hf export MODEL_DIR --format onnx"):
            st.SentenceTransformer(str(tmp_path), backend=backend, trust_remote_code=True)
    model = st.SentenceTransformer(str(tmp_path), backend="torch", trust_remote_code=True)
    assert model.encode(["a man"]).shape == (1, 4)

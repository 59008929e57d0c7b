"""The torch-free path (``paranmt_hf.model.static.StaticEncoder``): averaging models embed with NumPy + tokenizers,
equal to ``ParaNMTEncoder`` (≤ 1e-6), with torch and transformers blocked from importing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from _core_install import WITHOUT_TORCH
from test_featurization import TRICKY, _fuzz, wordpiece_backend

from paranmt_hf import ParaNMTEncoder, StaticEncoder, build_encoder
from paranmt_hf.model import averaging

CORPUS = ["A man is playing a guitar.", "A woman is slicing an onion.", "I don't think it's 3.5 dollars.",
          "Two dogs run in the park!", "Café owners in São Paulo say ΣΟΦΙΑ is naïve."] * 3
TEXTS = TRICKY + _fuzz(200, seed=4) + CORPUS
VARIANTS = {
    "word": ("word", {}),
    "sp": ("sp", {"vocab_size": 60}),
    "subword": ("subword", {"subword_tokenizer": "wordpiece"}),
    "trigram": ("trigram", {}),
    "trigram+word": ("trigram+word", {}),
    "trigram+subword": ("trigram+subword", {"subword_tokenizer": "wordpiece"}),
    "sp+trigram add": ("sp+trigram", {"vocab_size": 60, "combination": "add"}),
    "word drop_unknown": ("word", {"drop_unknown_tokens": True}),
    "trigram+word max_seq_length": ("trigram+word", {"max_seq_length": 5}),
    "word max pooling": ("word", {"pooling": "max"}),
}


def _build(name: str) -> ParaNMTEncoder:
    kind, extra = VARIANTS[name]
    extra = dict(extra)
    if extra.get("subword_tokenizer") == "wordpiece":
        extra["subword_tokenizer"] = wordpiece_backend()
    encoder = build_encoder(kind, CORPUS, embedding_dim=8, seed=3, **extra)
    import torch

    with torch.no_grad():  # trained-like unknown rows (nonzero), so that the unknown-token rules matter
        for component in encoder.model.components:
            component.embedding.weight[component.unk_token_id] = 0.5
    return encoder


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("static")
    out = {}
    for name in VARIANTS:
        path = root / name.replace(" ", "_").replace("+", "_")
        encoder = _build(name)
        encoder.save_pretrained(path)
        np.save(str(path) + ".npy", encoder.encode(TEXTS))
        out[name] = path
    return out


@pytest.mark.parametrize("sums", ["numpy", "scipy"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_static_encoder_equals_the_torch_model(saved, name, sums, monkeypatch):
    """Both ways of summing rows (NumPy blocks; SciPy's CSR product) give the torch model's embeddings."""
    if sums == "scipy":
        pytest.importorskip("scipy.sparse")
    monkeypatch.setattr(averaging, "USE_SCIPY", sums == "scipy")
    static = StaticEncoder.from_pretrained(saved[name])
    expected = np.load(str(saved[name]) + ".npy")
    for batch_size in (None, 7):
        got = static.encode(TEXTS, batch_size=batch_size, show_progress_bar=False)
        assert got.dtype == np.float32 and got.shape == expected.shape
        assert np.abs(got - expected).max() <= 1e-6
    again = static.encode(TEXTS)  # warm chunk caches
    assert np.abs(again - expected).max() <= 1e-6
    assert static.embedding_dim == expected.shape[1] and static.get_embedding_dimension() == expected.shape[1]


@pytest.mark.parametrize("name", ["trigram+subword", "sp+trigram add", "trigram+word max_seq_length",
                                  "word drop_unknown", "sp"])
def test_block_by_block_sums_equal_the_torch_model(saved, name, monkeypatch):
    """A scratch buffer of a few rows: every segment sum runs over many blocks (and segments longer than a block)."""
    monkeypatch.setattr(averaging, "USE_SCIPY", False)
    monkeypatch.setattr(averaging, "SCRATCH_BYTES", 3 * 8 * 4)
    monkeypatch.setattr(averaging, "GROUP_BYTES", 2 * 8 * 4)
    static = StaticEncoder.from_pretrained(saved[name])
    expected = np.load(str(saved[name]) + ".npy")
    long = " ".join(CORPUS)  # one sentence of ~100 chunks and ~500 trigrams
    reference = ParaNMTEncoder.from_pretrained(saved[name]).encode([long, ""])
    for batch_size in (None, 5):
        got = static.encode(TEXTS + [long, ""], batch_size=batch_size, show_progress_bar=False)
        assert np.abs(got[: len(TEXTS)] - expected).max() <= 1e-6
        assert np.abs(got[len(TEXTS) :] - reference).max() <= 1e-6
    static.averager.clear()  # cached vectors forgotten, their buffer reused: nothing stale is read
    assert np.abs(static.encode(TEXTS[::-1]) - expected[::-1]).max() <= 1e-6


@pytest.mark.parametrize("scratch, group, use_scipy", [
    (averaging.SCRATCH_BYTES, averaging.GROUP_BYTES, False), (5 * 16 * 4, 2 * 16 * 4, False), (16 * 4, 16 * 4, False),
    (averaging.SCRATCH_BYTES, averaging.GROUP_BYTES, True)])
def test_segment_sums_equal_plain_sums(scratch, group, use_scipy, monkeypatch):
    """Sums of segments of one length are collected ``group`` bytes at a time (three segments of length 3 here); the
    SciPy product writes into a column view through a buffer, and adds."""
    if use_scipy:
        pytest.importorskip("scipy.sparse")
    monkeypatch.setattr(averaging, "USE_SCIPY", use_scipy)
    monkeypatch.setattr(averaging, "SCRATCH_BYTES", scratch)
    monkeypatch.setattr(averaging, "GROUP_BYTES", group)
    rng = np.random.default_rng(0)
    table = rng.standard_normal((50, 16)).astype(np.float32)
    lengths = np.array([0, 3, 1, 0, 7, 3, 12, 1, 0, 3, 2], dtype=np.int64)
    index = rng.integers(0, 50, int(lengths.sum()))
    bounds = np.cumsum(lengths) - lengths
    expected = np.stack([table[index[a : a + n]].astype(np.float64).sum(0)
                         for a, n in zip(bounds, lengths, strict=True)])
    got = averaging.segment_sum_lengths(table, index, lengths)
    assert got.dtype == np.float32 and np.abs(got - expected).max() <= 1e-5
    wide = np.full((len(lengths), 20), 7.0, dtype=np.float32)  # into a column view; add=True adds to it
    averaging.segment_sum_lengths(table, index, lengths, out=wide[:, 2:18])
    assert np.abs(wide[:, 2:18] - expected).max() <= 1e-5 and (wide[:, :2] == 7).all() and (wide[:, 18:] == 7).all()
    averaging.segment_sum_lengths(table, index, lengths, out=wide[:, 2:18], add=True)
    assert np.abs(wide[:, 2:18] - 2 * expected).max() <= 2e-5
    assert averaging.segment_sum_lengths(table, index[:0], np.zeros(0, dtype=np.int64)).shape == (0, 16)
    assert (averaging.segment_sum_lengths(table, index[:0], np.zeros(3, dtype=np.int64)) == 0).all()


def test_sparse_sums_check_ids_and_scipy(monkeypatch):
    """SciPy's kernel reads rows unchecked: ids outside the table are refused first. SciPy is imported for a large sum
    only (or once something else imported it); ``USE_SCIPY=True`` without SciPy names the extra."""
    pytest.importorskip("scipy.sparse")
    monkeypatch.setattr(averaging, "USE_SCIPY", True)
    table = np.ones((4, 3), dtype=np.float32)
    for bad in (4, -1):
        with pytest.raises(IndexError, match="outside a table of 4 rows"):
            averaging.segment_sum_lengths(table, np.array([0, bad]), np.array([2]))
    monkeypatch.setattr(averaging, "USE_SCIPY", None)
    monkeypatch.setattr(averaging, "_kernel", None)
    loaded = sys.modules["scipy.sparse"]
    monkeypatch.delitem(sys.modules, "scipy.sparse")
    assert averaging._csr_kernel(averaging.SPARSE_MIN_ROWS - 1) is None and averaging._kernel is None
    sys.modules["scipy.sparse"] = loaded
    assert averaging._csr_kernel(10) is not None
    monkeypatch.setattr(averaging, "_kernel", False)  # SciPy not installed
    assert averaging._csr_kernel(10**6) is None
    monkeypatch.setattr(averaging, "USE_SCIPY", True)
    with pytest.raises(ImportError, match=r"the \[fast\] extra\): `pip install"):
        averaging._csr_kernel(10)


@pytest.mark.parametrize("weight_dtype", ["float16", "int8"])
def test_smaller_weight_storage_loads_as_in_paranmt_encoder(tmp_path, weight_dtype):
    encoder = _build("trigram+word")
    encoder.save_pretrained(tmp_path, weight_dtype=weight_dtype)
    expected = ParaNMTEncoder.from_pretrained(tmp_path).encode(TEXTS)
    assert np.abs(StaticEncoder.from_pretrained(tmp_path).encode(TEXTS) - expected).max() <= 1e-6


def test_recurrent_models_and_wrong_folders_are_refused(tmp_path):
    build_encoder("lstm", CORPUS, embedding_dim=8).save_pretrained(tmp_path / "lstm")
    with pytest.raises(ValueError, match=r"recurrent model \(lstm\).*ParaNMTEncoder \(the \[torch\] extra: `pip "):
        StaticEncoder.from_pretrained(tmp_path / "lstm")
    with pytest.raises(FileNotFoundError):
        StaticEncoder.from_pretrained(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="config.json"):
        StaticEncoder.from_pretrained(tmp_path / "empty")


BLOCKED = textwrap.dedent(
    """
    import importlib.abc, json, sys, time

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in ("torch", "transformers", "sentence_transformers"):
                raise ModuleNotFoundError("blocked: " + name)

    sys.meta_path.insert(0, Block())
    started = time.perf_counter()
    import numpy as np
    from paranmt_hf import StaticEncoder

    texts, out = json.loads(sys.argv[1]), sys.argv[2]
    for i, path in enumerate(sys.argv[3:]):
        np.save(f"{out}/{i}.npy", StaticEncoder.from_pretrained(path).encode(texts, normalize_embeddings=True))
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers", "safetensors"))
    print("RESULTS " + json.dumps({"loaded": loaded, "seconds": time.perf_counter() - started}))
    """
)


def test_embeds_with_torch_and_transformers_blocked(saved, tmp_path):
    names = ["word", "sp", "trigram+subword", "sp+trigram add"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, "-c", BLOCKED, json.dumps(TEXTS), str(tmp_path),
                           *[str(saved[n]) for n in names]], capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.rsplit("RESULTS ", 1)[1])
    assert results["loaded"] == []  # neither torch nor transformers (nor safetensors) was imported
    for i, name in enumerate(names):
        expected = np.load(str(saved[name]) + ".npy")
        expected = expected / np.maximum(np.linalg.norm(expected, axis=1, keepdims=True), 1e-12)
        assert np.abs(np.load(tmp_path / f"{i}.npy") - expected).max() <= 1e-6, name


NO_TORCH = WITHOUT_TORCH + textwrap.dedent(
    """
    try:
        from paranmt_hf import ParaNMTEncoder  # noqa: F401
    except ImportError as err:
        print("IMPORT " + str(err))
    from paranmt_hf.cli.main import main

    sys.exit(main(["embed", sys.argv[1], "--input", sys.argv[2], "--output", sys.argv[3]]))
    """
)


def test_a_core_install_names_the_extra(saved, tmp_path):
    """For a recurrent model (``embed`` of an averaging one works: tests/test_core_install_cli.py)."""
    (tmp_path / "in.txt").write_text("a man plays\n")
    build_encoder("lstm", CORPUS, embedding_dim=8).save_pretrained(tmp_path / "lstm")
    done = subprocess.run([sys.executable, "-c", NO_TORCH, str(tmp_path / "lstm"), str(tmp_path / "in.txt"),
                           str(tmp_path / "out.npy")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdin=subprocess.DEVNULL)
    assert "IMPORT 'torch' is needed for this feature: install it with `pip install" in done.stdout, \
        done.stdout + done.stderr[-2000:]
    assert "[torch]" in done.stdout
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("paranmt-hf embed: ") and "[torch]" in done.stderr

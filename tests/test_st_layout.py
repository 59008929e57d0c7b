"""Saved model directories load in sentence-transformers (stock modules) and embed exactly like ParaNMTEncoder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("sentence_transformers")

import numpy as np  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

from paranmt_hf import (
    ParaNMTInputModule,  # noqa: E402
    build_encoder,  # noqa: E402
)
from paranmt_hf.model.st_layout import static_embedding_is_exact  # noqa: E402

CORPUS = ["a man plays a guitar .", "a dog runs in the park .", "the cat sleeps .", "two men are talking ."] * 3
TEXTS = ["a man plays", "The DOG runs !", "", "zzz unknown words", "   "]
KINDS = ["word", "sp", "subword", "trigram", "lstm", "bilstm", "gran", "trigram+word", "trigram+subword", "word+lstm"]
STATIC_KINDS = {"word", "sp", "subword"}
FLAT_KINDS = {"word", "sp", "subword", "trigram", "trigram+word", "trigram+subword"}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, str]:
    """One saved directory per encoder kind, with the reference embeddings of TEXTS in ``<dir>.npy``."""
    root = tmp_path_factory.mktemp("saved")
    dirs = {}
    for kind in KINDS:
        vocab_size = 40 if kind in ("sp", "subword") else None
        encoder = build_encoder(kind, corpus=CORPUS, embedding_dim=8, seed=3, vocab_size=vocab_size)
        path = str(root / kind.replace("+", "_"))
        encoder.save_pretrained(path, static=kind in STATIC_KINDS)
        np.save(path + ".npy", encoder.encode(TEXTS))
        dirs[kind] = path
    return dirs


@pytest.mark.parametrize("kind", KINDS)
def test_sentence_transformer_loads_the_fast_module_for_every_kind(saved, kind):
    path = saved[kind]
    modules = json.load(open(os.path.join(path, "modules.json")))
    assert modules == [{"idx": 0, "name": "0", "path": "", "type": "input_module_paranmt.ParaNMTInputModule"}]
    for name in ("input_module_paranmt.py", "featurization_paranmt.py", "tokenization_paranmt.py",
                 "modeling_paranmt.py", "configuration_paranmt.py", "paranmt_st_config.json"):
        assert os.path.isfile(os.path.join(path, name)), name
    assert not os.path.exists(os.path.join(path, "sentence_bert_config.json"))
    with pytest.raises(ValueError, match="trust_remote_code"):  # sentence-transformers' rule, paranmt_hf imported
        SentenceTransformer(path, device="cpu")
    model = SentenceTransformer(path, device="cpu", trust_remote_code=True)
    assert type(model[0]).__name__ == "ParaNMTInputModule"  # the folder's module, not the padded Transformer
    assert type(model[0]).__module__.startswith("transformers_modules.")
    # paranmt_hf is installed: the folder's featuriser takes its batched ids (the remote tokenizer read by its specs)
    assert model[0].featurizer.fast_ids is not None
    assert model[0].is_flat == (kind in FLAT_KINDS)
    expected = np.load(path + ".npy")
    assert np.abs(model.encode(TEXTS) - expected).max() <= 1e-6
    assert np.abs(model.encode(TEXTS, batch_size=2) - expected).max() <= 1e-6
    assert model.get_embedding_dimension() == expected.shape[1]
    assert model.max_seq_length is None
    assert os.path.isdir(os.path.join(path, "static")) == (kind in STATIC_KINDS)


def test_max_seq_length_is_saved_and_honoured(tmp_path):
    encoder = build_encoder("trigram+word", corpus=CORPUS, embedding_dim=8, seed=3)
    long_text = ["a man plays a guitar . " * 50]
    full = encoder.encode(long_text)
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    model.max_seq_length = 5
    truncated = model.encode(long_text)
    assert np.abs(truncated - full).max() > 1e-3  # the setting changes what is read
    model[0].save_pretrained(tmp_path / "m")
    assert json.load(open(tmp_path / "m" / "config.json"))["max_seq_length"] == 5
    from paranmt_hf import ParaNMTEncoder

    reloaded = ParaNMTEncoder.from_pretrained(tmp_path / "m")
    np.testing.assert_allclose(reloaded.encode(long_text), truncated, atol=1e-6)
    reloaded_st = SentenceTransformer(str(tmp_path / "m"), device="cpu", trust_remote_code=True)
    np.testing.assert_allclose(reloaded_st.encode(long_text), truncated, atol=1e-6)
    # the first 5 trigrams and the first 5 words: the same as encoding the first words alone
    np.testing.assert_allclose(truncated[0, 8:], encoder.encode(["a man plays a guitar"])[0, 8:], atol=1e-6)


LEGACY_CONFIG = {
    "transformer_task": "feature-extraction",
    "modality_config": {"text": {"method": "forward", "method_output_name": "pooler_output"}},
    "module_output_name": "sentence_embedding",
}


@pytest.mark.parametrize("kind", ["word", "trigram", "lstm"])
def test_directories_of_the_earlier_layout_keep_loading(saved, tmp_path, kind):
    """The previous release named sentence-transformers' Transformer module (padded path): still loads, same output."""
    import shutil

    path = tmp_path / kind
    shutil.copytree(saved[kind], path)
    (path / "modules.json").write_text(json.dumps(
        [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.base.modules.transformer.Transformer"}]))
    (path / "sentence_bert_config.json").write_text(json.dumps(LEGACY_CONFIG))
    for name in ("input_module_paranmt.py", "featurization_paranmt.py", "paranmt_st_config.json"):
        (path / name).unlink()
    model = SentenceTransformer(str(path), device="cpu")
    assert type(model[0]).__name__ == "Transformer"
    assert np.abs(model.encode(TEXTS) - np.load(saved[kind] + ".npy")).max() <= 1e-6


@pytest.mark.parametrize("kind", sorted(STATIC_KINDS))
def test_static_embedding_layout(saved, kind):
    path = os.path.join(saved[kind], "static")
    modules = json.load(open(os.path.join(path, "modules.json")))
    assert modules[0]["type"] == "sentence_transformers.sentence_transformer.modules.static_embedding.StaticEmbedding"
    model = SentenceTransformer(path, device="cpu")
    got, expected = model.encode(TEXTS), np.load(saved[kind] + ".npy")
    np.testing.assert_allclose(got, expected, atol=1e-6)  # every text, the empty ones included


@pytest.mark.parametrize("kind", sorted(STATIC_KINDS))
def test_model2vec_loads_the_static_copy_with_the_same_cosines(saved, kind):
    model2vec = pytest.importorskip("model2vec")
    got = model2vec.StaticModel.from_pretrained(os.path.join(saved[kind], "static")).encode(TEXTS)
    expected = np.load(saved[kind] + ".npy")
    empty = [i for i, t in enumerate(TEXTS) if not t.strip()]
    assert not got[empty].any() and not expected[empty].any()  # "" embeds as zeros in both
    zero = ~expected.any(axis=1)  # a text of unknown pieces only: zeros in both too
    np.testing.assert_array_equal(zero, ~got.any(axis=1))
    rows = np.flatnonzero(~zero)

    def unit(x):
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    # model2vec leaves unknown pieces out of the mean: the same direction (their rows are zero)
    np.testing.assert_allclose(unit(got[rows]), unit(expected[rows]), atol=1e-5)


def test_no_second_table_by_default_and_no_inexact_static_copy(tmp_path):
    import torch

    from paranmt_hf.model.export import export_model

    encoder = build_encoder("sp", corpus=CORPUS, embedding_dim=8, vocab_size=40, seed=3)
    encoder.save_pretrained(tmp_path / "plain")
    assert not (tmp_path / "plain" / "static").exists()  # the table is stored once
    with torch.no_grad():  # a trained unknown-token row: "" would embed as zeros in StaticEmbedding, as it here
        encoder.model.components[0].embedding.weight[encoder.config.unk_token_id] = 1.0
    assert not static_embedding_is_exact(encoder.model, encoder.tokenizer)
    with pytest.raises(ValueError, match="StaticEmbedding would not reproduce"):
        encoder.save_pretrained(tmp_path / "static-asked", static=True)
    with pytest.raises(ValueError, match="StaticEmbedding would not reproduce"):
        export_model(encoder, tmp_path / "export", "static")
    assert not (tmp_path / "export").exists()
    with torch.no_grad():
        encoder.model.components[0].embedding.weight[encoder.config.unk_token_id] = 0.0
    result = export_model(encoder, tmp_path / "export", "static")
    assert result.min_cosine >= 0.99999 and result.max_abs_diff <= 1e-6
    exported = SentenceTransformer(str(tmp_path / "export"), device="cpu")
    np.testing.assert_allclose(exported.encode(TEXTS), encoder.encode(TEXTS), atol=1e-6)


def test_stale_static_copy_is_removed(tmp_path):
    build_encoder("word", corpus=CORPUS, embedding_dim=8).save_pretrained(tmp_path, static=True)
    assert (tmp_path / "static" / "modules.json").is_file()
    build_encoder("lstm", corpus=CORPUS, embedding_dim=8).save_pretrained(tmp_path)
    assert not (tmp_path / "static").exists()
    with pytest.raises(ValueError, match="StaticEmbedding would not reproduce"):
        from paranmt_hf.model.st_layout import write_sentence_transformers_files

        lstm = build_encoder("lstm", corpus=CORPUS, embedding_dim=8)
        write_sentence_transformers_files(lstm.model, lstm.tokenizer, tmp_path, static=True)


def test_static_layout_only_where_exact():
    def exact(**kwargs):
        encoder = build_encoder(kwargs.pop("kind", "word"), corpus=CORPUS, embedding_dim=8, **kwargs)
        return static_embedding_is_exact(encoder.model, encoder.tokenizer)

    assert exact()
    assert not exact(pooling="max")
    assert not exact(drop_unknown_tokens=True)
    assert not exact(max_seq_length=16)
    assert not exact(kind="trigram")
    assert not exact(kind="gran")


BLOCKED_LOAD = textwrap.dedent(
    """
    import importlib.abc, json, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "paranmt_hf" or name.startswith("paranmt_hf."):
                raise ModuleNotFoundError("blocked: " + name)

    sys.meta_path.insert(0, Block())
    import numpy as np
    from sentence_transformers import SentenceTransformer

    texts, results = json.loads(sys.argv[1]), {}
    for path in sys.argv[2:]:
        try:
            SentenceTransformer(path, device="cpu")
            results[path + ":noflag"] = "loaded"
        except ValueError as err:
            results[path + ":noflag"] = "trust_remote_code" if "trust_remote_code" in str(err) else str(err)
        model = SentenceTransformer(path, device="cpu", trust_remote_code=not path.endswith("static"))
        results[path + ":module"] = type(model[0]).__module__
        expected = np.load(path.removesuffix("/static") + ".npy")
        results[path] = float(np.abs(model.encode(texts) - expected).max())
    from transformers import AutoModel

    word = sys.argv[2]
    try:
        AutoModel.from_pretrained(word)
        results["automodel:noflag"] = "loaded"
    except ValueError as err:
        results["automodel:noflag"] = "trust_remote_code" if "trust_remote_code" in str(err) else str(err)
    results["automodel"] = type(AutoModel.from_pretrained(word, trust_remote_code=True)).__module__
    try:
        import paranmt_hf  # noqa: F401
        results["paranmt_hf"] = "importable"
    except ImportError:
        results["paranmt_hf"] = "blocked"
    print("\\nRESULTS " + json.dumps(results))
    """
)


def test_loads_where_paranmt_hf_is_not_installed(saved):
    paths = [saved["word"], saved["lstm"], saved["trigram"], saved["trigram+word"], saved["word"] + "/static"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, "-c", BLOCKED_LOAD, json.dumps(TEXTS), *paths], capture_output=True,
                          text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.rsplit("RESULTS ", 1)[1])
    assert results["paranmt_hf"] == "blocked"
    for path in paths[:4]:  # sentence-transformers asks for the flag to run the shipped input_module_paranmt.py
        assert results[path + ":noflag"] == "trust_remote_code"
        assert results[path + ":module"].startswith("transformers_modules.")  # the shipped fast module
        assert results[path + ":module"].endswith(".input_module_paranmt")
        assert results[path] <= 1e-6
    assert results["automodel:noflag"] == "trust_remote_code"
    assert results["automodel"].startswith("transformers_modules.")  # the shipped remote code
    assert results[paths[4] + ":noflag"] == "loaded"  # StaticEmbedding: no custom code at all
    assert results[paths[4]] <= 1e-6


def test_input_module_round_trip_through_sentence_transformers_save(tmp_path):
    encoder = build_encoder("lstm", corpus=CORPUS, embedding_dim=8, seed=5)
    module = ParaNMTInputModule.from_encoder(encoder)
    model = SentenceTransformer(modules=[module], device="cpu")
    expected = encoder.encode(TEXTS)
    np.testing.assert_allclose(model.encode(TEXTS), expected, atol=1e-6)
    model.save(str(tmp_path / "st"))
    assert os.path.isfile(tmp_path / "st" / "paranmt_st_config.json")
    assert os.path.isfile(tmp_path / "st" / "input_module_paranmt.py")
    # modules.json names the installed class (paranmt_hf.modeling...): sentence-transformers imports it, with the flag
    assert json.load(open(tmp_path / "st" / "modules.json"))[0]["type"] == (
        "paranmt_hf.modeling.input_module_paranmt.ParaNMTInputModule")
    reloaded = SentenceTransformer(str(tmp_path / "st"), device="cpu", trust_remote_code=True)
    assert type(reloaded[0]) is ParaNMTInputModule
    np.testing.assert_allclose(reloaded.encode(TEXTS), expected, atol=1e-6)
    module.model.train()
    module.save_pretrained(tmp_path / "portable")
    assert module.model.training  # train/eval mode kept
    portable = SentenceTransformer(str(tmp_path / "portable"), device="cpu", trust_remote_code=True)
    np.testing.assert_allclose(portable.encode(TEXTS), expected, atol=1e-6)
    modules = json.load(open(tmp_path / "portable" / "modules.json"))
    assert modules[0]["type"] == "input_module_paranmt.ParaNMTInputModule"

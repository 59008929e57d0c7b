"""Conversion of ParaNMT-50M pickles, golden-tested against the original inference on raw STS sentences.

Every model type of jwieting/para-nmt-50m (``-model`` wordaverage, maxpool, lstmavg, lstmmax, bilstmavg, bilstmmax
with ``-axis`` 1 and 2, ``-wordtype`` words and 3grams, ``-combination_type`` ngram-word / ngram-lstm / word-lstm /
ngram-word-lstm, concat and add) is written as a synthetic pickle in the exact released format (Python 2 protocol-2
pickle of ``get_all_param_values + [words]``), converted, and compared with ``tests/paranmt50m_original.py`` (a
NumPy re-implementation of the original code) on raw sentences with capitals and punctuation, through
``ParaNMTEncoder``, ``AutoModel`` remote code in a process without paranmt_hf, and ``SentenceTransformer(dir)``.
"""

from __future__ import annotations

import json
import os
import random
import zlib
from collections import Counter

import numpy as np
import paranmt50m_original as orig
import pytest
import torch
from test_loading import remote_code_embeddings

from paranmt_hf.model.convert.paranmt50m import convert_paranmt50m, guess_token_type, load_paranmt50m_pickle
from paranmt_hf.model.encoder import ParaNMTEncoder
from paranmt_hf.model.tokenization.word import split_words

MIN_COSINE = 0.99999
EXTRA = [  # raw-text corner cases: punctuation glued to words, case, Unicode, whitespace runs, no known token
    "A man, playing the guitar!", "\"Don't,\" she said...", "U.S. troops -- and (allies) -- left.",
    "  Tabs\tand   spaces  ", "ΟΔΟΣ İSTANBUL naïve café", "qqqq zzzz", "a",
]


@pytest.fixture(scope="module")
def raw(data_dir) -> list[str]:
    """Raw STS 2012-2016 sentences (as evaluate.py reads them: the text columns as they are)."""
    out = []
    for f in sorted((data_dir / "eval" / "sts").glob("STS1[2-6]-en-test/STS.input.*.txt")):
        for line in f.read_text(encoding="utf-8").splitlines():
            out.extend(line.split("\t")[:2])
    assert len(out) > 10_000
    random.Random(1).shuffle(out)
    return out


@pytest.fixture(scope="module")
def corpus(raw) -> dict:
    """Vocabularies of tokenised, lower-cased text (as ParaNMT's) and raw test sentences."""
    train = [" ".join(words) for words in split_words(raw[:3000])]
    counts = Counter(w for s in train for w in s.split())
    words = sorted((w for w, c in counts.items() if c > 1), key=lambda w: (-counts[w], w))
    trigrams = sorted({(" " + s.strip())[j : j + 3] for s in train for j in range(len(s) - 1)})
    test = [t for t in raw[3000:3300] if t.split()] + EXTRA  # the original embeds a text without words as NaN
    return {"words": words, "trigrams": [t for t in trigrams if len(t) == 3], "test": test}


def worst_cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float((a * b).sum(axis=1).min())


def build_case(name: str, corpus: dict, tmp_path) -> tuple:
    """(pickle path, convert kwargs, expected embeddings of corpus["test"], sentences) for one model type."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    words, trigrams, test = orig.make_vocab(corpus["words"]), orig.make_vocab(corpus["trigrams"]), corpus["test"]
    path = tmp_path / f"{name}.pickle"
    kind, _, variant = name.partition(":")
    if kind in ("wordaverage", "maxpool"):
        vocab = trigrams if variant == "3grams" else words
        we = rng.normal(size=(len(vocab), 12))  # float64: Theano's default floatX
        orig.save_params(path, [we], vocab)
        token_type = "trigram" if variant == "3grams" else "word"
        texts = test + ["", "   "] if token_type == "trigram" else test  # no trigram: [UUUNKKK]; no word: NaN
        want = orig.embed_single(texts, kind, we, orig.as_loaded(vocab), token_type=token_type)
        return path, {"model": kind if kind == "maxpool" else None}, want, texts
    if "lstm" in kind and "-" not in kind:  # lstmavg, lstmmax, bilstmavg, bilstmmax (-axis variant)
        axis = int(variant or 2)
        we = rng.normal(size=(len(words), 10)).astype(np.float32)  # floatX=float32 (GPU training)
        layers = [orig.lstm_arrays(rng, 10, 7) for _ in range(2 if kind.startswith("bi") else 1)]
        orig.save_params(path, [we, *(a for layer in layers for a in layer)], words)
        want = orig.embed_single(test, kind, we.astype(np.float64), orig.as_loaded(words),
                                 [orig.named(layer) for layer in layers], axis=axis)
        return path, {"model": kind, "axis": axis}, want, test
    # combinations: -combination_type kind, -combination_method variant
    names, dim = kind.split("-"), 8
    tables = [rng.normal(size=(len(trigrams if n == "ngram" else words), dim)) for n in names]
    lstm = orig.lstm_arrays(rng, dim, dim, dtype=np.float64) if "lstm" in names else []
    orig.save_params(path, [*tables, *lstm], (trigrams, words))
    want = orig.embed_mixed(test, kind, variant, tables, orig.as_loaded(trigrams), orig.as_loaded(words),
                            orig.named(lstm) if lstm else None)
    return path, {"combination": variant}, want, test


CASES = [
    "wordaverage", "wordaverage:3grams", "maxpool", "lstmavg", "lstmmax", "bilstmavg", "bilstmavg:1", "bilstmmax",
    "bilstmmax:1", "ngram-word:concat", "ngram-word:add", "ngram-lstm:concat", "word-lstm:add",
    "ngram-word-lstm:concat", "ngram-word-lstm:add",
]

REMOTE_CASES = [  # every kind of component and merge, fewer loads (each costs a remote-code import)
    "wordaverage", "wordaverage:3grams", "lstmavg", "lstmmax", "bilstmavg", "bilstmmax:1", "ngram-word:concat",
    "ngram-word:add", "ngram-word-lstm:add",
]


@pytest.fixture(scope="module")
def converted(corpus, tmp_path_factory) -> dict:
    """Each case converted (with the sentence-transformers files) and saved: name -> (dir, expected, sentences)."""
    out = {}
    for name in CASES:
        tmp = tmp_path_factory.mktemp(name.replace(":", "_"))
        path, kwargs, want, texts = build_case(name, corpus, tmp)
        encoder, report = convert_paranmt50m(path, **kwargs)
        got = encoder.encode(texts)
        assert worst_cosine(got, want) >= MIN_COSINE, (name, worst_cosine(got, want))
        np.testing.assert_allclose(got, want, atol=2e-5, rtol=0)
        encoder.save_pretrained(tmp / "model")
        out[name] = (str(tmp / "model"), want, texts, report)
    return out


@pytest.mark.data
@pytest.mark.parametrize("name", CASES)
def test_converted_model_matches_original_inference(converted, name):
    """ParaNMTEncoder, reloaded from the saved directory, equals the original inference on raw text."""
    directory, want, texts, report = converted[name]
    encoder = ParaNMTEncoder.from_pretrained(directory)
    got = encoder.encode(texts)
    assert got.shape == want.shape
    assert worst_cosine(got, want) >= MIN_COSINE
    np.testing.assert_allclose(got, want, atol=2e-5, rtol=0)
    assert any("not recorded in the pickle" in note for note in report.notes)


@pytest.mark.data
def test_lookup_fallbacks_are_exercised(corpus):
    """The test sentences need the punctuation fallback and the unknown token often (else the test proves little)."""
    words = set(corpus["words"])
    tokens = [w for s in corpus["test"] for w in orig.py2_lower(s).split()]
    fallback = [w for w in tokens if w not in words and w.translate(orig.PUNCT) in words]
    unknown = [w for w in tokens if w not in words and w.translate(orig.PUNCT) not in words]
    assert len(fallback) > 0.05 * len(tokens) and len(unknown) > 0.01 * len(tokens)


@pytest.mark.data
def test_sentence_transformers_matches_original(converted):
    from sentence_transformers import SentenceTransformer

    for name in CASES:
        directory, want, texts, _ = converted[name]
        got = SentenceTransformer(directory, device="cpu", trust_remote_code=True).encode(texts, batch_size=64)
        assert worst_cosine(got, want) >= MIN_COSINE, name


@pytest.mark.data
def test_auto_model_remote_code_without_paranmt_hf(converted, tmp_path):
    """AutoModel/AutoTokenizer with trust_remote_code in a fresh process where paranmt_hf cannot be imported."""
    got = remote_code_embeddings({name: (converted[name][0], converted[name][2]) for name in REMOTE_CASES}, tmp_path)
    for name in REMOTE_CASES:
        assert worst_cosine(got[name], converted[name][1]) >= MIN_COSINE, name
    files = set(os.listdir(converted["bilstmavg"][0]))
    assert {"peephole_lstm.py", "modeling_paranmt.py", "tokenization_paranmt.py", "paranmt_tokenizer.json"} <= files


def test_py2_pickle_loads_with_numpy_and_str_keys(tmp_path):
    we = np.random.default_rng(0).normal(size=(4, 3))
    orig.save_params(tmp_path / "m.pickle", [we], orig.make_vocab(["a", "b", "c"]))
    assert b"cnumpy.core.multiarray\n_reconstruct" in (tmp_path / "m.pickle").read_bytes()
    params, vocabs = load_paranmt50m_pickle(tmp_path / "m.pickle")
    np.testing.assert_array_equal(params[0], we)
    assert vocabs[0] == {"a": 0, "b": 1, "c": 2, orig.UNK: 3}
    assert guess_token_type(vocabs[0]) == "word" and guess_token_type({"ab ": 0, " ab": 1, orig.UNK: 2}) == "trigram"


def test_lstm_model_type_must_be_given_and_match(tmp_path):
    """The pickle does not record avg vs max: an LSTM pickle without --model, or with a wrong one, is refused."""
    rng = np.random.default_rng(0)
    vocab = orig.make_vocab(["a", "b"])
    layer = orig.lstm_arrays(rng, 4, 3)
    orig.save_params(tmp_path / "bi.pickle", [rng.normal(size=(3, 4)), *layer, *layer], vocab)
    with pytest.raises(ValueError, match="bilstmavg or bilstmmax"):
        convert_paranmt50m(tmp_path / "bi.pickle")
    with pytest.raises(ValueError, match="is --model right"):
        convert_paranmt50m(tmp_path / "bi.pickle", model="lstmavg")
    orig.save_params(tmp_path / "bad.pickle", [rng.normal(size=(3, 4)), *layer[:-1], layer[0]], vocab)
    with pytest.raises(ValueError, match="hid_init has shape"):
        convert_paranmt50m(tmp_path / "bad.pickle", model="lstmavg")
    with pytest.raises(ValueError, match="combination_type"):
        convert_paranmt50m(tmp_path / "bi.pickle", model="bilstmavg", combination_type="ngram-word")


def test_bad_structure_is_refused(tmp_path):
    orig.save_params(tmp_path / "bad.pickle", [np.zeros((3, 2))], {"a": 0, "b": 1})
    with pytest.raises(ValueError, match="UUUNKKK"):
        convert_paranmt50m(tmp_path / "bad.pickle")
    orig.save_params(tmp_path / "gap.pickle", [np.zeros((3, 2))], {"a": 0, "b": 5, orig.UNK: 2})
    with pytest.raises(ValueError, match="does not index"):
        convert_paranmt50m(tmp_path / "gap.pickle")
    orig.save_params(tmp_path / "special.pickle", [np.zeros((3, 2))], {"[UNK]": 0, "b": 1, orig.UNK: 2})
    with pytest.raises(ValueError, match="special tokens"):
        convert_paranmt50m(tmp_path / "special.pickle")


def test_float32_matrix_converts_exactly(tmp_path):
    we = torch.randn(4, 3).numpy()
    orig.save_params(tmp_path / "m.pickle", [we], orig.make_vocab(["x", "y", "z"], py2_unk=False))
    encoder, _ = convert_paranmt50m(tmp_path / "m.pickle", token_type="word")
    np.testing.assert_array_equal(encoder.encode(["y"])[0], we[1])
    np.testing.assert_array_equal(encoder.encode(["Y!"])[0], we[1])  # punctuation fallback
    np.testing.assert_array_equal(encoder.encode(["Q"])[0], we[3])  # unknown -> UUUNKKK


@pytest.mark.data
def test_split_lookup_keeps_the_exact_match_tokenizer(tmp_path, corpus):
    """lookup='split' (no fallback, fast path) equals the original on tokenised, lower-cased text."""
    vocab = orig.make_vocab(corpus["words"])
    we = np.random.default_rng(3).normal(size=(len(vocab), 6))
    orig.save_params(tmp_path / "m.pickle", [we], vocab)
    encoder, report = convert_paranmt50m(tmp_path / "m.pickle", lookup="split")
    assert hasattr(encoder.tokenizer, "backend_tokenizer") and any("split" in n for n in report.notes)
    texts = [" ".join(w) for w in split_words(corpus["test"][:200])]
    texts = [t for t in texts if t.split()]
    want = orig.embed_single(texts, "wordaverage", we, orig.as_loaded(vocab))
    assert worst_cosine(encoder.encode(texts), want) >= MIN_COSINE
    exact, _ = convert_paranmt50m(tmp_path / "m.pickle")
    assert worst_cosine(exact.encode(texts), want) >= MIN_COSINE
    raw = [t for t in corpus["test"][:200] if t.split()]
    assert worst_cosine(encoder.encode(raw), orig.embed_single(raw, "wordaverage", we, orig.as_loaded(vocab))) < 0.99


@pytest.mark.data
def test_conversion_report_and_config(converted):
    directory = converted["bilstmavg"][0]
    config = json.load(open(os.path.join(directory, "config.json")))
    assert config["kind"] == "bilstm" and config["lstm_peepholes"] is True and config["bilstm_merge"] == "concat"
    assert config["hidden_size"] == 14 and config["pooling"] == "mean"
    config = json.load(open(os.path.join(converted["bilstmmax:1"][0], "config.json")))
    assert config["bilstm_merge"] == "max" and config["pooling"] == "max" and config["hidden_size"] == 7
    report = converted["ngram-word-lstm:concat"][3]
    assert report.kind == "trigram+word+lstm"

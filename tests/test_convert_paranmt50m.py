"""Conversion of ParaNMT-50M pickles, golden-tested against the original Theano/Lasagne inference definition.

The synthetic pickles have the structure of para-nmt-50m ``save_params``: ``cPickle.dump(get_all_param_values(...)
+ [words], protocol=2)``, written the way Python 2 writes them (``str`` as BINSTRING, ``numpy.core`` globals,
float64 arrays as Theano's default floatX).
"""

from __future__ import annotations

import io
import pickle
import random
import sys
import unicodedata

import numpy as np
import pytest
import torch

from paranmt_hf.convert.paranmt50m import convert_paranmt50m, guess_token_type, load_paranmt50m_pickle
from paranmt_hf.encoder import ParaNMTEncoder
from paranmt_hf.tokenization.word import split_words

UNK = "UUUNKKK"
PUNCT = dict.fromkeys(i for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P"))


class Py2Pickler(pickle._Pickler):
    """Protocol-2 pickler emitting ``bytes`` as Python 2 ``str`` opcodes (SHORT_BINSTRING / BINSTRING)."""

    dispatch = pickle._Pickler.dispatch.copy()

    def save_py2_str(self, obj: bytes) -> None:
        n = len(obj)
        if n < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([n]) + obj)
        else:
            self.write(pickle.BINSTRING + n.to_bytes(4, "little") + obj)
        self.memoize(obj)

    dispatch[bytes] = save_py2_str


def py2_dumps(obj) -> bytes:
    buf = io.BytesIO()
    Py2Pickler(buf, protocol=2).dump(obj)
    data = buf.getvalue()
    return data.replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")  # as numpy 1.x / py2 names it


def write_pickle(path, values) -> None:
    path.write_bytes(py2_dumps(values))


@pytest.fixture(scope="module")
def sentences(data_dir) -> list[str]:
    out = []
    for f in sorted((data_dir / "eval" / "sts").glob("STS1[2-6]-en-test/STS.input.*.txt")):
        for line in f.read_text(encoding="utf-8").splitlines():
            out.extend(line.split("\t")[:2])
    assert out
    random.Random(1).shuffle(out)
    return [" ".join(words) for words in split_words(out[:3000])]  # tokenised + lower-cased, like ParaNMT data


def make_vocab(tokens, py2_unk: bool = True) -> dict:
    """utils.get_words / get_ngrams: token -> row, then 'UUUNKKK' (a py2 str literal) last."""
    vocab = {t: i for i, t in enumerate(tokens)}
    vocab[UNK.encode() if py2_unk else UNK] = len(vocab)  # b'UUUNKKK' is written as a py2 str
    return vocab


def words_of(sentences) -> list[str]:
    counts = {}
    for s in sentences:
        for w in s.split():
            counts[w] = counts.get(w, 0) + 1
    return sorted((w for w, c in counts.items() if c > 1), key=lambda w: (-counts[w], w))


def trigrams_of(sentences) -> list[str]:
    grams = sorted({(" " + s.strip())[j : j + 3] for s in sentences for j in range(len(s) - 1)})
    return [g for g in grams if len(g) == 3]


def lookup(words, w):
    """para-nmt-50m main/example.py lookup."""
    w = w.lower()
    if w in words:
        return words[w]
    w = w.translate(PUNCT)
    return words[w] if w in words else words[UNK]


def reference(sentences, we, words, kind):
    """example.populate_embeddings(_ngrams)(words, unk=True) + lasagne_average_layer, in float64."""
    out = []
    for s in sentences:
        phrase = s.strip().lower()
        if kind == "word":
            ids = [lookup(words, w) for w in phrase.split()]
        else:
            p = " " + phrase + " "
            ids = [lookup(words, p[j : j + 3]) for j in range(len(p)) if len(p[j : j + 3]) == 3] or [words[UNK]]
        out.append(we[ids].mean(0))
    return np.stack(out)


def as_loaded(vocab):
    return {(k.decode("latin1") if isinstance(k, bytes) else k): v for k, v in vocab.items()}


def fallback_free(sentences, words):
    """Sentences where no word needs the punctuation-stripping fallback (which the tokenizer does not do)."""
    return [s for s in sentences if all(w in words or w.translate(PUNCT) not in words for w in s.lower().split())]


def test_py2_pickle_loads_with_numpy_and_str_keys(tmp_path, sentences):
    we = np.random.default_rng(0).normal(size=(4, 3))
    write_pickle(tmp_path / "m.pickle", [we, make_vocab(["a", "b", "c"])])
    assert b"cnumpy.core.multiarray\n_reconstruct" in (tmp_path / "m.pickle").read_bytes()
    params, vocabs = load_paranmt50m_pickle(tmp_path / "m.pickle")
    np.testing.assert_array_equal(params[0], we)
    assert vocabs[0] == {"a": 0, "b": 1, "c": 2, UNK: 3}


@pytest.mark.parametrize("kind", ["word", "trigram"])
def test_single_model_golden(tmp_path, sentences, kind):
    train, test = sentences[:2000], sentences[2000:]
    tokens = words_of(train) if kind == "word" else trigrams_of(train)
    vocab = make_vocab(tokens)
    we = np.random.default_rng(0).normal(size=(len(vocab), 12))  # float64, Theano's default floatX
    write_pickle(tmp_path / "m.pickle", [we, vocab])
    encoder, report = convert_paranmt50m(tmp_path / "m.pickle")
    assert report.encoder == kind and guess_token_type(as_loaded(vocab)) == kind
    words = as_loaded(vocab)
    texts = fallback_free(test, words) if kind == "word" else test
    assert len(texts) > 0.9 * len(test)
    texts += ["", "   "] if kind == "trigram" else []  # an empty sentence is NaN for the original word model
    np.testing.assert_allclose(encoder.encode(texts), reference(texts, we, words, kind), atol=1e-6, rtol=0)
    encoder.save_pretrained(tmp_path / "out", sentence_transformers=False)
    reloaded = ParaNMTEncoder.from_pretrained(tmp_path / "out")
    np.testing.assert_allclose(reloaded.encode(texts[:50]), encoder.encode(texts[:50]), atol=1e-6, rtol=0)


@pytest.mark.parametrize("combination", ["concat", "add"])
def test_trigram_word_model_golden(tmp_path, sentences, combination):
    """mixed_models ngram-word: [We_ngrams, We_words, (ngram_words, word_words)], concat or add."""
    train, test = sentences[:2000], sentences[2000:2600]
    ngram_vocab, word_vocab = make_vocab(trigrams_of(train)), make_vocab(words_of(train))
    rng = np.random.default_rng(1)
    we_n, we_w = rng.normal(size=(len(ngram_vocab), 10)), rng.normal(size=(len(word_vocab), 10))
    write_pickle(tmp_path / "m.pickle", [we_n, we_w, (ngram_vocab, word_vocab)])
    encoder, report = convert_paranmt50m(tmp_path / "m.pickle", combination=combination)
    assert report.encoder == "trigram+word"
    words = as_loaded(word_vocab)
    texts = fallback_free(test, words)
    parts = [reference(texts, we_n, as_loaded(ngram_vocab), "trigram"), reference(texts, we_w, words, "word")]
    want = np.concatenate(parts, axis=1) if combination == "concat" else parts[0] + parts[1]
    np.testing.assert_allclose(encoder.encode(texts), want, atol=1e-6, rtol=0)
    assert encoder.embedding_dim == (20 if combination == "concat" else 10)


def test_lstm_pickle_is_refused(tmp_path):
    """Lasagne LSTMLayer(peepholes=True) weights cannot become a torch nn.LSTM: a clear error, no conversion."""
    rng = np.random.default_rng(0)
    dim, vocab = 4, make_vocab(["a", "b"])
    lstm = [rng.normal(size=s) for s in [(dim, dim), (dim, dim), (dim,)] * 4 + [(dim,)] * 3 + [(1, dim)] * 2]
    write_pickle(tmp_path / "lstm.pickle", [rng.normal(size=(3, dim)), *lstm, vocab])
    with pytest.raises(ValueError, match="peephole"):
        convert_paranmt50m(tmp_path / "lstm.pickle")


def test_bad_structure_is_refused(tmp_path):
    write_pickle(tmp_path / "bad.pickle", [np.zeros((3, 2)), {"a": 0, "b": 1}])
    with pytest.raises(ValueError, match="UUUNKKK"):
        convert_paranmt50m(tmp_path / "bad.pickle")
    write_pickle(tmp_path / "gap.pickle", [np.zeros((3, 2)), {"a": 0, "b": 5, UNK: 2}])
    with pytest.raises(ValueError, match="does not index"):
        convert_paranmt50m(tmp_path / "gap.pickle")


def test_float32_matrix_converts_exactly(tmp_path):
    we = torch.randn(4, 3).numpy()
    write_pickle(tmp_path / "m.pickle", [we, make_vocab(["x", "y", "z"], py2_unk=False)])
    encoder, _ = convert_paranmt50m(tmp_path / "m.pickle", token_type="word")
    np.testing.assert_array_equal(encoder.encode(["y"])[0], we[1])
    np.testing.assert_array_equal(encoder.encode(["Q"])[0], we[3])  # unknown -> UUUNKKK

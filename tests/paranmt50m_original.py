"""A NumPy re-implementation of ParaNMT-50M's original inference (jwieting/para-nmt-50m), written from its code.

- ``example.py``: ``example(phrase).phrase = phrase.strip().lower()``; ``populate_embeddings`` looks up
  ``phrase.split()``; ``populate_embeddings_ngrams`` every 3-character window of ``" " + phrase + " "`` (a phrase
  without any becomes ``[UUUNKKK]``); ``lookup``: lower-case, else without Unicode punctuation, else ``UUUNKKK``.
  Python 2 semantics: ``unicode.lower`` maps character by character (simple case mapping).
- ``models.prepare_data``: right-padded id matrix + mask; ``evaluate.get_correlation`` scores batches of 100.
- ``lasagne.layers.LSTMLayer(peepholes=True, mask_input=...)``: theano.scan over time (reversed for
  ``backwards=True``, outputs reversed back), masked steps keep the previous states.
- ``lasagne_layers.py``: ``lasagne_average_layer`` (masked mean), ``lasagne_max_layer`` (``emb * mask + (mask - 1) *
  100``, max), ``lasagne_cleanse_layer`` (``emb * mask``, ``+ (mask - 1) * 100`` when pooling by max),
  ``ConcatLayer(axis)``, ``lasagne_average_layer2`` (sum over time / mask sum), ``lasagne_max_layer2`` (max over
  time), ``lasagne_add_layer``.

Written independently of paranmt_hf (only NumPy and the standard library), in float64. Also here: pickles in the
exact format of ``save_params`` as Python 2 writes them (:func:`save_params`).
"""

from __future__ import annotations

import io
import pickle
import sys
import unicodedata
from pathlib import Path

import numpy as np

UNK = "UUUNKKK"
PUNCT = dict.fromkeys(i for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P"))
LSTM_NAMES = [f"{k}_{g}" for g in ("ingate", "forgetgate", "cell", "outgate") for k in ("W_in_to", "W_hid_to", "b")]
LSTM_NAMES += ["W_cell_to_ingate", "W_cell_to_forgetgate", "W_cell_to_outgate", "cell_init", "hid_init"]


def py2_lower(text: str) -> str:
    """Python 2 ``unicode.lower()``: each character on its own (simple mapping: one character out)."""
    return "".join(ch.lower()[0] if ch.lower() else ch for ch in text)


def lookup(words: dict, w: str) -> int:
    w = py2_lower(w)
    if w in words:
        return words[w]
    w = w.translate(PUNCT)
    if w in words:
        return words[w]
    return words[UNK]


def word_ids(sentence: str, words: dict) -> list[int]:
    phrase = py2_lower(sentence.strip())
    return [lookup(words, w) for w in py2_lower(phrase).split()]


def trigram_ids(sentence: str, words: dict) -> list[int]:
    phrase = " " + py2_lower(py2_lower(sentence.strip())) + " "
    out = []
    for j in range(len(phrase)):
        ngram = phrase[j : j + 3]
        if len(ngram) != 3:
            continue
        out.append(lookup(words, ngram))
    return out or [words[UNK]]


def prepare_data(seqs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = [len(s) for s in seqs]
    x = np.zeros((len(seqs), max(lengths)), dtype=np.int64)
    mask = np.zeros((len(seqs), max(lengths)))
    for i, s in enumerate(seqs):
        x[i, : len(s)] = s
        mask[i, : len(s)] = 1.0
    return x, mask


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def lasagne_lstm(emb: np.ndarray, mask: np.ndarray, p: dict, backwards: bool) -> np.ndarray:
    """``LSTMLayer(peepholes=True, mask_input=...)`` output ``[B, T, H]`` (``p``: name -> array)."""
    w_in = np.concatenate([p[f"W_in_to_{g}"] for g in ("ingate", "forgetgate", "cell", "outgate")], axis=1)
    w_hid = np.concatenate([p[f"W_hid_to_{g}"] for g in ("ingate", "forgetgate", "cell", "outgate")], axis=1)
    b = np.concatenate([p[f"b_{g}"] for g in ("ingate", "forgetgate", "cell", "outgate")])
    inputs = np.einsum("btd,dk->tbk", emb, w_in) + b  # precompute_input
    m = mask.T[:, :, None]
    ones = np.ones((emb.shape[0], 1))
    cell, hid = ones @ p["cell_init"], ones @ p["hid_init"]
    n = p["W_hid_to_ingate"].shape[0]
    outs = []
    steps = range(emb.shape[1] - 1, -1, -1) if backwards else range(emb.shape[1])
    for t in steps:
        gates = inputs[t] + hid @ w_hid
        ingate, forgetgate, cell_input, outgate = (gates[:, k * n : (k + 1) * n] for k in range(4))
        ingate = sigmoid(ingate + cell * p["W_cell_to_ingate"])
        forgetgate = sigmoid(forgetgate + cell * p["W_cell_to_forgetgate"])
        new_cell = forgetgate * cell + ingate * np.tanh(cell_input)
        outgate = sigmoid(outgate + new_cell * p["W_cell_to_outgate"])
        new_hid = outgate * np.tanh(new_cell)
        cell = np.where(m[t] > 0, new_cell, cell)
        hid = np.where(m[t] > 0, new_hid, hid)
        outs.append(hid)
    out = np.stack(outs, axis=1)
    return out[:, ::-1] if backwards else out


def average_layer(emb: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return (emb * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1)[:, None]


def max_layer(emb: np.ndarray, mask: np.ndarray) -> np.ndarray:
    emb = emb * mask[:, :, None] + ((mask - 1) * 100)[:, :, None]
    return emb.max(axis=1)


def single_model(model: str, x: np.ndarray, mask: np.ndarray, we: np.ndarray, lstms: list[dict], axis: int):
    """``models.__init__``'s network for ``-model model`` on one batch."""
    emb = we[x]
    if model == "wordaverage":
        return average_layer(emb, mask)
    if model == "maxpool":
        return max_layer(emb, mask)
    if model == "lstmavg":
        return average_layer(lasagne_lstm(emb, mask, lstms[0], False), mask)
    if model == "lstmmax":
        return max_layer(lasagne_lstm(emb, mask, lstms[0], False), mask)
    forward = lasagne_lstm(emb, mask, lstms[0], False) * mask[:, :, None]
    backward = lasagne_lstm(emb, mask, lstms[1], True) * mask[:, :, None]
    if model == "bilstmmax":
        forward = forward + ((mask - 1) * 100)[:, :, None]
        backward = backward + ((mask - 1) * 100)[:, :, None]
    concat = np.concatenate([forward, backward], axis=axis)
    if model == "bilstmavg":
        return concat.sum(axis=1) / mask.sum(axis=1)[:, None]
    return concat.max(axis=1)


def embed_single(sentences, model, we, words, lstms=(), token_type="word", axis=2, batch=100) -> np.ndarray:
    """``evaluate.get_correlation``'s path: example lookup, batches of 100, the model's feed-forward."""
    ids = trigram_ids if token_type == "trigram" else word_ids
    out = []
    for start in range(0, len(sentences), batch):
        x, mask = prepare_data([ids(s, words) for s in sentences[start : start + batch]])
        out.append(single_model(model, x, mask, we, list(lstms), axis))
    return np.concatenate(out)


def embed_mixed(sentences, combination_type, method, tables, ngram_words, word_words, lstm=None, batch=100):
    """``mixed_models``: ngram / word / lstm branches (each a masked mean), added or concatenated."""
    names = combination_type.split("-")
    out = []
    for start in range(0, len(sentences), batch):
        chunk = sentences[start : start + batch]
        parts = []
        for name, we in zip(names, tables, strict=True):
            if name == "ngram":
                x, mask = prepare_data([trigram_ids(s, ngram_words) for s in chunk])
                parts.append(average_layer(we[x], mask))
            else:
                x, mask = prepare_data([word_ids(s, word_words) for s in chunk])
                states = we[x] if name == "word" else lasagne_lstm(we[x], mask, lstm, False)
                parts.append(average_layer(states, mask))
        out.append(sum(parts) if method == "add" else np.concatenate(parts, axis=1))
    return np.concatenate(out)


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
    return buf.getvalue().replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")  # numpy 1.x / py2 name


def save_params(path: Path, values: list, words) -> None:
    """``models.save_params``: ``cPickle.dump(get_all_param_values(final_layer) + [words], protocol=2)``."""
    path.write_bytes(py2_dumps([*values, words]))


def make_vocab(tokens, py2_unk: bool = True) -> dict:
    """``utils.get_words`` / ``get_ngrams``: token -> row, then ``'UUUNKKK'`` (a py2 ``str`` literal) last."""
    vocab = {t: i for i, t in enumerate(tokens)}
    vocab[UNK.encode() if py2_unk else UNK] = len(vocab)
    return vocab


def as_loaded(vocab: dict) -> dict:
    """The vocabulary as Python 3 reads it back (py2 ``str`` keys decoded)."""
    return {(k.decode("latin1") if isinstance(k, bytes) else k): v for k, v in vocab.items()}


def lstm_arrays(rng: np.random.Generator, inputs: int, units: int, dtype=np.float32) -> list[np.ndarray]:
    """The 17 arrays of one ``LSTMLayer(peepholes=True)`` in ``get_all_param_values`` order (random, non-zero
    initial states so that their mapping is tested too)."""
    shapes = {"W_in_to": (inputs, units), "W_hid_to": (units, units), "b": (units,), "W_cell_to": (units,)}
    out = []
    for name in LSTM_NAMES:
        shape = (1, units) if name.endswith("_init") else shapes[name.rsplit("_", 1)[0]]
        out.append((rng.normal(size=shape) * (0.1 if name.endswith("_init") else 0.4)).astype(dtype))
    return out


def named(arrays: list[np.ndarray]) -> dict:
    return dict(zip(LSTM_NAMES, (a.astype(np.float64) for a in arrays), strict=True))

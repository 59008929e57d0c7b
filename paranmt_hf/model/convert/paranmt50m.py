"""Convert the pickled models of ParaNMT-50M (jwieting/para-nmt-50m, Theano/Lasagne, Python 2).

A pickle holds ``lasagne.layers.get_all_param_values(final_layer) + [words]`` (``save_params`` of ``main/models.py``
and ``main/mixed_models.py``; read here without running pickled code): the embedding tables (``We``, or some of
``We_ngrams``, ``We_words``, ``We_lstm`` for a ``-combination_type``), the 17 arrays of each Lasagne
``LSTMLayer(peepholes=True)`` (:mod:`.lasagne`; forward then backward for a BiLSTM), then ``words`` (token to row of
``We``, ``UUUNKKK`` included; the pair ``(ngram_words, word_words)`` for combined models).

The pickle records neither the pooling (avg or max), nor the combination method (concat or add), nor a BiLSTM's
``-axis``: they are arguments here, with the released models' values as defaults.

Inference follows ``main/models.py``: the lookup of ``LOOKUP_RULES["paranmt50m"]``
(:mod:`paranmt_hf.modeling.tokenization_paranmt`), then the average or elementwise maximum over the tokens; a BiLSTM
pools its directions concatenated along ``-axis``: 2 (the released 4096-d model) gives ``[pool(fwd), pool(bwd)]``,
1 (the training default) ``mean(fwd) + mean(bwd)`` (avg) or ``max(max(fwd), max(bwd))`` (max).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ...utils.integrity import DamagedFileError
from ...utils.safe_pickle import load_legacy_pickle
from ..tokenization.fast import to_transformers
from . import PARANMT50M_COMBINATION_TYPES, PARANMT50M_MODELS
from .errors import ConversionError
from .lasagne import LASAGNE_LSTM_PARAMS, copy_lstm, read_lstm
from .pras import UNK_STRING, ConversionReport
from .sentencepiece import FINAL_SIGMA

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from ..encoder import ParaNMTEncoder

logger = logging.getLogger(__name__)

MODELS = PARANMT50M_MODELS
COMBINATION_TYPES = PARANMT50M_COMBINATION_TYPES

_LSTM_ARRAYS = len(LASAGNE_LSTM_PARAMS)


def load_paranmt50m_pickle(path: str | os.PathLike[str]) -> tuple[list[np.ndarray], list[dict[str, int]]]:
    """Load a ParaNMT-50M pickle safely; return ``(parameter arrays, vocabularies)`` (one or two vocabularies).

    Raises:
        UnsafePickleError: the pickle names code (nothing ran).
        DamagedFileError: the file is no readable pickle, or a pickle of something else than a saved model.
    """
    values = load_legacy_pickle(path)
    source = os.fspath(path)
    if not isinstance(values, list) or len(values) < 2:
        held = f"a list of {len(values)}" if isinstance(values, list) else f"a {type(values).__name__}"
        raise DamagedFileError(f"{source} is not a ParaNMT-50M model pickle: it holds {held}, not the list "
                               "[arrays..., words] that saving a model writes")
    words, params = values[-1], values[:-1]
    vocabs = [words] if isinstance(words, dict) else list(words) if isinstance(words, list | tuple) else None
    if not vocabs or not all(isinstance(v, dict) for v in vocabs) or len(vocabs) > 2:
        raise DamagedFileError(f"{source} is not a ParaNMT-50M model pickle: its last element must be a vocabulary "
                               "dict or a pair of them")
    if not all(isinstance(p, np.ndarray) for p in params):
        raise DamagedFileError(f"{source} is not a ParaNMT-50M model pickle: every element but the last must be a "
                               "numpy array")
    return params, vocabs


def guess_token_type(vocab: dict[str, int]) -> str:
    """``"trigram"`` when (almost) every entry is 3 characters long, else ``"word"``."""
    lengths = [len(k) for k in vocab if k != UNK_STRING]
    return "trigram" if lengths and sum(n == 3 for n in lengths) >= 0.95 * len(lengths) else "word"


@dataclass
class _Part:
    """One component of the converted model, as found in the pickle."""

    encoder: str  # word, trigram, lstm or bilstm
    token_type: str  # word or trigram
    we: np.ndarray
    vocab: dict[str, int]
    lstms: list[list[np.ndarray]] = field(default_factory=list)  # Lasagne LSTM layers (forward, backward)


def _ordered_tokens(vocab: dict[str, int], rows: int, what: str, source: str) -> list[str]:
    """Tokens in row order, ``UUUNKKK`` left out; checks that ``vocab`` indexes the ``rows`` rows exactly once."""
    from ...modeling.segmentation_paranmt import PAD_TOKEN, UNK_TOKEN

    if UNK_STRING not in vocab:
        raise ConversionError(f"{source}: the {what} vocabulary has no {UNK_STRING!r} entry")
    ids = sorted(vocab.values())
    if len(vocab) != rows or ids != list(range(rows)):
        raise ConversionError(f"{source}: the {what} vocabulary ({len(vocab)} entries) does not index the {rows} "
                              "embedding rows")
    if PAD_TOKEN in vocab or UNK_TOKEN in vocab:
        raise ConversionError(f"{source}: the {what} vocabulary holds {PAD_TOKEN!r} or {UNK_TOKEN!r}, the "
                              "converted model's own special tokens")
    by_row = sorted(vocab.items(), key=lambda kv: kv[1])
    return [token for token, _ in by_row if token != UNK_STRING]


def _embedding(we: np.ndarray, vocab: dict[str, int], tokens: list[str]) -> torch.Tensor:
    """Rows for ``[PAD]`` (zeros), ``[UNK]`` (``UUUNKKK``) and ``tokens``, as float32."""
    rows = np.array([vocab[UNK_STRING], vocab[UNK_STRING], *(vocab[t] for t in tokens)], dtype=np.int64)
    weight = torch.from_numpy(np.asarray(we, dtype=np.float32)[rows].copy())
    weight[0] = 0.0
    return weight


def word_tokenizer_backend(tokens: list[str]) -> Tokenizer:
    """``lookup="split"``: lower-casing + ``WhitespaceSplit`` + exact word lookup, ``[UNK]`` for unknowns."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    from ...modeling.segmentation_paranmt import PAD_TOKEN, UNK_TOKEN

    vocab = {PAD_TOKEN: 0, UNK_TOKEN: 1}
    for token in tokens:
        vocab.setdefault(token, len(vocab))
    if len(vocab) != len(tokens) + 2:
        raise ConversionError("the word vocabulary holds [PAD]/[UNK] or duplicates")
    tok = Tokenizer(models.WordLevel(vocab, unk_token=UNK_TOKEN))
    tok.normalizer = normalizers.Sequence([normalizers.Replace(Regex(FINAL_SIGMA), "ς"), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tok


def _unreachable(tokens: list[str], token_type: str, lookup: str) -> list[str]:
    """Vocabulary entries that the lookup can never produce (upper case, whitespace in a word, wrong length)."""
    from ...modeling.segmentation_paranmt import py2_lower

    lower = py2_lower if lookup == "paranmt50m" else str.lower
    bad = [t for t in tokens if t != lower(t) or (token_type == "word" and (not t or len(t.split()) != 1))]
    return bad + [t for t in tokens if token_type == "trigram" and len(t) != 3 and t not in bad]


def _split_lstms(arrays: list[np.ndarray], layers: int, path: str, what: str) -> list[list[np.ndarray]]:
    if len(arrays) != layers * _LSTM_ARRAYS:
        raise ConversionError(f"{path}: a {what} model holds {layers} x {_LSTM_ARRAYS} LSTM arrays after its "
                              f"embeddings (Lasagne LSTMLayer(peepholes=True)), found {len(arrays)}")
    return [arrays[i * _LSTM_ARRAYS : (i + 1) * _LSTM_ARRAYS] for i in range(layers)]


def _single_parts(
    params: list[np.ndarray], vocab: dict[str, int], model: str | None, token_type: str | None, path: str
) -> tuple[str, list[_Part]]:
    """The model type and its one component (``models.py``: ``[We, <LSTM layers>]``)."""
    extra = len(params) - 1
    layers = {0: 0, _LSTM_ARRAYS: 1, 2 * _LSTM_ARRAYS: 2}.get(extra)
    if model is None:
        if layers == 0:
            model = "wordaverage"
        else:
            hint = {1: "lstmavg or lstmmax", 2: "bilstmavg or bilstmmax"}.get(layers or -1)
            raise ConversionError(
                f"{path} holds {extra} arrays after its embeddings: "
                + (f"an LSTM model; the pickle does not record which, pass --model {hint} (model=...)" if hint
                   else f"not a ParaNMT-50M model layout ({_LSTM_ARRAYS} arrays per Lasagne LSTM layer)")
            )
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    expected = 2 if model.startswith("bilstm") else 1 if model.startswith("lstm") else 0
    if layers != expected:
        raise ConversionError(f"{path} holds {extra} arrays after its embeddings, a {model} model {expected} x "
                         f"{_LSTM_ARRAYS} (Lasagne LSTMLayer(peepholes=True)): is --model right?")
    kind = token_type or guess_token_type(vocab)
    encoder = "bilstm" if expected == 2 else "lstm" if expected == 1 else kind
    lstms = _split_lstms(params[1:], expected, path, model) if expected else []
    return model, [_Part(encoder, kind, params[0], vocab, lstms)]


def _mixed_parts(
    params: list[np.ndarray], vocabs: list[dict[str, int]], combination_type: str | None, path: str
) -> tuple[str, list[_Part]]:
    """The combination type and its components (``mixed_models.py``: ngram, word, lstm in that order)."""
    ngram_vocab, word_vocab = vocabs
    n = len(params)
    if combination_type is None:
        if n == 2:
            combination_type = "ngram-word"
        elif n == 3 + _LSTM_ARRAYS:
            combination_type = "ngram-word-lstm"
        elif n == 2 + _LSTM_ARRAYS:
            rows = params[0].shape[0]
            candidates = [t for t, v in (("ngram-lstm", ngram_vocab), ("word-lstm", word_vocab)) if len(v) == rows]
            if len(candidates) != 1:
                raise ConversionError(f"{path}: pass --combination-type ngram-lstm or word-lstm (the pickle does "
                                      "not say)")
            combination_type = candidates[0]
        else:
            raise ConversionError(f"{path} holds {n} arrays: not a ParaNMT-50M combined model layout")
    if combination_type not in COMBINATION_TYPES:
        raise ValueError(f"combination_type must be one of {COMBINATION_TYPES}, got {combination_type!r}")
    names = combination_type.split("-")
    tables = len(names)
    lstm = "lstm" in names
    if n != tables + (_LSTM_ARRAYS if lstm else 0):
        raise ConversionError(f"{path} holds {n} arrays, a {combination_type} model {tables} embedding matrices"
                         + (f" and {_LSTM_ARRAYS} LSTM arrays" if lstm else ""))
    parts = []
    for name, we in zip(names, params[:tables], strict=True):
        if name == "ngram":
            parts.append(_Part("trigram", "trigram", we, ngram_vocab))
        elif name == "word":
            parts.append(_Part("word", "word", we, word_vocab))
        else:
            parts.append(_Part("lstm", "word", we, word_vocab, _split_lstms(params[tables:], 1, path, name)))
    return combination_type, parts


def _tokenizer_spec(tokens: list[str], token_type: str, lookup: str) -> dict[str, Any]:
    from ...modeling.segmentation_paranmt import PAD_TOKEN, UNK_TOKEN

    if lookup == "paranmt50m":
        return {"kind": token_type, "vocab": [PAD_TOKEN, UNK_TOKEN, *tokens], "lookup": lookup}
    if token_type == "trigram":
        from ..tokenization.trigram import trigram_component

        return trigram_component(vocab=tokens)
    return {"kind": "tokenizers", "tokenizer": json.loads(word_tokenizer_backend(tokens).to_str())}


@dataclass
class _Built:
    """A converted component: its config entry, tokenizer spec, embedding rows and Lasagne LSTM layers."""

    component: dict[str, Any]
    spec: dict[str, Any]
    weight: torch.Tensor
    lstms: list[dict[str, np.ndarray]]
    unreachable: list[str]


def _build_part(part: _Part, lookup: str, merge: str, source: str) -> _Built:
    if part.we.ndim != 2:
        raise ConversionError(f"{source}: embedding matrices must be 2-D, got shape {part.we.shape}")
    tokens = _ordered_tokens(part.vocab, part.we.shape[0], part.token_type, source)
    component: dict[str, Any] = {
        "kind": part.encoder, "vocab_size": len(tokens) + 2, "embedding_dim": int(part.we.shape[1])
    }
    directions = ("forward", "backward")
    layers = [read_lstm(layer, part.we.shape[1], f"{source}: {directions[k]} {part.encoder} layer")
              for k, layer in enumerate(part.lstms)]
    if layers:
        sizes = {int(layer["W_hid_to_ingate"].shape[0]) for layer in layers}
        if len(sizes) != 1:
            raise ConversionError(f"{source}: the forward and backward LSTMs have different sizes {sorted(sizes)}")
        component.update(rnn_hidden_size=sizes.pop(), lstm_peepholes=True)
        if part.encoder == "bilstm":
            component["bilstm_merge"] = merge
    return _Built(
        component=component,
        spec=_tokenizer_spec(tokens, part.token_type, lookup),
        weight=_embedding(part.we, part.vocab, tokens),
        lstms=layers,
        unreachable=_unreachable(tokens, part.token_type, lookup),
    )


def convert_paranmt50m(
    path: str | os.PathLike[str],
    combination: str = "concat",
    token_type: str | None = None,
    model: str | None = None,
    combination_type: str | None = None,
    axis: int = 2,
    lookup: str = "paranmt50m",
) -> tuple[ParaNMTEncoder, ConversionReport]:
    """Convert a ParaNMT-50M pickle (any ``-model`` or ``-combination_type``) into a ParaNMTEncoder.

    Args:
        path: the ``.pickle`` file (e.g. ``ngram-word-concat-40.pickle``, ``bilstmavg-4096-40.pickle``).
        combination: ``"concat"`` or ``"add"`` for combined models (``-combination_method``; not in the pickle).
        token_type: a single model's ``"word"`` or ``"trigram"`` tokens (``-wordtype``; default: from the vocabulary).
        model: a single model's ``-model`` (:data:`MODELS`): default ``wordaverage``, required for LSTM models.
        combination_type: a combined model's ``-combination_type`` (:data:`COMBINATION_TYPES`; default: as pickled).
        axis: a BiLSTM's ``-axis`` (not in the pickle): 2 (the released 4096-d model) or 1 (``train.py``'s default).
        lookup: ``"paranmt50m"`` (the original lookup of raw text) or ``"split"`` (whitespace words; equal to the
            original only on tokenised, lower-cased text).

    Returns:
        ``(encoder, report)``.
    """
    from tokenizers import Tokenizer

    from ...modeling.configuration_paranmt import ParaNMTConfig
    from ...modeling.modeling_paranmt import ParaNMTModel
    from ...modeling.segmentation_paranmt import LOOKUP_RULES
    from ...modeling.tokenization_paranmt import ParaNMTTokenizer
    from ..encoder import ParaNMTEncoder

    source = os.fspath(path)
    if lookup not in LOOKUP_RULES:
        raise ValueError(f"lookup must be one of {LOOKUP_RULES}, got {lookup!r}")
    if axis not in (1, 2):
        raise ValueError(f"axis must be 1 or 2 (-axis of a BiLSTM), got {axis!r}")
    if token_type not in (None, "word", "trigram"):
        raise ValueError(f"token_type must be 'word' or 'trigram', got {token_type!r}")
    params, vocabs = load_paranmt50m_pickle(path)
    if len(vocabs) == 1:
        if combination_type is not None:
            raise ConversionError(f"{source} is a single model (one vocabulary): combination_type does not apply")
        name, parts = _single_parts(params, vocabs[0], model, token_type, source)
    else:
        if model is not None:
            raise ConversionError(f"{source} is a combined model (two vocabularies): use combination_type, not model")
        name, parts = _mixed_parts(params, vocabs, combination_type, source)
    pooling = "max" if name in ("maxpool", "lstmmax", "bilstmmax") else "mean"
    merge = "concat" if axis == 2 else "max" if pooling == "max" else "sum"
    built = [_build_part(part, lookup, merge, source) for part in parts]
    components = [b.component for b in built]
    common = {"pooling": pooling, "drop_unknown_tokens": False}
    if len(components) == 1:
        config = ParaNMTConfig(**components[0], **common)
    else:
        config = ParaNMTConfig(components=components, combination=combination, **common)
    converted = ParaNMTModel(config)
    with torch.no_grad():
        for encoder, b in zip(converted.components, built, strict=True):
            encoder.embedding.weight.copy_(b.weight)
            for direction, layer in enumerate(b.lstms):
                copy_lstm(encoder.rnn, direction, layer)
    specs = [b.spec for b in built]
    if len(specs) == 1 and specs[0]["kind"] == "tokenizers":  # a word model read with lookup="split"
        tokenizer = to_transformers(Tokenizer.from_str(json.dumps(specs[0]["tokenizer"])))
    else:
        tokenizer = ParaNMTTokenizer(components=specs)
    unreachable = [t for b in built for t in b.unreachable]
    kinds = [p.encoder for p in parts]
    report = ConversionReport(
        source=source,
        kind="+".join(kinds),
        vocab_size=sum(c["vocab_size"] for c in components),
        embedding_dim=int(config.hidden_size),
        checkpoint_rows=sum(p.we.shape[0] for p in parts),
        unreachable_rows=len(unreachable),
        unreachable_examples=sorted(unreachable)[:20],
    )
    report.notes += _notes(name, len(parts) > 1, combination, axis, lookup, parts)
    logger.info("converted %s: %s", path, report)
    return ParaNMTEncoder(converted, tokenizer), report


def _notes(name: str, mixed: bool, combination: str, axis: int, lookup: str, parts: list[_Part]) -> list[str]:
    """What the conversion assumed (the pickle does not record it) and how raw text is read."""
    notes = [f"converted as -combination_type {name} -combination_method {combination} (not recorded in the pickle)"
             if mixed else f"converted as -model {name} (not recorded in the pickle)"]
    if any(p.encoder == "bilstm" for p in parts):
        notes.append(
            f"BiLSTM states concatenated along -axis {axis} (not recorded in the pickle): "
            + ("the pooled directions are concatenated, as in the released bilstmavg-4096-40.pickle; use --axis 1 "
               "for a model trained with train.py's default -axis 1" if axis == 2 else
               "the pooled directions are added (avg) or maxed (max), as train.py's default -axis 1")
        )
    if lookup == "paranmt50m":
        notes.append("raw text is read as the original example.py does: strip, lower-case (Python 2), words split on "
                     "whitespace or trigrams of ' ' + text + ' ', lookup with the punctuation fallback, UUUNKKK")
    else:
        notes.append("lookup='split': exact-match lookup without punctuation fallback (words split on whitespace, "
                     "trigrams of WORD_SPLIT_PATTERN words): approximates the original on tokenised, lower-cased text")
    return notes


__all__ = [
    "convert_paranmt50m",
    "load_paranmt50m_pickle",
    "guess_token_type",
    "LASAGNE_LSTM_PARAMS",
    "MODELS",
    "COMBINATION_TYPES",
]

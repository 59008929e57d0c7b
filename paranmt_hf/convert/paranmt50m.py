"""Convert the pickled models of ParaNMT-50M (jwieting/para-nmt-50m, Theano/Lasagne, Python 2).

Format (``main/models.py`` and ``main/mixed_models.py`` ``save_params``): ``cPickle.dump(values, protocol=2)`` where
``values = lasagne.layers.get_all_param_values(final_layer) + [words]``:

- single models: ``[We, <LSTM parameters...>, words]`` with ``words`` a dict token -> row of ``We`` (``UUUNKKK``
  included); word or character-trigram vocabularies (``-wordtype``);
- combined models (``-combination_type ngram-word[-lstm]``): ``[We_ngrams, We_words, <LSTM parameters...>,
  (ngram_words, word_words)]``, combined by ``-combination_method`` concat or add (not stored in the pickle).

Original inference (``main/example.py``): ``phrase = text.strip().lower()``; words: ``phrase.split()``, trigrams:
``" " + phrase + " "`` cut into character trigrams; lookup lower-cases, falls back to the token without Unicode
punctuation, else ``UUUNKKK`` (unknowns are embedded, not dropped); the embeddings are averaged.

LSTM models (``lstmavg``, ``bilstmavg``, ...) use Lasagne's ``LSTMLayer(peepholes=True)``: its peephole weights
``W_cell_to_{ingate,forgetgate,outgate}`` have no counterpart in ``torch.nn.LSTM``, so those pickles are refused.
"""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..tokenization.fast import to_transformers
from ..utils.safe_pickle import load_legacy_pickle
from .pras import UNK_STRING, ConversionReport
from .sentencepiece import FINAL_SIGMA

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from ..encoder import ParaNMTEncoder

logger = logging.getLogger(__name__)

LASAGNE_LSTM_PARAMS = (
    "W_in_to_ingate", "W_hid_to_ingate", "b_ingate", "W_in_to_forgetgate", "W_hid_to_forgetgate", "b_forgetgate",
    "W_in_to_cell", "W_hid_to_cell", "b_cell", "W_in_to_outgate", "W_hid_to_outgate", "b_outgate",
    "W_cell_to_ingate", "W_cell_to_forgetgate", "W_cell_to_outgate", "cell_init", "hid_init",
)
"""Parameter order of one Lasagne ``LSTMLayer(peepholes=True)`` in ``get_all_param_values``."""


def load_paranmt50m_pickle(path: str | os.PathLike[str]) -> tuple[list[np.ndarray], list[dict[str, int]]]:
    """Load a ParaNMT-50M pickle safely; return ``(parameter arrays, vocabularies)`` (one or two vocabularies)."""
    values = load_legacy_pickle(path)
    if not isinstance(values, list) or len(values) < 2:
        raise ValueError(f"{os.fspath(path)} is not a ParaNMT-50M model pickle (expected [arrays..., words])")
    words, params = values[-1], values[:-1]
    vocabs = [words] if isinstance(words, dict) else list(words) if isinstance(words, list | tuple) else None
    if not vocabs or not all(isinstance(v, dict) for v in vocabs) or len(vocabs) > 2:
        raise ValueError(f"{os.fspath(path)}: the last element must be a vocabulary dict or a pair of them")
    if not all(isinstance(p, np.ndarray) for p in params):
        raise ValueError(f"{os.fspath(path)}: every element but the last must be a numpy array")
    return params, vocabs


def guess_token_type(vocab: dict[str, int]) -> str:
    """``"trigram"`` when (almost) every entry is 3 characters long, else ``"word"``."""
    lengths = [len(k) for k in vocab if k != UNK_STRING]
    return "trigram" if lengths and sum(n == 3 for n in lengths) >= 0.95 * len(lengths) else "word"


def _ordered_tokens(vocab: dict[str, int], rows: int, what: str) -> list[str]:
    """Tokens in row order, ``UUUNKKK`` left out; checks that ``vocab`` indexes the ``rows`` rows exactly once."""
    if UNK_STRING not in vocab:
        raise ValueError(f"the {what} vocabulary has no {UNK_STRING!r} entry")
    ids = sorted(vocab.values())
    if len(vocab) != rows or ids != list(range(rows)):
        raise ValueError(f"the {what} vocabulary ({len(vocab)} entries) does not index the {rows} embedding rows")
    by_row = sorted(vocab.items(), key=lambda kv: kv[1])
    return [token for token, _ in by_row if token != UNK_STRING]


def _embedding(we: np.ndarray, vocab: dict[str, int], tokens: list[str]) -> torch.Tensor:
    """Rows for ``[PAD]`` (zeros), ``[UNK]`` (``UUUNKKK``) and ``tokens``, as float32."""
    rows = np.array([vocab[UNK_STRING], vocab[UNK_STRING], *(vocab[t] for t in tokens)], dtype=np.int64)
    weight = torch.from_numpy(np.asarray(we, dtype=np.float32)[rows].copy())
    weight[0] = 0.0
    return weight


def word_tokenizer_backend(tokens: list[str]) -> Tokenizer:
    """Whitespace split + lower-casing + word lookup (``example.populate_embeddings``), ``[UNK]`` for unknowns."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    from ..modeling.tokenization_paranmt import PAD_TOKEN, UNK_TOKEN

    vocab = {PAD_TOKEN: 0, UNK_TOKEN: 1}
    for token in tokens:
        vocab.setdefault(token, len(vocab))
    if len(vocab) != len(tokens) + 2:
        raise ValueError("the word vocabulary holds [PAD]/[UNK] or duplicates")
    tok = Tokenizer(models.WordLevel(vocab, unk_token=UNK_TOKEN))
    tok.normalizer = normalizers.Sequence([normalizers.Replace(Regex(FINAL_SIGMA), "ς"), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tok


def _unreachable(tokens: list[str], token_type: str) -> list[str]:
    """Vocabulary entries the lower-casing lookup can never reach (upper case, whitespace, wrong length)."""
    bad = [t for t in tokens if t != t.lower() or (token_type == "word" and (not t or len(t.split()) != 1))]
    return bad + [t for t in tokens if token_type == "trigram" and len(t) != 3 and t not in bad]


def convert_paranmt50m(
    path: str | os.PathLike[str],
    combination: str = "concat",
    token_type: str | None = None,
) -> tuple[ParaNMTEncoder, ConversionReport]:
    """Convert a ParaNMT-50M pickle (word, trigram or trigram+word averaging model) into a ParaNMTEncoder.

    Args:
        path: the ``.pickle`` file (e.g. ``ngram-word-concat-40.pickle``).
        combination: ``"concat"`` or ``"add"`` for combined models (``-combination_method``; not in the pickle).
        token_type: ``"word"`` or ``"trigram"`` for single models (default: guessed from the vocabulary).

    Returns:
        ``(encoder, report)``.
    """
    from ..encoder import ParaNMTEncoder
    from ..modeling.configuration_paranmt import ParaNMTConfig
    from ..modeling.modeling_paranmt import ParaNMTModel
    from ..modeling.tokenization_paranmt import ParaNMTTokenizer
    from ..tokenization.trigram import trigram_component

    params, vocabs = load_paranmt50m_pickle(path)
    embeddings = params[: len(vocabs)]
    extra = params[len(vocabs) :]
    if extra:
        raise ValueError(
            f"{os.fspath(path)} holds {len(extra)} parameter arrays besides the embeddings: an LSTM model "
            f"(Lasagne LSTMLayer with peepholes, {len(LASAGNE_LSTM_PARAMS)} arrays per layer: "
            f"{', '.join(LASAGNE_LSTM_PARAMS[12:15])}). torch.nn.LSTM has no peephole connections, so it cannot be "
            "converted exactly; only word, trigram and trigram+word averaging models are supported."
        )
    if len(vocabs) == 2:
        types = ["trigram", "word"]  # mixed_models: ngram first, then words
    else:
        types = [token_type or guess_token_type(vocabs[0])]
    if any(t not in ("word", "trigram") for t in types):
        raise ValueError(f"token_type must be 'word' or 'trigram', got {types}")
    components, specs, weights, unreachable = [], [], [], []
    for we, vocab, kind in zip(embeddings, vocabs, types, strict=True):
        if we.ndim != 2:
            raise ValueError(f"embedding matrix must be 2-D, got shape {we.shape}")
        tokens = _ordered_tokens(vocab, we.shape[0], kind)
        unreachable += _unreachable(tokens, kind)
        weights.append(_embedding(we, vocab, tokens))
        if kind == "trigram":
            specs.append(trigram_component(vocab=tokens))
        else:
            specs.append({"kind": "tokenizers", "tokenizer": json.loads(word_tokenizer_backend(tokens).to_str())})
        components.append({"encoder": kind, "vocab_size": len(tokens) + 2, "embedding_dim": int(we.shape[1])})
    if len(components) == 1:
        config = ParaNMTConfig(**components[0], drop_unknown_tokens=False)
    else:
        config = ParaNMTConfig(components=components, combination=combination, drop_unknown_tokens=False)
    model = ParaNMTModel(config)
    with torch.no_grad():
        for encoder, weight in zip(model.encoders, weights, strict=True):
            encoder.embedding.weight.copy_(weight)
    if types == ["word"]:
        words = _ordered_tokens(vocabs[0], embeddings[0].shape[0], "word")
        tokenizer = to_transformers(word_tokenizer_backend(words))
    else:
        tokenizer = ParaNMTTokenizer(components=specs)
    report = ConversionReport(
        source=os.fspath(path),
        encoder="+".join(types),
        vocab_size=sum(c["vocab_size"] for c in components),
        embedding_dim=int(config.hidden_size),
        checkpoint_rows=sum(len(v) for v in vocabs),
        unreachable_rows=len(unreachable),
        unreachable_examples=sorted(unreachable)[:20],
    )
    if "word" in types:
        report.notes.append(
            "word lookup: the original retries an unknown word without its Unicode punctuation (example.lookup); "
            "the converted tokenizer maps it to UUUNKKK"
        )
    if "trigram" in types:
        report.notes.append(
            "trigrams: the original cuts ' ' + text.strip().lower() + ' ' as is; the converted tokenizer first "
            "splits words (WORD_SPLIT_PATTERN) and joins them with single spaces (equal on tokenised text)"
        )
    logger.info("converted %s: %s", path, report)
    return ParaNMTEncoder(model, tokenizer), report


__all__ = ["convert_paranmt50m", "load_paranmt50m_pickle", "guess_token_type", "LASAGNE_LSTM_PARAMS"]

"""Conversion of the original released checkpoints (para-nmt-50m, paraphrastic-representations-at-scale).

- :func:`convert_pras`: a PRAS ``.pt`` checkpoint + its sentencepiece ``.model`` -> ``ParaNMTEncoder`` (sp averaging
  or BiLSTM), embeddings equal to the original ``embed_sentences.py`` inference.
- :func:`convert_paranmt50m`: a ParaNMT-50M pickle (every ``-model`` and ``-combination_type`` of
  jwieting/para-nmt-50m: word/trigram averaging, max pooling, (Bi)LSTM avg/max with Lasagne's peephole LSTM,
  trigram/word/LSTM combinations) -> ``ParaNMTEncoder``, equal to the original inference on raw text.
- :func:`save_converted`: the converted model's folder with its ``conversion_report.json``, written atomically.

Nothing is unpickled beyond an explicit allow-list (see :mod:`paranmt_hf.utils.safe_pickle`). Names load lazily.
"""

from __future__ import annotations

import importlib
from typing import Any

PARANMT50M_MODELS = ("wordaverage", "maxpool", "lstmavg", "lstmmax", "bilstmavg", "bilstmmax")
"""The ``-model`` names of single ParaNMT-50M models (``main/models.py``)."""

PARANMT50M_COMBINATION_TYPES = ("ngram-word", "ngram-lstm", "word-lstm", "ngram-word-lstm")
"""The ``-combination_type`` names of combined ParaNMT-50M models (``main/mixed_models.py``)."""

_LAZY = {
    "convert_pras": ".pras",
    "load_pras_checkpoint": ".pras",
    "ConversionReport": ".pras",
    "convert_paranmt50m": ".paranmt50m",
    "load_paranmt50m_pickle": ".paranmt50m",
    "read_sentencepiece_model": ".sentencepiece",
    "build_sentencepiece_tokenizer": ".sentencepiece",
    "save_converted": ".saving",
}

__all__ = [*_LAZY, "PARANMT50M_MODELS", "PARANMT50M_COMBINATION_TYPES"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'paranmt_hf.model.convert' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)

"""Conversion of the original released checkpoints (para-nmt-50m, paraphrastic-representations-at-scale).

- :func:`convert_pras`: a PRAS ``.pt`` checkpoint + its sentencepiece ``.model`` -> ``ParaNMTEncoder`` (sp averaging
  or BiLSTM), embeddings equal to the original ``embed_sentences.py`` inference.
- :func:`convert_paranmt50m`: a ParaNMT-50M pickle (word, trigram, trigram+word averaging) -> ``ParaNMTEncoder``.

Nothing is unpickled beyond an explicit allow-list (see :mod:`paranmt_hf.utils.safe_pickle`). Names load lazily.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "convert_pras": ".pras",
    "load_pras_checkpoint": ".pras",
    "ConversionReport": ".pras",
    "convert_paranmt50m": ".paranmt50m",
    "load_paranmt50m_pickle": ".paranmt50m",
    "read_sentencepiece_model": ".sentencepiece",
    "build_sentencepiece_tokenizer": ".sentencepiece",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'paranmt_hf.convert' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)

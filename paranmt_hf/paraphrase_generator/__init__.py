"""The paraphrase generator (ParaNMT-50M §6): train a seq2seq model on paraphrase pairs, generate, evaluate.

The names below are imported on first use (torch and transformers load only when a function needs them).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "SIZES": "paranmt_hf.paraphrase_generator.build",
    "build_seq2seq_model": "paranmt_hf.paraphrase_generator.build",
    "train_seq2seq_tokenizer": "paranmt_hf.paraphrase_generator.build",
    "Seq2SeqTrainingSettings": "paranmt_hf.paraphrase_generator.train",
    "train_seq2seq": "paranmt_hf.paraphrase_generator.train",
    "load_seq2seq": "paranmt_hf.paraphrase_generator.train",
    "GeneratorError": "paranmt_hf.paraphrase_generator.train",
    "DecodingSettings": "paranmt_hf.paraphrase_generator.generate",
    "ParaphraseGenerator": "paranmt_hf.paraphrase_generator.generate",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'paranmt_hf.paraphrase_generator' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__

"""paranmt_hf: the paraphrastic sentence encoders of Wieting & Gimpel, native to the Hugging Face ecosystem.

Importing the package is cheap: torch, transformers and the rest load on first use of a name below. Importing it
also registers ``model_type="paranmt"`` with transformers' ``AutoConfig``, ``AutoModel`` and ``AutoTokenizer``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _registration

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    # models (the Hub remote-code files)
    "ParaNMTConfig": "paranmt_hf.modeling.configuration_paranmt",
    "ParaNMTModel": "paranmt_hf.modeling.modeling_paranmt",
    "ParaNMTPreTrainedModel": "paranmt_hf.modeling.modeling_paranmt",
    "ParaNMTTokenizer": "paranmt_hf.modeling.tokenization_paranmt",
    # high-level encoder
    "ParaNMTEncoder": "paranmt_hf.encoder",
    "build_encoder": "paranmt_hf.build",
    # tokenizers
    "build_word_tokenizer": "paranmt_hf.tokenization.word",
    "train_unigram_tokenizer": "paranmt_hf.tokenization.unigram",
    "build_trigram_tokenizer": "paranmt_hf.tokenization.trigram",
    "combine_tokenizers": "paranmt_hf.tokenization.combined",
    # data (issue: ParaNMT corpus builder)
    "load_paranmt": "paranmt_hf.data",
    # training (issue: sentence-transformers training)
    "MegaBatchMarginLoss": "paranmt_hf.losses",
    "ParaNMTInputModule": "paranmt_hf.st",
    # deprecated alias of ParaNMTInputModule (its name in earlier releases), kept so that old code still imports
    "ParaNMTSentenceEncoder": "paranmt_hf.st",
}
"""Public names, imported on first use. ``ParaNMTSentenceEncoder`` is a deprecated alias of ``ParaNMTInputModule``."""

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:  # pragma: no cover
    # ruff: noqa: F401
    from .build import build_encoder
    from .encoder import ParaNMTEncoder
    from .modeling.configuration_paranmt import ParaNMTConfig
    from .modeling.modeling_paranmt import ParaNMTModel, ParaNMTPreTrainedModel
    from .modeling.tokenization_paranmt import ParaNMTTokenizer


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'paranmt_hf' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


_registration.install()

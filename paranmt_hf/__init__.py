"""paranmt_hf: the paraphrastic sentence encoders of Wieting & Gimpel, native to the Hugging Face ecosystem.

Importing the package is cheap: torch, transformers and the rest load on first use of a name below. Importing it
also registers ``model_type="paranmt"`` with transformers' ``AutoConfig``, ``AutoModel`` and ``AutoTokenizer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__
from .model import registration
from .utils.lazy import lazy_exports

_LAZY: dict[str, str] = {
    # models (the Hub remote-code files)
    "ParaNMTConfig": "paranmt_hf.modeling.configuration_paranmt",
    "ParaNMTModel": "paranmt_hf.modeling.modeling_paranmt",
    "ParaNMTPreTrainedModel": "paranmt_hf.modeling.modeling_paranmt",
    "ParaNMTTokenizer": "paranmt_hf.modeling.tokenization_paranmt",
    # high-level encoder
    "ParaNMTEncoder": "paranmt_hf.model.encoder",
    "StaticEncoder": "paranmt_hf.model.static",  # averaging models without torch (NumPy + tokenizers)
    "build_encoder": "paranmt_hf.model.build",
    # tokenizers
    "build_word_tokenizer": "paranmt_hf.model.tokenization.word",
    "train_unigram_tokenizer": "paranmt_hf.model.tokenization.unigram",
    "build_trigram_tokenizer": "paranmt_hf.model.tokenization.trigram",
    "combine_tokenizers": "paranmt_hf.model.tokenization.combined",
    # data (issue: ParaNMT corpus builder)
    "load_paranmt": "paranmt_hf.dataset_scripts.loading",
    # training (issue: sentence-transformers training)
    "MegaBatchMarginLoss": "paranmt_hf.losses",
    "ParaNMTInputModule": "paranmt_hf.modeling.input_module_paranmt",
}
"""Public names, imported on first use."""

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:  # pragma: no cover
    # ruff: noqa: F401
    from .model.build import build_encoder
    from .model.encoder import ParaNMTEncoder
    from .model.static import StaticEncoder
    from .modeling.configuration_paranmt import ParaNMTConfig
    from .modeling.modeling_paranmt import ParaNMTModel, ParaNMTPreTrainedModel
    from .modeling.tokenization_paranmt import ParaNMTTokenizer


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


registration.install()

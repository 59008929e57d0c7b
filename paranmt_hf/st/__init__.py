"""sentence-transformers integration: the input module wrapping a ParaNMT model and the saved layouts.

Needs the ``st`` extra (sentence-transformers).
"""

from __future__ import annotations

from ..utils.imports import require

require("sentence_transformers", "st")

from .layout import (  # noqa: E402
    static_embedding_is_exact,
    write_sentence_transformers_files,
    write_static_embedding,
)
from .sentence_encoder import ParaNMTInputModule, ParaNMTSentenceEncoder  # noqa: E402

__all__ = [
    "ParaNMTInputModule",
    "ParaNMTSentenceEncoder",
    "write_sentence_transformers_files",
    "write_static_embedding",
    "static_embedding_is_exact",
]

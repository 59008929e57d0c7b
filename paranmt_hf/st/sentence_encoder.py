"""The sentence-transformers input module of ParaNMT models.

One class, :class:`~paranmt_hf.modeling.input_module_paranmt.ParaNMTInputModule`, shipped as remote code in every
saved model directory (``modules.json`` names it) and used for training; ``ParaNMTSentenceEncoder`` is its name in
earlier releases.
"""

from __future__ import annotations

from ..modeling.input_module_paranmt import ParaNMTInputModule

ParaNMTSentenceEncoder = ParaNMTInputModule
"""Earlier name of :class:`ParaNMTInputModule` (kept for existing code)."""

__all__ = ["ParaNMTInputModule", "ParaNMTSentenceEncoder"]

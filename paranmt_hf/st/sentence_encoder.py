"""The sentence-transformers input module of ParaNMT models.

One class, :class:`~paranmt_hf.modeling.input_module_paranmt.ParaNMTInputModule`, shipped as remote code in every
saved model directory (``modules.json`` names it) and used for training. ``ParaNMTSentenceEncoder`` is a deprecated
alias (its name in earlier releases), kept so that existing code keeps working: use ``ParaNMTInputModule``.
"""

from __future__ import annotations

from ..modeling.input_module_paranmt import ParaNMTInputModule

ParaNMTSentenceEncoder = ParaNMTInputModule
"""Deprecated alias of :class:`ParaNMTInputModule` (its name in earlier releases), kept for existing code."""

__all__ = ["ParaNMTInputModule", "ParaNMTSentenceEncoder"]

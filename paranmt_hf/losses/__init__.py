"""Losses in the sentence-transformers shape: the mega-batch margin loss of Wieting & Gimpel."""

from __future__ import annotations

from .mega_batch_margin import MegaBatchMarginLoss
from .mining import CANDIDATES, SAMPLING

__all__ = ["MegaBatchMarginLoss", "SAMPLING", "CANDIDATES"]

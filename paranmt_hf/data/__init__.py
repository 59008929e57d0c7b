"""ParaNMT corpus: streaming datasets builder, filters and loaders."""

from __future__ import annotations

from .loader import CONFIGS, load_paranmt

__all__ = ["CONFIGS", "load_paranmt"]

"""The data layer: pair-file formats and readers, the builder configs' registry, and ``load_paranmt``.

- :mod:`.reader`: lines of plain / gzip / zip files in blocks (encoding checks, shards);
- :mod:`.records`: line formats, parsing with bad-line accounting;
- :mod:`.writer`: writing pairs as TSV;
- :mod:`.configs`: the builder configs (names, columns, training columns) and the bitext file-name rule;
- :mod:`.rows`: the rows of each config from parsed lines (used by the builder and the corpus tools);
- :mod:`.loader`: :func:`load_paranmt`, the builder through the library.
"""

from __future__ import annotations

from .configs import CONFIG_NAMES, CONFIGS, ConfigSpec, bitext_sides, get_config
from .loader import load_paranmt

__all__ = ["CONFIGS", "CONFIG_NAMES", "ConfigSpec", "bitext_sides", "get_config", "load_paranmt"]

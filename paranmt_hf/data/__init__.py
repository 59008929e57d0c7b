"""The data layer: the formats of every data set and their readers (no download, no processing).

- :mod:`.reader`: lines of plain / gzip / zip files in blocks (encoding checks, shards);
- :mod:`.records`: line formats, parsing with bad-line accounting;
- :mod:`.writer`: writing pairs as TSV;
- :mod:`.configs`: the builder configs (names, columns, training columns) and the bitext file-name rule;
- :mod:`.sts`, :mod:`.tatoeba`, :mod:`.simlex`: the evaluation sets' files (STS 2012-2017 and STS-B, LASER's
  Tatoeba sets, SimLex-999).

The rows of each builder config (with the papers' filters) are made in :mod:`paranmt_hf.corpus.output.rows`;
:func:`paranmt_hf.load_paranmt` runs the builder (``dataset_scripts/``).
"""

from __future__ import annotations

from .configs import CONFIG_NAMES, CONFIGS, ConfigSpec, bitext_sides, get_config

__all__ = ["CONFIGS", "CONFIG_NAMES", "ConfigSpec", "bitext_sides", "get_config"]

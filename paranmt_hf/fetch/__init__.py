"""Fetch and prepare the project's data from public sources: ``paranmt-hf data fetch``.

```python
from paranmt_hf.fetch import fetch_data

report = fetch_data("~/data/paranmt")          # eval/ + train/ + SOURCES.json + CHECKSUMS.sha256
print(report.stats["train/flickr30k-caption-pairs.tsv.gz"])
```

Every URL, mirror, checksum and licence is in :mod:`paranmt_hf.fetch.registry`; downloads resume and are verified
(:mod:`~paranmt_hf.fetch.http`); the training pairs are decontaminated against every evaluation set
(:mod:`~paranmt_hf.fetch.decontaminate`).
"""

from __future__ import annotations

from .http import ChecksumError, DownloadError, UnreachableError
from .lock import UnpinnedError
from .pipeline import FetchFailed, FetchReport, SourceFormatError, fetch_data, fetch_remote, verify_checksums
from .registry import SOURCES, Remote, Source

__all__ = [
    "SOURCES",
    "ChecksumError",
    "DownloadError",
    "FetchFailed",
    "FetchReport",
    "Remote",
    "Source",
    "SourceFormatError",
    "fetch_remote",
    "UnpinnedError",
    "UnreachableError",
    "fetch_data",
    "verify_checksums",
]

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared real data; fails (not skips) with a clear message when it is absent."""
    from paranmt_hf.utils.paths import data_dir as resolve

    try:
        return resolve()
    except FileNotFoundError as err:
        pytest.fail(str(err))

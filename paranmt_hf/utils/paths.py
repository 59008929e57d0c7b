"""Where the shared real data lives."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "PARANMT_HF_DATA"
CACHE_ENV_VAR = "PARANMT_HF_CACHE"
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
"""The project's shared data next to a source checkout (``../shared/data``)."""


def cache_dir() -> Path:
    """The user cache: ``$PARANMT_HF_CACHE``, else ``$XDG_CACHE_HOME/paranmt_hf``, else ``~/.cache/paranmt_hf``."""
    if os.environ.get(CACHE_ENV_VAR):
        return Path(os.environ[CACHE_ENV_VAR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "paranmt_hf"


def cache_data_dir() -> Path:
    """Where ``paranmt-hf data fetch`` puts the data by default: ``<cache_dir()>/data``."""
    return cache_dir() / "data"


def data_dir(path: str | os.PathLike[str] | None = None, must_exist: bool = True) -> Path:
    """Resolve the data directory: ``path``, ``$PARANMT_HF_DATA``, ``../shared/data`` or the user cache.

    The first that exists wins; the user cache (:func:`cache_data_dir`) is filled by ``paranmt-hf data fetch``.
    With ``must_exist=False`` and none of them present, the first of ``path``, ``$PARANMT_HF_DATA`` and the user
    cache is returned (where the data should go).

    Raises:
        FileNotFoundError: if ``must_exist`` and no directory is found, with a message saying how to set it.
    """
    candidates = [Path(path)] if path is not None else []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    candidates.append(SHARED_DATA)
    candidates.append(cache_data_dir())
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    if must_exist:
        raise FileNotFoundError(
            f"No data directory found (tried {', '.join(str(c) for c in candidates)}). Set {ENV_VAR} to the folder "
            "holding eval/ and train/ (the project's shared data), pass the path explicitly, or download it with "
            "`paranmt-hf data fetch` (into the user cache)."
        )
    return candidates[0] if path is not None or os.environ.get(ENV_VAR) else cache_data_dir()

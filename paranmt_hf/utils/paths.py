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
    """Resolve the data directory: ``path``, else ``$PARANMT_HF_DATA``, else ``../shared/data`` or the user cache.

    A *given* folder (``path`` or ``$PARANMT_HF_DATA``) is the answer: one that does not exist is an error, never a
    silent fall-back to another folder. With neither given, ``../shared/data`` (next to a source checkout) is used
    when it exists, else the user cache (:func:`cache_data_dir`, filled by ``paranmt-hf data fetch``). With
    ``must_exist=False`` the chosen folder is returned even when absent (where the data should go).

    Raises:
        FileNotFoundError: if ``must_exist`` and the chosen directory does not exist, with a message naming it.
    """
    if path is not None:
        candidate, source = Path(path), "the data directory given"
    elif os.environ.get(ENV_VAR):
        candidate, source = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    elif SHARED_DATA.is_dir():
        candidate, source = SHARED_DATA, "the project's shared data"
    else:
        candidate, source = cache_data_dir(), "the user cache"
    if candidate.is_dir():
        return candidate.resolve()
    if must_exist:
        hint = (f" Set {ENV_VAR} to the folder holding eval/ and train/, pass the path, or download the data with "
                "`paranmt-hf data fetch` (into the user cache).") if path is None else (
                " Give the folder that holds eval/ and train/, or fill this one with "
                f"`paranmt-hf data fetch --dest {candidate}`.")
        raise FileNotFoundError(f"data directory {candidate} ({source}) does not exist.{hint}")
    return candidate


def looks_local(name_or_path: str | os.PathLike[str]) -> bool:
    """Whether a model name is meant as a local path rather than a Hub id (``org/name`` or ``name``).

    Local: a ``PathLike``, an absolute path, one starting with ``.`` or ``~``, with a backslash or more than one ``/``,
    ending with ``/``, or whose first component is an existing local folder.
    """
    if isinstance(name_or_path, os.PathLike):
        return True
    name = str(name_or_path)
    if name.startswith((".", "~", "/")) or "\\" in name or name.count("/") > 1 or name.endswith("/"):
        return True
    first = name.split("/", 1)[0]
    return "/" in name and Path(first).is_dir()

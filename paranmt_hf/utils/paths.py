"""Where the shared real data lives."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "PARANMT_HF_DATA"


def data_dir(path: str | os.PathLike[str] | None = None, must_exist: bool = True) -> Path:
    """Resolve the data directory: ``path``, else ``$PARANMT_HF_DATA``, else ``../shared/data`` next to the repo.

    The first of these that is *given* is the answer: a ``path`` (or ``$PARANMT_HF_DATA``) that does not exist is an
    error, never a silent fall-back to another folder.

    Raises:
        FileNotFoundError: if ``must_exist`` and the chosen directory does not exist, with a message naming it.
    """
    if path is not None:
        candidate, source = Path(path), "the data directory given"
    elif os.environ.get(ENV_VAR):
        candidate, source = Path(os.environ[ENV_VAR]), f"${ENV_VAR}"
    else:
        candidate, source = Path(__file__).resolve().parents[2].parent / "shared" / "data", "the default"
    if candidate.is_dir():
        return candidate.resolve()
    if must_exist:
        hint = f" Set {ENV_VAR} to the folder holding eval/ and train/ (the project's shared data) or pass the path."
        hint = "" if path is not None else hint
        raise FileNotFoundError(f"data directory {candidate} ({source}) does not exist.{hint}")
    return candidate

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


def check_model_path(name_or_path: str | os.PathLike[str]) -> None:
    """Raise ``FileNotFoundError`` for a local model path that does not exist (instead of asking the Hub for it).

    Raises:
        FileNotFoundError: ``name_or_path`` looks local (:func:`looks_local`) and is not a folder.
    """
    if looks_local(name_or_path) and not Path(name_or_path).expanduser().is_dir():
        raise FileNotFoundError(f"model directory {name_or_path} not found (a local path: the Hub was not asked)")

"""Where the shared real data lives."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "PARANMT_HF_DATA"


def data_dir(path: str | os.PathLike[str] | None = None, must_exist: bool = True) -> Path:
    """Resolve the data directory: ``path``, else ``$PARANMT_HF_DATA``, else ``../shared/data`` next to the repo.

    Raises:
        FileNotFoundError: if ``must_exist`` and no directory is found, with a message saying how to set it.
    """
    candidates = [Path(path)] if path is not None else []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    candidates.append(Path(__file__).resolve().parents[2].parent / "shared" / "data")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    if must_exist:
        raise FileNotFoundError(
            f"No data directory found (tried {', '.join(str(c) for c in candidates)}). Set {ENV_VAR} to the folder "
            "holding eval/ and train/ (the project's shared data) or pass the path explicitly."
        )
    return candidates[0]

"""Which process of a ``torchrun`` run this is (the environment variables torchrun sets)."""

from __future__ import annotations

import os


def world_size() -> int:
    """Processes of this run (``torchrun`` sets ``WORLD_SIZE``)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    """Whether this is rank 0 (the process that writes the final model)."""
    return int(os.environ.get("RANK", "0")) == 0

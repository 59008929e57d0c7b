"""The files of a folder that stay inside it: symbolic links that lead out of a tree are never followed.

A results folder (``eval --output``, ``publish --eval-dir``) may hold a link to any file of the machine
(``x.json -> /etc/passwd``); what is read from it, copied out of it or uploaded must lie inside it. Links inside the
tree (to a file of the same tree) are followed; links out of it are skipped, counted and named in one warning.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

logger = logging.getLogger(__name__)


def within(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether ``path``, links resolved, lies inside ``root`` (links resolved too)."""
    base = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def files_within(root: str | os.PathLike[str], paths: Iterable[Path], what: str = "file") -> list[Path]:
    """The ``paths`` that are files lying inside ``root`` (links resolved); the others are skipped with a warning.

    Args:
        root: the tree (e.g. the results folder a user gave).
        paths: candidate files below it (e.g. ``folder.glob("*.json")``).
        what: what the files are, for the warning.
    """
    kept, skipped = [], []
    for path in paths:
        if not within(root, path):
            skipped.append(path)
        elif path.is_file():
            kept.append(path)
    if skipped:
        logger.warning("skipped %d %s(s) of %s that link outside it: %s", len(skipped), what, root,
                       ", ".join(str(p) for p in skipped[:5]) + (" ..." if len(skipped) > 5 else ""))
    return kept

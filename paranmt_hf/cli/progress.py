"""``--no-progress``, the same for every command: silence every progress bar, the libraries' included.

paranmt_hf's own bars (encoding, scoring, fetching, the trainer's) follow the flag directly; the bars the libraries
draw on their own (datasets' "Generating train split", transformers' "Loading weights" and "Writing model shards",
sentence-transformers' "Computing widget examples", huggingface_hub's downloads) follow the environment switches set
here before the command imports them. Worker processes inherit the switches.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

QUIET_ENVIRONMENT = {
    "TQDM_DISABLE": "1",  # every tqdm bar (tqdm >= 4.66 reads TQDM_* defaults when it is imported)
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # huggingface_hub, and transformers' bars, which follow it
}
"""The switches of the libraries' own progress bars."""


def add_progress_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--no-progress`` (read by :func:`~paranmt_hf.cli.main.main` through :func:`progress_as_asked`)."""
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars, neither paranmt_hf's nor the libraries' (datasets, transformers, ...)")


def wants_quiet(args: argparse.Namespace) -> bool:
    """Whether the command line asked for no progress bars (``--no-progress``; ``--quiet`` of the corpus tools)."""
    return bool(getattr(args, "no_progress", False) or getattr(args, "quiet", False))


@contextmanager
def progress_as_asked(args: argparse.Namespace) -> Iterator[None]:
    """Run a command with the libraries' progress bars off when :func:`wants_quiet` (this process and its children).

    The switches are restored afterwards, so a command run inside a longer-lived process (a test, a notebook) leaves
    the process as it found it.
    """
    if not wants_quiet(args):
        yield
        return
    saved = {name: os.environ.get(name) for name in QUIET_ENVIRONMENT}
    os.environ.update(QUIET_ENVIRONMENT)
    restore = _silence_imported_libraries()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        for undo in restore:
            undo()


def _silence_imported_libraries() -> list[Callable[[], None]]:
    """Libraries imported before the switches were set turn their bars off now; returns how to turn them back on."""
    restore: list[Callable[[], None]] = []
    if "datasets" in sys.modules:
        datasets = sys.modules["datasets"]
        if datasets.is_progress_bar_enabled():
            datasets.disable_progress_bars()
            restore.append(datasets.enable_progress_bars)
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

        if not are_progress_bars_disabled():
            disable_progress_bars()
            restore.append(enable_progress_bars)
    if "transformers" in sys.modules:
        from transformers.utils import logging as transformers_logging

        if transformers_logging.is_progress_bar_enabled():
            transformers_logging.disable_progress_bar()
            restore.append(transformers_logging.enable_progress_bar)
    return restore

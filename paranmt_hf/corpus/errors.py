"""Errors of the corpus tools that are the user's to fix (the command line prints them as one line)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence


class CorpusError(ValueError):
    """A corpus run that cannot do what was asked (no valid line in the input, a work folder of another run...)."""


class MissingScoreError(CorpusError):
    """A pair without a score where one is needed (``corpus annotate`` without ``--model`` on 2-column input)."""


def first_unscored(numbers: Sequence[int], scores: Sequence[float | None]) -> int | None:
    """The line number (of ``numbers``) of the first pair whose score is missing; None when every pair has one."""
    return next((n for n, s in zip(numbers, scores, strict=True) if s is None), None)


class MissingColumnError(CorpusError):
    """A column an output needs is neither in the input nor computed."""


class InvalidOptionError(CorpusError):
    """Options that do not go together (e.g. a sampling setting without sampling)."""


class TasksFailedError(CorpusError):
    """Tasks of a stage that did not complete (their logs say why); the work folder is kept, so a rerun resumes."""


class EmptyResultError(CorpusError):
    """A run that kept no row (``corpus make`` without ``allow_empty``).

    The work folder is kept: the same command with ``allow_empty`` writes the empty result without redoing the work.
    """


WORDING_VARIABLE = "PARANMT_HF_CLI_WORDING"
"""Set while a command line runs (an environment variable, so that the tasks' processes see it too)."""


@contextlib.contextmanager
def command_line_wording() -> Iterator[None]:
    """While the block runs, :func:`option` names command-line flags (the CLI wraps each command in it)."""
    previous = os.environ.get(WORDING_VARIABLE)
    os.environ[WORDING_VARIABLE] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(WORDING_VARIABLE, None)
        else:
            os.environ[WORDING_VARIABLE] = previous


def in_command_line() -> bool:
    """Whether a command line runs this (:func:`command_line_wording`): it then says itself what happened."""
    return os.environ.get(WORDING_VARIABLE) == "1"


def option(flag: str, keyword: str) -> str:
    """How a message names an option: ``flag`` on the command line, ``keyword`` in Python (never both).

    E.g. ``option("--restart", "RunOptions(restart=True)")``.
    """
    return flag if in_command_line() else keyword


RESTART = ("--restart", "RunOptions(restart=True)")
"""How to discard a run's work folder, for :func:`option`."""

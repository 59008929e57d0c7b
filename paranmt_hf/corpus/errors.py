"""Errors of the corpus tools that are the user's to fix (the command line prints them as one line)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar


class CorpusError(ValueError):
    """A corpus run that cannot do what was asked (no valid line in the input, a work folder of another run...)."""


class MissingScoreError(CorpusError):
    """A pair without a score where one is needed (``corpus annotate`` without ``--model`` on 2-column input)."""


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


_WORDING: ContextVar[str] = ContextVar("paranmt_hf_corpus_wording", default="python")


@contextlib.contextmanager
def command_line_wording() -> Iterator[None]:
    """While the block runs, :func:`option` names command-line flags (the CLI wraps each command in it)."""
    token = _WORDING.set("cli")
    try:
        yield
    finally:
        _WORDING.reset(token)


def option(flag: str, keyword: str) -> str:
    """How a message names an option: ``flag`` on the command line, ``keyword`` in Python (never both).

    E.g. ``option("--restart", "RunOptions(restart=True)")``.
    """
    return flag if _WORDING.get() == "cli" else keyword


def in_command_line() -> bool:
    """Whether a command line runs this (:func:`command_line_wording`): it then says itself what happened."""
    return _WORDING.get() == "cli"

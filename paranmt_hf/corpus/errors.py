"""Errors of the corpus tools that are the user's to fix (the command line prints them as one line)."""

from __future__ import annotations


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

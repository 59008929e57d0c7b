"""Errors of the data readers that describe a user's request, not a broken file."""

from __future__ import annotations


class UnknownTaskError(KeyError):
    """An evaluation task or subset that does not exist (a ``KeyError`` whose message is a sentence)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

"""The error of a conversion that cannot be done as asked (the command line prints it as one line)."""

from __future__ import annotations


class ConversionError(ValueError):
    """A checkpoint that does not fit the conversion asked.

    Its layout, its vocabulary or its settings do not match the model type given (or guessed), or it uses a feature
    the exact conversion cannot reproduce.
    """


__all__ = ["ConversionError"]

"""The error of a vocabulary that cannot be built as asked (a user's corpus or size, not a bug)."""

from __future__ import annotations


class VocabularyError(ValueError):
    """A corpus that gives no token to keep, or a vocabulary size the corpus or the tokenizer kind cannot take."""


class TokenizerSourceError(ValueError):
    """A tokenizer to adapt (``--from``) that cannot be read: not a ``tokenizer.json``, or no fast tokenizer."""

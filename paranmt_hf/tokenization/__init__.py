"""Tokenizers for ParaNMT models, built with the ``tokenizers`` library (word-level, unigram, trigram)."""

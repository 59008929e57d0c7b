"""Corpus tools: scoring, filtering, de-duplication, export, paraphrase lexicon."""

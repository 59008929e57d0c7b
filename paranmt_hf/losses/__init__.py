"""Losses in the sentence-transformers shape (the papers' mega-batch margin loss)."""

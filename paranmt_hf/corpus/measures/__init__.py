"""Per-pair measures and the named columns of pair files.

The registry of the columns ``corpus annotate`` adds and filters threshold (overlaps, BLEU, n-gram language
model, reference classifier, language ID, paraphrase score), their implementations, and the header of pair files
with named columns.
"""

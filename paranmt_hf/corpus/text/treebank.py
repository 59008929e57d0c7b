"""NLTK's improved Treebank word tokenizer (``nltk.tokenize.NLTKWordTokenizer``), ported to the standard ``re``.

Why a port: the fast overlap tokenizer (:class:`paranmt_hf.corpus.text.tokens.FastTokenizer`) needs neither NLTK's
import nor its per-call overhead; same tokens, far less CPU: ``benchmarks/treebank_port/README.md``. The patterns and
substitutions below are NLTK's (nltk 3.10.x, ``nltk/tokenize/destructive.py``, Copyright (C) 2001-2026 NLTK Project,
Apache License 2.0), in NLTK's order; :func:`fingerprint` hashes them exactly as
:func:`paranmt_hf.corpus.text.tokens.pattern_fingerprint` hashes the installed NLTK's, and
``tests/test_corpus_tokens.py`` checks both the hash against the audited set and the tokens against NLTK's on real and
adversarial text. Only ``tokenize(text)`` (no ``convert_parentheses``).
"""

from __future__ import annotations

import hashlib
import re

STARTING_QUOTES = [
    ("([«“‘„]|[`]+)", r" \1 "),
    (r"^\"", r"``"),
    (r"(``)", r" \1 "),
    (r"([ \(\[{<])(\"|\'{2})", r"\1 `` "),
    (r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", r"\1 "),
]
PUNCTUATION = [
    (r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$", r"\1 \2 \3 "),
    (r"([:,])([^\d])", r" \1 \2"),
    (r"([:,])$", r" \1 "),
    (r"\.{2,}", r" \g<0> "),
    (r"[;@#$%&]", r" \g<0> "),
    (r"[\u2012-\u2015]", r" \g<0> "),
    (r'([^\.])(\.)([\]\)}>"\']*)\s*$', r"\1 \2\3 "),
    (r"[?!]", r" \g<0> "),
    (r"([^'])' ", r"\1 ' "),
    (r"[*]", r" \g<0> "),
]
PARENS_BRACKETS = (r"[\]\[\(\)\{\}\<\>]", r" \g<0> ")
DOUBLE_DASHES = (r"--", r" -- ")
ENDING_QUOTES = [
    ("([»”’])", r" \1 "),
    (r"''", " '' "),
    (r'"', " '' "),
    (r"\s+", " "),
    (r"([^' ])('[sS]|'[mM]|'[dD]|') ", r"\1 \2 "),
    (r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r"\1 \2 "),
]
CONTRACTIONS2 = [
    r"(?i)\b(can)(?#X)(not)\b", r"(?i)\b(d)(?#X)('ye)\b", r"(?i)\b(gim)(?#X)(me)\b", r"(?i)\b(gon)(?#X)(na)\b",
    r"(?i)\b(got)(?#X)(ta)\b", r"(?i)\b(lem)(?#X)(me)\b", r"(?i)\b(more)(?#X)('n)\b", r"(?i)\b(wan)(?#X)(na)(?=\s)",
]
CONTRACTIONS3 = [r"(?i) ('t)(?#X)(is)\b", r"(?i) ('t)(?#X)(was)\b"]

_BEFORE_PADDING = [(re.compile(p), s) for p, s in (*STARTING_QUOTES, *PUNCTUATION, PARENS_BRACKETS, DOUBLE_DASHES)]
_AFTER_PADDING = [(re.compile(p), s) for p, s in ENDING_QUOTES] + \
    [(re.compile(p), r" \1 \2 ") for p in (*CONTRACTIONS2, *CONTRACTIONS3)]


def fingerprint() -> str:
    """sha256 of the ported patterns, computed as :func:`paranmt_hf.corpus.text.tokens.pattern_fingerprint` does."""
    parts = [f"{p}\x00{s}" for p, s in (*STARTING_QUOTES, *PUNCTUATION, PARENS_BRACKETS, DOUBLE_DASHES,
                                          *ENDING_QUOTES)]
    parts.extend((*CONTRACTIONS2, *CONTRACTIONS3))
    return hashlib.sha256("\x01".join(parts).encode("utf-8")).hexdigest()


def treebank_tokenize(text: str) -> list[str]:
    """``NLTKWordTokenizer().tokenize(text)``: the Treebank tokens of one sentence."""
    for regexp, substitution in _BEFORE_PADDING:
        text = regexp.sub(substitution, text)
    text = " " + text + " "
    for regexp, substitution in _AFTER_PADDING:
        text = regexp.sub(substitution, text)
    return text.split()

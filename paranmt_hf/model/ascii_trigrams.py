r"""Character-trigram ids of ASCII sentences read straight off the batch's bytes in NumPy.

A trigram segmenter's trigram text of a sentence is ``" " + " ".join(words) + " "`` (lower-cased, words by
``WORD_SPLIT_PATTERN``; see :class:`~.token_ids.TrigramIds`). For ASCII text it is the lower-cased sentence with
every whitespace run made one space, one space at each end, and one space between consecutive words of a chunk
(every character of a whitespace-free chunk belongs to exactly one of its words, so the words are the chunk cut at
some places). A chunk of ``\w`` characters only is one word; the places where any other chunk is cut come from the
caller (the segmenter's own word split, cached per distinct chunk). So a whole batch is a few passes over one byte
array: the trigram ids follow from a table indexed by the three 7-bit characters of each window.

Sentences this does not read (non-ASCII, ``\x00``, characters ``str.split`` splits on but the tokenizers' ``\s``
does not, characters the caller calls unsafe) are left empty and listed, for the caller's exact path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

WORD, SPACE, OTHER, SEPARATOR, UNSAFE = 0, 1, 2, 3, 4
r"""Byte classes: a ``\w`` character, whitespace, any other character (a chunk holding one may be several words),
the sentence separator ``\x00``, a character whose sentence the caller reads otherwise."""

PY_ONLY_SPACE = "".join(c for c in map(chr, range(128)) if c.isspace() and not re.match(r"\s", c, re.ASCII))
r"""The characters ``str.split`` splits on but the tokenizers' ``\s`` does not (``\x1c``-``\x1f``)."""

Cuts = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]
"""Chunks -> where each is cut into words: (offsets inside the chunk back to back, how many per chunk)."""


def byte_classes(unsafe: Sequence[str] = ()) -> bytes:
    r"""The class of every byte value, as a ``bytes.translate`` table (:data:`PY_ONLY_SPACE`: unsafe)."""
    classes = bytearray([UNSAFE] * 256)
    for code in range(128):
        char = chr(code)
        if code == 0:
            classes[code] = SEPARATOR
        elif char in unsafe or char in PY_ONLY_SPACE:
            classes[code] = UNSAFE
        elif char.isspace():
            classes[code] = SPACE
        else:
            classes[code] = WORD if re.match(r"\w", char, re.ASCII) else OTHER
    return bytes(classes)


_ONE_SPACE = bytes.maketrans(b"\t\n\x0b\x0c\r", b"     ")
"""Every ASCII whitespace byte made a space (those ``str.split`` also splits on are unsafe: never translated)."""


def trigram_text(texts: Sequence[str], classes: bytes, cuts: Cuts) -> tuple[np.ndarray, list[int]]:
    r"""The batch's trigram texts as bytes, ``\x00`` between sentences, and the sentences left out (left empty).

    ``classes``: :func:`byte_classes`; ``cuts``: where chunks holding an ``OTHER`` character are cut into words.
    """
    left = _non_ascii(texts)
    if left:
        texts = _blanked(texts, left)
    joined = " " + " \x00 ".join(texts).lower() + " "
    raw = joined.encode("ascii")
    kinds = raw.translate(classes)
    if kinds.count(SEPARATOR) != len(texts) - 1 or kinds.count(UNSAFE):  # "\x00" or an unsafe character in a text
        unsafe = (i for i, t in enumerate(texts) if max(t.encode().translate(classes), default=0) > OTHER)
        odd = sorted({*left, *unsafe})
        return trigram_text(_blanked(texts, odd), classes, cuts)[0], odd
    kind = np.frombuffer(kinds, dtype=np.uint8)
    data = np.frombuffer(raw.translate(_ONE_SPACE), dtype=np.uint8)
    space = kind == SPACE
    dropped = np.flatnonzero(space[1:] & space[:-1]) + 1  # a whitespace run is its first character, made a space
    if dropped.size:
        data = np.delete(data, dropped)
    other = np.flatnonzero(kind == OTHER)
    if other.size:
        breaks = np.flatnonzero(kind & 1)  # SPACE and SEPARATOR: chunk ends ("joined" starts and ends with one)
        after = np.searchsorted(breaks, other)
        after = after[np.r_[True, after[1:] != after[:-1]]]  # each chunk holding an OTHER character once
        begins, ends = breaks[after - 1] + 1, breaks[after]
        offsets, counts = cuts([joined[b:e] for b, e in zip(begins.tolist(), ends.tolist(), strict=True)])
        at = np.repeat(begins, counts) + offsets  # where a space goes (before that character)
        data = np.insert(data, at - np.searchsorted(dropped, at), np.uint8(32))
    return data, left


def _non_ascii(texts: Sequence[str]) -> list[int]:
    if all(map(str.isascii, texts)):
        return []
    return [i for i, t in enumerate(texts) if not t.isascii()]


def _blanked(texts: Sequence[str], rows: list[int]) -> list[str]:
    out = list(texts)
    for i in rows:
        out[i] = ""
    return out


def ascii_keys(c0: np.ndarray, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
    """The index of each trigram of 7-bit code points ``(c0, c1, c2)`` in a trigram model's ASCII table (2**21 ids)."""
    keys = c0 << 14
    keys |= c1 << 7
    keys |= c2
    return keys


def trigram_ids(text: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ids (``table[ascii_keys(c0, c1, c2)]``) of the windows of ``text`` inside a sentence, and the count of each.

    ``text``: :func:`trigram_text`'s bytes.
    """
    valid, lengths = unmarked_windows(np.flatnonzero(text == 0), len(text))
    codes = text.astype(np.int32)
    keys = ascii_keys(codes[:-2], codes[1:-1], codes[2:])
    return table[keys[valid]], lengths


def unmarked_windows(marks: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The trigrams of a text whose sentences (or chunks) are separated by marks: the windows that touch no mark.

    Returns which windows of a text of ``size`` characters touch none of the (sorted) places ``marks``, and how many
    such windows each stretch between marks has (``len(marks) + 1`` stretches: before the first mark, between two,
    after the last).
    """
    bounds = np.empty(len(marks) + 2, dtype=np.int64)
    bounds[0], bounds[1:-1], bounds[-1] = -1, marks, size
    counts = np.maximum(np.diff(bounds) - 3, 0)  # each stretch's characters, less 2
    valid = np.ones(max(size - 2, 0), dtype=bool)
    for shift in (0, 1, 2):  # the windows that hold a mark
        starts = marks - shift
        valid[starts[(starts >= 0) & (starts < len(valid))]] = False
    return valid, counts


def cut_places(words: list[str], counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where chunks are cut into their words (offsets back to back, counts per chunk), from each chunk's words."""
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    ends, some = np.cumsum(sizes), counts > 0
    firsts = (np.cumsum(counts) - counts)[some]  # each chunk's first word
    within = ends - np.repeat(ends[firsts] - sizes[firsts], counts[some])  # each word's end inside its chunk
    last = np.zeros(len(words), dtype=bool)
    last[np.cumsum(counts)[some] - 1] = True
    return within[~last], np.maximum(counts - 1, 0)


__all__ = ["ascii_keys", "byte_classes", "trigram_text", "trigram_ids", "unmarked_windows", "cut_places"]

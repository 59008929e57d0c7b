r"""Exact token ids of a whole batch at once, cached per chunk: the single-core fast path of every loader.

For the tokenizers paranmt_hf builds or loads, every token comes from one whitespace-separated chunk of the
normalised text, independently of the rest of the sentence (word: ``Split(WORD_SPLIT_PATTERN)`` never crosses
whitespace; sp: ``Metaspace`` makes each chunk ``"▁" + c``; subword: ``BertPreTokenizer`` + ``WordPiece`` per word;
trigram: each chunk's window ``" " + words + " "`` plus one trigram across each space; combinations: each
component's ids, shifted). So a batch is normalised at once, split into chunks by Python, each distinct chunk is
tokenised once by the tokenizer's own pre-tokenizer and model and cached, and the ids are gathered with NumPy
(trigrams looked up in NumPy; a unigram model's new chunks segmented by :mod:`.unigram_search`). A trigram model
alone reads its ASCII sentences straight off the batch's bytes (:mod:`.ascii_trigrams`: Python only for chunks
with punctuation).

Sentences this cannot reproduce exactly (``\x00`` or ``▁`` in the text, characters Python splits on but
``tokenizers`` does not, added-token strings), other tokenizer configurations and the ParaNMT-50M lookup rules take
the tokenizer itself, so the ids always equal the tokenizer's (``tests/test_featurization.py``). The model's
featuriser (``modeling/featurization_paranmt.py``) imports :func:`fast_token_ids` where paranmt_hf is installed; it
reads a tokenizer by what it saves, so any copy of the remote code gets it. Speeds: ``benchmarks/speed``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from itertools import chain, repeat
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from ..modeling.segmentation_paranmt import (
    WORD_SPLIT_PATTERN,
    Segmenters,
    _TokenizersSegmenter,
    _TrigramSegmenter,
)
from .ascii_trigrams import (
    PY_ONLY_SPACE,
    ascii_keys,
    byte_classes,
    cut_places,
    trigram_ids,
    trigram_text,
    unmarked_windows,
)
from .unigram_search import UnigramSegmenter, run_places

MARK = "\x00"
"""Chunk that separates the sentences of a batch (sentences containing it take the reference path)."""

Reference = Callable[[Sequence[str]], list[list[int]]]
FastIds = Callable[[Sequence[str]], tuple[np.ndarray, np.ndarray]]
_PY_ONLY_SPACE = re.compile(f"[{re.escape(PY_ONLY_SPACE)}]")  # str.split() splits on these, ``\s`` does not
_BATCHED_UNIGRAM_MIN = 256  # new unigram words in a batch from which the batched search is faster than the model
_MAX_ENTRIES = 500_000  # cached chunks (about 100 MB) before the cache starts over (``ChunkStore.max_entries``)
_SPLIT = {"type": "Split", "pattern": {"Regex": WORD_SPLIT_PATTERN}, "behavior": "Removed", "invert": True}
_METASPACE = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
_SP_NORMALIZER = [
    {"type": "NFKC"},
    {"type": "Lowercase"},
    {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
    {"type": "Strip", "strip_left": True, "strip_right": True},
]


def lengths_to_offsets(lengths: np.ndarray) -> np.ndarray:
    """Start offset of each sentence's ids in the flat id array, from the sentence lengths."""
    offsets = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return offsets


def ids_to_flat(ids: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence id lists as (flat int64 ids, lengths)."""
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter((t for x in ids for t in x), dtype=np.int64, count=int(lengths.sum()))
    return flat, lengths


class _Chunked:
    """Shared machinery: normalise a batch, split it into chunks, find sentences for the reference path.

    Args:
        normalize: the tokenizer's normaliser (exact on any text).
        lowercase: whether ``str.lower`` equals ``normalize`` on ASCII text made of ``safe`` characters.
        added: added-token strings (a sentence containing one takes the reference path).
        reference: exact ids of a list of sentences.
    """

    def __init__(
        self, normalize: Callable[[str], str], lowercase: bool, added: Sequence[str], reference: Reference
    ) -> None:
        self.normalize = normalize
        self.lowercase = lowercase
        self.added = [a for a in added if a]
        self.reference = reference
        fold = str.lower if lowercase else str
        # ASCII characters on which the shortcut (``fold`` + ``str.split``) differs from the normaliser (e.g. the
        # control characters that BertNormalizer deletes): sentences holding one are normalised by the normaliser.
        unsafe = [c for c in map(chr, range(128)) if normalize(f"a{c}b").split() != fold(f"a{c}b").split()]
        self.unsafe_ascii_chars = unsafe
        self._unsafe_ascii = re.compile("[" + "".join(map(re.escape, unsafe)) + "]") if unsafe else None

    def _ascii_shortcut(self, text: str) -> bool:
        return text.isascii() and (self._unsafe_ascii is None or not self._unsafe_ascii.search(text))

    def _fold(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def _bad(self, texts: Sequence[str], norms: Sequence[str], added: Sequence[str]) -> list[int]:
        def bad(raw: str, norm: str) -> bool:
            special = any(a in raw or a in norm for a in added)
            return special or MARK in raw or "▁" in norm or bool(_PY_ONLY_SPACE.search(norm))

        return [i for i, (raw, norm) in enumerate(zip(texts, norms, strict=True)) if bad(raw, norm)]

    def _normalize_each(self, texts: Sequence[str], raw: str) -> list[str]:
        """Each text normalised: ``_fold`` where the ASCII shortcut is exact, the normaliser elsewhere."""
        fold, normalize = (str.lower if self.lowercase else str), self.normalize
        unsafe = self._unsafe_ascii
        if unsafe is not None and unsafe.search(raw):
            return [fold(t) if self._ascii_shortcut(t) else normalize(t) for t in texts]
        return [fold(t) if t.isascii() else normalize(t) for t in texts]

    def chunks(self, texts: Sequence[str], added: Sequence[str] | None = None) -> tuple[list[str], list[int]]:
        """Chunks of the whole batch (``MARK`` between sentences) and the sentences left to the reference path.

        ``added``: strings that send a sentence to the reference path (default: this tokenizer's added tokens).
        """
        added = self.added if added is None else added
        raw = f" {MARK} ".join(texts)
        if self._ascii_shortcut(raw):
            norm = self._fold(raw)
            clean = raw.count(MARK) == len(texts) - 1 and not _PY_ONLY_SPACE.search(raw)
            clean = clean and not any(a in raw or a in norm for a in added)
            if clean:
                return norm.split(), []
            norms = [self._fold(t) for t in texts]
        else:
            norms = self._normalize_each(texts, raw)
            joined = f" {MARK} ".join(norms)
            clean = raw.count(MARK) == len(texts) - 1 and "▁" not in joined and not _PY_ONLY_SPACE.search(joined)
            if clean and not any(a in raw or a in joined for a in added):
                return joined.split(), []
        bad = self._bad(texts, norms, added)
        for i in bad:
            norms[i] = ""
        return f" {MARK} ".join(norms).split(), bad

    def patch(
        self, texts: Sequence[str], flat: np.ndarray, lengths: np.ndarray, bad: list[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Put the reference ids of the ``bad`` sentences in place of whatever ids they got so far."""
        if not bad:
            return flat, lengths
        bad = sorted(bad)
        return replace_rows(flat, lengths, bad, *ids_to_flat(self.reference([texts[i] for i in bad])))


def replace_rows(
    flat: np.ndarray, lengths: np.ndarray, rows: list[int], new_flat: np.ndarray, new_lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sentences ``rows`` (ascending) of a batch's (flat ids, lengths) replaced by ``new_flat`` / ``new_lengths``.

    The ids of the sentences between two replaced ones are copied as one slice (no per-sentence arrays).
    """
    ends = np.cumsum(lengths)
    starts = ends - lengths
    new_ends = np.cumsum(new_lengths)
    pieces: list[np.ndarray] = []
    cursor = 0
    for k, i in enumerate(rows):
        pieces.append(flat[cursor : starts[i]])
        pieces.append(new_flat[new_ends[k] - new_lengths[k] : new_ends[k]])
        cursor = int(ends[i])
    pieces.append(flat[cursor:])
    lengths = lengths.copy()
    lengths[rows] = new_lengths
    return np.concatenate(pieces), lengths


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array``, or a copy of it with room for at least ``size`` items (twice its length at least)."""
    return array if size <= len(array) else np.resize(array, max(2 * len(array), size))


class Ragged:
    """Int64 values of numbered entries: each entry's values back to back in one flat array, grown by doubling.

    The one layout of whatever a chunk cache keeps a varying number of per chunk (its token ids, its word cuts).

    Args:
        entries: how many empty entries it starts with (e.g. the sentence marker, entry 0).
    """

    def __init__(self, entries: int = 0) -> None:
        self.starts = np.zeros(max(1024, entries), dtype=np.int64)  # entry -> its first place in ``values``
        self.counts = np.zeros(len(self.starts), dtype=np.int64)  # entry -> its number of values
        self.values = np.zeros(4096, dtype=np.int64)
        self.entries, self.used = entries, 0  # entries so far; places of ``values`` in use

    def append(self, values: np.ndarray, counts: np.ndarray) -> None:
        """Add the entries ``entries .. entries + len(counts) - 1``, whose values are ``values`` back to back."""
        n, k, u = self.entries, len(counts), self.used
        self.starts, self.counts = _grown(self.starts, n + k), _grown(self.counts, n + k)
        self.values = _grown(self.values, u + len(values))
        self.counts[n : n + k] = counts
        self.starts[n : n + k] = u + np.cumsum(counts) - counts
        self.values[u : u + len(values)] = values
        self.entries, self.used = n + k, u + len(values)

    def gather(self, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The values of the entries ``ks`` back to back, and how many each entry has."""
        counts = self.counts[ks]
        return self.values[run_places(self.starts[ks], counts)], counts


class ChunkStore(_Chunked):
    """A cache of per-chunk token ids (one entry per distinct chunk, in :attr:`chunk_ids`)."""

    generation = 0
    """How many times the cache started over (caches of values per entry, e.g. summed rows, follow it)."""
    max_entries = _MAX_ENTRIES
    """Cached chunks before the cache starts over (lowered where values are cached per entry too)."""

    def clear(self) -> None:
        """Forget every cached chunk."""
        self.generation += 1
        self.index: dict[str, int] = {MARK: 0}  # chunk -> entry; entry 0 is the sentence marker (no ids)
        self.chunk_ids = Ragged(entries=1)  # entry -> the chunk's token ids

    @property
    def entries(self) -> int:
        """Cached chunks so far, counting the sentence marker (entry 0)."""
        return self.chunk_ids.entries

    def _add(self, new: list[str], flat: np.ndarray, lens: np.ndarray) -> None:
        n = self.entries
        self.chunk_ids.append(flat, lens)
        self.index.update(zip(new, range(n, n + len(new)), strict=True))

    words_key: str | None = None
    """Identifies how chunks split into words (parts with equal keys can share :meth:`words`); None: no words."""

    def words(self, new: list[str]) -> tuple[list[str], np.ndarray] | None:
        """The words of each new chunk: (all words in order, words per chunk), or None when not split in words."""
        return None

    def ids_from_words(self, new: list[str], words: tuple[list[str], np.ndarray] | None) -> tuple[np.ndarray, ...]:
        """Ids of the new chunks back to back (int64) and the number of ids of each."""
        raise NotImplementedError

    def ids_from_entries(self, texts: Sequence[str], ks: np.ndarray, bad: list[int]) -> tuple[np.ndarray, ...]:
        """Flat ids and per-sentence lengths of a batch whose chunks have the cache entries ``ks``."""
        raise NotImplementedError

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat ids (int64) and per-sentence lengths."""
        chunks, bad = self.chunks(texts)
        return self.ids_from_entries(texts, entries((self,), chunks), bad)

    @property
    def parts(self) -> list[ChunkStore]:
        """The component caches (this one)."""
        return [self]

    def chunk_plan(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """The cache entry of each chunk of the batch (``0`` between sentences; new chunks get tokenised) and the rows.

        The rows are the sentences whose ids do not follow from their chunks' entries (the reference path's).
        """
        chunks, bad = self.chunks(texts)
        return entries((self,), chunks), bad

    def _gather(self, ks: np.ndarray, extra: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids of the entries ``ks`` back to back, leaving ``extra[e]`` free slots after entry ``e``.

        Returns (flat ids, the position of each entry's first free slot, per-sentence lengths).
        """
        ids, k_lens = self.chunk_ids.gather(ks)
        if extra is None:
            ends = np.cumsum(k_lens)
            return ids, ends, _sentence_lengths(ends, ks)
        out_lens = k_lens + extra
        ends = np.cumsum(out_lens)
        out_starts = ends - out_lens
        flat = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        flat[run_places(out_starts, k_lens)] = ids
        return flat, out_starts + k_lens, _sentence_lengths(ends, ks)


def _sentence_lengths(ends: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Per-sentence lengths of a flat layout whose entries ``ks`` (``0`` between sentences) end at ``ends``."""
    marks = ends[ks == 0]  # where each sentence but the last ends
    bounds = np.empty(len(marks) + 2, dtype=np.int64)
    bounds[0], bounds[1:-1], bounds[-1] = 0, marks, ends[-1] if len(ends) else 0
    return bounds[1:] - bounds[:-1]


class _ChunkIds(ChunkStore):
    """Cached, batched ids of a ``tokenizers`` tokenizer whose tokens never cross whitespace.

    ``mode``: ``"lookup"`` (word level: a pre-token is one vocabulary entry), ``"metaspace"`` (unigram: a chunk is
    the pre-token ``"▁" + chunk``) or ``"model"`` (e.g. WordPiece: each pre-token is split by the model).
    """

    def __init__(self, backend: Any, config: dict[str, Any], mode: str, reference: Reference) -> None:
        spec = config.get("normalizer")
        steps = spec["normalizers"] if spec and spec["type"] == "Sequence" else [spec] if spec else []
        normalize = backend.normalizer.normalize_str if backend.normalizer else str
        lowercase = {"type": "Lowercase"} in steps or any(
            s.get("type") == "BertNormalizer" and s.get("lowercase") for s in steps
        )
        added = [t["content"] for t in config.get("added_tokens", [])]
        super().__init__(normalize, lowercase, added, reference)
        self.chunk_key = json.dumps(steps, sort_keys=True)
        pre = config.get("pre_tokenizer")
        self.words_key = None if mode == "metaspace" else json.dumps(pre, sort_keys=True)
        self.backend = backend
        self.mode = mode
        model = config["model"]
        self.vocab: dict[str, int] = model.get("vocab", {}) if mode in ("lookup", "model") else {}
        unk = model.get("unk_token")
        self.unk = self.vocab.get(unk) if unk is not None and mode == "lookup" else None
        # WordPiece: a word that is itself a vocabulary entry (and not too long) is that one piece (greedy longest
        # match from the start takes the whole word first)
        self.whole_word_max = int(model.get("max_input_chars_per_word", 100)) if model["type"] == "WordPiece" else 0
        # unigram: the model's pieces and scores, for the batched best-path search (built on first use)
        self._unigram_vocab = model.get("vocab") if mode == "metaspace" else None
        self._unigram: UnigramSegmenter | None = None
        self.clear()

    def words(self, new: list[str]) -> tuple[list[str], np.ndarray] | None:
        """The pre-tokens of each new chunk (None for unigram: a chunk is its own pre-token)."""
        if self.mode == "metaspace":
            return None
        rule = ASCII_WORDS["split" if self.mode == "lookup" else "bert"]
        return _words_of(self.backend.pre_tokenizer, new, rule)

    def ids_from_words(self, new: list[str], words: tuple[list[str], np.ndarray] | None) -> tuple[np.ndarray, ...]:
        """Ids of the new chunks back to back (int64) and the number of ids of each (no per-chunk lists)."""
        tokenize = self.backend.model.tokenize
        if words is None:  # unigram: the chunk has no space and no "▁": its only pre-token is "▁" + chunk
            return self._unigram_ids(["▁" + c for c in new])
        words, counts = words
        if self.mode == "model":
            flat, per_word = self._pieces(words)
            owner = np.repeat(np.arange(len(new)), counts)
            return flat, np.bincount(owner, weights=per_word, minlength=len(new)).astype(np.int64)
        get, unk = self.vocab.get, self.unk
        ids = [get(word, unk) for word in words]
        if None in ids:  # no unk token: let the model raise its own error
            ids = [i if i is not None else tokenize(w)[0].id for i, w in zip(ids, words, strict=True)]
        return np.asarray(ids, dtype=np.int64), counts

    def _model_ids(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``backend.model.tokenize`` of each word (none holds whitespace): (ids back to back, counts).

        The model alone, word after word: what the tokenizer runs on each pre-token, without the split strings,
        alignments and ``Encoding`` that one ``encode`` of the words joined by spaces would build around it.
        """
        if not words:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        pieces = list(map(self.backend.model.tokenize, words))
        counts = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        ids = np.fromiter((t.id for t in chain.from_iterable(pieces)), dtype=np.int64, count=int(counts.sum()))
        return ids, counts

    def _unigram_ids(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Unigram ids of each word (none holds whitespace), as ``_model_ids``: many words at once in NumPy.

        :mod:`.unigram_search` runs the model's own best-path search on all of them; the words it does not cover, and
        small batches (where calling the model word by word is as fast), go to the model.
        """
        if len(words) < _BATCHED_UNIGRAM_MIN or self._unigram_vocab is None:
            return self._model_ids(words)
        if self._unigram is None:
            self._unigram = UnigramSegmenter(self._unigram_vocab)
        return self._unigram.segment(words, self._model_ids)

    def _pieces(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """WordPiece ids of every word back to back and the number of pieces of each.

        A word that is itself a vocabulary entry (and not too long) is that one piece (greedy longest match from the
        start takes the whole word first); the other words go through the model in one call.
        """
        get, longest = self.vocab.get, self.whole_word_max
        whole = np.fromiter(map(get, words, repeat(-1)), dtype=np.int64, count=len(words))
        if words and max(map(len, words)) > longest:
            whole[[i for i, w in enumerate(words) if len(w) > longest]] = -1
        hard = np.flatnonzero(whole < 0)
        ids, sizes = self._model_ids([words[i] for i in hard.tolist()])
        per_word = np.ones(len(words), dtype=np.int64)
        per_word[hard] = sizes
        ends = np.cumsum(per_word)
        starts = ends - per_word
        flat = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        simple = whole >= 0
        flat[starts[simple]] = whole[simple]
        flat[run_places(starts[hard], sizes)] = ids
        return flat, per_word

    def ids_from_entries(self, texts: Sequence[str], ks: np.ndarray, bad: list[int]) -> tuple[np.ndarray, ...]:
        """Flat ids (int64) and per-sentence lengths of a batch whose chunks have the cache entries ``ks``."""
        flat, _, lengths = self._gather(ks)
        return self.patch(texts, flat, lengths, bad)


class TrigramIds(ChunkStore):
    """Batched character-trigram ids of a trigram segmenter, exact to its ``ids``.

    The trigram text of a sentence is ``" " + x1 + " " + x2 + ... + " "`` where ``xk`` is chunk k's words joined by
    spaces. Its trigrams, in order, are those of each chunk's window ``" " + xk + " "`` (cached per chunk) with one
    trigram between consecutive windows: ``xk[-1] + " " + x(k+1)[0]``.
    """

    def __init__(self, segmenter: _TrigramSegmenter, reference: Reference) -> None:
        super().__init__(segmenter._lower.normalize_str, True, [], reference)
        self.chunk_key = json.dumps([{"type": "Lowercase"}], sort_keys=True)
        self.words_key = json.dumps(_SPLIT, sort_keys=True)  # the word split of trigram segmenters
        self.segmenter = segmenter
        self.unk = segmenter.unk_id
        self.ascii_table = np.full(1 << 21, self.unk, dtype=np.int64)
        trigrams = [(token, i) for token, i in segmenter.index.items() if len(token) == 3]  # not [PAD]/[UNK]
        text = "".join(token for token, _ in trigrams)
        c = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64).reshape(-1, 3)
        ids = np.fromiter((i for _, i in trigrams), dtype=np.int64, count=len(trigrams))
        small = c.max(axis=1, initial=0) < 128
        self.ascii_table[ascii_keys(c[small, 0], c[small, 1], c[small, 2])] = ids[small]
        keys = (c[~small, 0] << 42) | (c[~small, 1] << 21) | c[~small, 2]
        order = np.argsort(keys, kind="stable")
        self.keys = np.append(keys[order], np.iinfo(np.int64).max)
        self.key_ids = np.append(ids[~small][order], self.unk)
        self.classes = byte_classes(self.unsafe_ascii_chars)
        self.clear()

    def clear(self) -> None:
        """Forget every cached chunk."""
        super().clear()
        self.first = np.zeros(1024, dtype=np.int64)  # entry -> code point of the first character of its words
        self.last = np.zeros(1024, dtype=np.int64)  # ... and of the last
        self.cuts = Ragged(entries=1)  # entry -> where the chunk is cut into its words (see ``_cuts``)

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat ids (int64) and per-sentence lengths.

        ASCII sentences straight off the batch's bytes (:mod:`.ascii_trigrams`), the others chunk by chunk.
        """
        if not texts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        text, left = trigram_text(texts, self.classes, self._cuts)
        flat, lengths = trigram_ids(text, self.ascii_table)
        if not left:
            return flat, lengths
        return replace_rows(flat, lengths, left, *super().__call__([texts[i] for i in left]))

    def _cuts(self, chunks: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Where each ASCII chunk is cut into its words (offsets inside it back to back, and how many per chunk)."""
        ks = entries((self,), chunks)  # first: it may start the cache over, replacing ``self.cuts``
        return self.cuts.gather(ks)

    def words(self, new: list[str]) -> tuple[list[str], np.ndarray] | None:
        """The words of each new chunk (``WORD_SPLIT_PATTERN``)."""
        return _words_of(self.segmenter._split, new, ASCII_WORDS["split"])

    def ids_from_words(self, new: list[str], words: tuple[list[str], np.ndarray] | None) -> tuple[np.ndarray, ...]:
        """Trigram ids of each new chunk's window ``" " + words + " "`` (and its first and last character)."""
        words, counts = words if words is not None else self.words(new)
        ends = np.cumsum(counts).tolist()
        joined = [chunk if n == 1 and chunk == words[e - 1] else " ".join(words[e - n : e])
                  for chunk, n, e in zip(new, counts.tolist(), ends, strict=True)]
        text = MARK + MARK.join(f" {x} " for x in joined) + MARK
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        flat, lens = self.lookup(codes, len(new))
        sizes = np.fromiter(map(len, joined), dtype=np.int64, count=len(joined))
        ends = np.cumsum(sizes + 3)  # after each window " x " and its MARK
        n, k = self.entries, len(new)
        self.first, self.last = _grown(self.first, n + k), _grown(self.last, n + k)
        self.first[n : n + k] = codes[ends - sizes - 1]
        self.last[n : n + k] = codes[ends - 2]
        self.cuts.append(*cut_places(words, counts))
        return flat, lens

    def ids(self, c0: np.ndarray, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        """Ids of the trigrams with code points ``(c0, c1, c2)`` (unknown trigrams: the unknown id)."""
        small = (c0 < 128) & (c1 < 128) & (c2 < 128)
        ids = self.ascii_table[np.where(small, ascii_keys(c0, c1, c2), 0)]
        if not small.all():
            big = np.flatnonzero(~small)
            keys = (c0[big] << 42) | (c1[big] << 21) | c2[big]
            pos = np.searchsorted(self.keys, keys)
            ids[big] = np.where(self.keys[pos] == keys, self.key_ids[pos], self.unk)
        return ids

    def lookup(self, codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids of every trigram of the code points that touches no marker, and the count per marked segment."""
        valid, counts = unmarked_windows(np.flatnonzero(codes == 0), len(codes))
        ids = self.ids(codes[:-2][valid], codes[1:-1][valid], codes[2:][valid])
        return ids, counts[1 : n + 1]  # the n segments between the leading and the trailing marker

    def ids_from_entries(self, texts: Sequence[str], ks: np.ndarray, bad: list[int]) -> tuple[np.ndarray, ...]:
        """Flat trigram ids (int64) and per-sentence lengths of a batch whose chunks have the entries ``ks``."""
        is_chunk = ks != 0
        between = np.zeros(len(ks), dtype=np.int64)  # a trigram after entry e when e and e+1 are chunks
        between[:-1] = is_chunk[:-1] & is_chunk[1:]
        flat, free, lengths = self._gather(ks, between)
        pairs = np.flatnonzero(between)
        space = np.full(len(pairs), 32, dtype=np.int64)
        flat[free[pairs]] = self.ids(self.last[ks[pairs]], space, self.first[ks[pairs + 1]])
        wordless = is_chunk & (self.chunk_ids.counts[ks] == 0)  # no words (never expected): reference path
        if wordless.any():
            sentence = np.cumsum(~is_chunk)[wordless]
            bad = sorted(set(bad) | set(sentence.tolist()))
        return self.patch(texts, flat, lengths, bad)


class CombinedIds:
    """Ids of a combination: every component's fast ids, shifted by its offset, one component after the other.

    Components that all lower-case (or all keep case) share one chunking of the batch (the first component's) and one
    chunk cache index (their caches hold the same entries in the same order); those that also split chunks into
    words alike share the word split of new chunks. Where a component normalises differently from the first (e.g.
    BertNormalizer's accent stripping next to a trigram's plain lower-casing), the shared chunks are its own only
    for ASCII sentences free of either's special characters: its other sentences are chunked by its own normaliser,
    still through the one shared cache (an entry holds each part's ids of that chunk string).
    """

    def __init__(self, parts: list[ChunkStore], offsets: list[int]) -> None:
        self.parts = parts
        self.offsets = offsets
        lead = parts[0]
        self.shared = len({part.lowercase for part in parts}) == 1
        self.added = sorted({a for part in parts for a in part.added})
        self.same = [part.chunk_key == lead.chunk_key for part in parts]
        unsafe = sorted({c for part in parts for c in part.unsafe_ascii_chars})
        self._unsafe = re.compile("[" + "".join(map(re.escape, unsafe)) + "]") if unsafe else None

    def _differ(self, texts: Sequence[str]) -> list[int]:
        """Sentences whose chunks under another component's normaliser may differ from the shared ones."""
        if all(self.same):
            return []

        # the sentences that are not ASCII or hold an unsafe character, found in one pass over the joined batch
        joined = "\n".join(texts)
        if joined.isascii() and (self._unsafe is None or not self._unsafe.search(joined)):
            return []
        differ = set(np.flatnonzero(~np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))).tolist())
        if self._unsafe is not None:
            lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
            starts = np.cumsum(lengths + 1) - (lengths + 1)
            at = np.fromiter((m.start() for m in self._unsafe.finditer(joined)), dtype=np.int64)
            owner = np.searchsorted(starts, at, side="right") - 1
            differ.update(owner[at < starts[owner] + lengths[owner]].tolist())  # not the separators
        return sorted(differ)

    def clear(self) -> None:
        """Forget every cached chunk of every component."""
        for part in self.parts:
            part.clear()

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat ids (int64) and per-sentence lengths over all components."""
        flat, lengths, _ = self.with_component_lengths(texts)
        return flat, lengths

    def chunk_plan(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int]] | None:
        """As ``ChunkStore.chunk_plan``, over the shared chunking of every component (None when there is none).

        The sentences left out are those of the reference path and those that another component chunks otherwise.
        """
        if not self.shared:
            return None
        chunks, bad = self.parts[0].chunks(texts, self.added)
        ks = entries(self.parts, chunks)
        return ks, sorted(set(bad).union(self._differ(texts)))

    def with_component_lengths(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flat ids, per-sentence lengths and the ``[sentences, components]`` number of ids of each component."""
        if self.shared:  # one chunking and one chunk cache index for every part
            chunks, bad = self.parts[0].chunks(texts, self.added)
            ks = entries(self.parts, chunks)
            differ = self._differ(texts)
            own_rows = set(differ)
            results = [part.ids_from_entries(texts, ks, bad if same else [i for i in bad if i not in own_rows])
                       for part, same in zip(self.parts, self.same, strict=True)]
            if differ:  # (after every part used ``ks``: a new entries() call may start the caches over)
                sub = [texts[i] for i in differ]
                for k, (part, same) in enumerate(zip(self.parts, self.same, strict=True)):
                    if same:
                        continue
                    # the sentences this part normalises otherwise: its own chunks, in the one shared cache (an
                    # entry is each part's ids of that chunk string, whichever normalisation made it)
                    sub_chunks, sub_bad = part.chunks(sub)
                    own = part.ids_from_entries(sub, entries(self.parts, sub_chunks), sub_bad)
                    results[k] = replace_rows(*results[k], differ, *own)
        else:
            results = [part(texts) for part in self.parts]
        lengths = results[0][1].astype(np.int64)
        for _, lens in results[1:]:
            lengths += lens
        flat = np.empty(int(lengths.sum()), dtype=np.int64)
        base = lengths_to_offsets(lengths)  # where each sentence starts in the output
        for (ids, lens), shift in zip(results, self.offsets, strict=True):
            flat[run_places(base, lens)] = ids + shift if shift else ids  # each sentence's ids from its start
            base = base + lens
        return flat, lengths, np.stack([lens for _, lens in results], axis=1)


def entries(parts: Sequence[ChunkStore], chunks: list[str]) -> np.ndarray:
    """The cache entry of every chunk in ``parts[0]``'s index, tokenising new chunks into every part's cache.

    Every part's cache gets the same new chunks in the same order, so the entries of ``parts[0]`` index them all.
    """
    lead = parts[0]
    if lead.entries > min(_MAX_ENTRIES, lead.max_entries):
        for part in parts:
            part.clear()
    index = lead.index
    ks = np.fromiter(map(index.get, chunks, repeat(-1)), dtype=np.int64, count=len(chunks))
    missing = np.flatnonzero(ks < 0).tolist()
    if missing:
        unseen = [chunks[i] for i in missing]
        new = list(dict.fromkeys(unseen))
        shared = lead.words(new) if len({part.words_key for part in parts}) == 1 else None
        for part in parts:
            words = shared if shared is not None else part.words(new)
            part._add(new, *part.ids_from_words(new, words))
        ks[missing] = np.fromiter(map(index.__getitem__, unseen), dtype=np.int64, count=len(unseen))
    return ks


ASCII_WORDS = {
    "split": re.compile(WORD_SPLIT_PATTERN, re.ASCII),
    "bert": re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]", re.ASCII),
}
"""Python regexes that split an ASCII chunk exactly as the ``tokenizers`` pre-tokenizer does (``WORD_SPLIT_PATTERN``;
``BertPreTokenizer``: letter/digit runs, every other character alone): ``re`` and ``tokenizers``' Oniguruma agree on
``\\w``, ``\b`` and look-ahead for ASCII text, and Python's regex avoids building offset tuples per word."""


def _by_line(ascii_words: re.Pattern[str]) -> re.Pattern[str]:
    """``ascii_words`` with a newline alternative first (compiled once).

    Over chunks joined by newlines it finds each chunk's words in order and a newline after each chunk: no word
    pattern here matches a newline, and a newline is a word boundary as the end of a chunk is.
    """
    found = _BY_LINE.get(ascii_words)
    if found is None:
        found = _BY_LINE[ascii_words] = re.compile("\\n|(?:" + ascii_words.pattern + ")", ascii_words.flags)
    return found


_BY_LINE: dict[re.Pattern[str], re.Pattern[str]] = {}


def _words_of(
    pre_tokenizer: Any, chunks: list[str], ascii_words: re.Pattern[str] | None = None
) -> tuple[list[str], np.ndarray]:
    """The pre-tokens of each chunk: (all words in order, the number of words of each chunk).

    ASCII chunks are split by ``ascii_words`` (the pre-tokenizer's own rule as a Python regex, see
    :data:`ASCII_WORDS`), all of them in one pass over the chunks joined by newlines; without it, a chunk of ASCII
    letters and digits only is one word (for every pre-tokenizer used here: no space, no punctuation). The other
    chunks go through the pre-tokenizer, together.
    """
    n = len(chunks)
    counts = np.ones(n, dtype=np.int64)
    easy_mask = np.fromiter(map(str.isascii, chunks), dtype=bool, count=n)
    if ascii_words is None:
        easy_mask &= np.fromiter(map(str.isalnum, chunks), dtype=bool, count=n)
    every_easy = bool(easy_mask.all())  # (the usual case: no index arrays to build)
    easy = np.arange(n) if every_easy else np.flatnonzero(easy_mask)
    easy_chunks = chunks if every_easy else [chunks[i] for i in easy.tolist()]
    if ascii_words is None:
        words = list(easy_chunks)
    else:
        found = _by_line(ascii_words).findall("\n".join(easy_chunks) + "\n")
        ends = np.flatnonzero(np.fromiter(map("\n".__eq__, found), dtype=bool, count=len(found)))
        per_chunk = np.empty(len(ends), dtype=np.int64)  # words between one newline and the next
        per_chunk[:1] = ends[:1]
        np.subtract(ends[1:], ends[:-1] + 1, out=per_chunk[1:])
        counts[easy] = per_chunk
        words = [w for w in found if w != "\n"]
    if every_easy:
        return words, counts
    hard = np.flatnonzero(~easy_mask)
    hard_chunks = [chunks[i] for i in hard.tolist()]
    pieces = pre_tokenizer.pre_tokenize_str("\n".join(hard_chunks))
    starts = np.cumsum([0] + [len(c) + 1 for c in hard_chunks[:-1]])
    begins = np.fromiter((b for _, (b, _) in pieces), dtype=np.int64, count=len(pieces))
    owner = np.searchsorted(starts, begins, side="right") - 1  # index into ``hard``
    per_hard = np.bincount(owner, minlength=len(hard))
    counts[hard] = per_hard
    every = words + [w for w, _ in pieces]  # the easy chunks' words, then the hard ones': put in chunk order
    chunk_of = np.concatenate([np.repeat(easy, counts[easy]), np.repeat(hard, per_hard)])
    return [every[i] for i in np.argsort(chunk_of, kind="stable").tolist()], counts


def _tokenizers_fast_ids(backend: Any, reference: Reference) -> _ChunkIds | None:
    """The fast path of a ``tokenizers.Tokenizer``, or None when its configuration is not one listed above."""
    config = json.loads(backend.to_str())
    if config.get("truncation") or config.get("padding"):
        return None
    model, pre, norm = config["model"]["type"], config.get("pre_tokenizer"), config.get("normalizer")
    steps = norm["normalizers"] if norm and norm["type"] == "Sequence" else [norm] if norm else []
    if model == "WordLevel" and pre == _SPLIT and steps in ([], [{"type": "Lowercase"}]):
        return _ChunkIds(backend, config, "lookup", reference)
    if model == "Unigram" and pre == _METASPACE and steps in (_SP_NORMALIZER, _SP_NORMALIZER[:1] + _SP_NORMALIZER[2:]):
        return _ChunkIds(backend, config, "metaspace", reference)
    if (
        model == "WordPiece"
        and pre == {"type": "BertPreTokenizer"}
        and len(steps) == 1
        and steps[0]["type"] == "BertNormalizer"
    ):
        return _ChunkIds(backend, config, "model", reference)
    return None


def _segmenters(tokenizer: Any) -> Segmenters | None:
    """The installed segmenters of a ``ParaNMTTokenizer`` (any copy: from its saved components), or ``Segmenters``."""
    if isinstance(tokenizer, Segmenters):
        return tokenizer
    own = getattr(tokenizer, "segmented", None)
    if isinstance(own, Segmenters):
        return own
    specs = getattr(tokenizer, "component_specs", None)
    return Segmenters(specs()) if callable(specs) else None


def fast_token_ids(tokenizer: Any) -> FastIds | None:
    """The batched fast path for ``tokenizer``, or None when it is not one of the configurations above.

    ``tokenizer``: a ``ParaNMTTokenizer`` (from paranmt_hf or from a model folder's remote code) or ``Segmenters``, a
    transformers fast tokenizer (its ``backend_tokenizer``) or a ``tokenizers.Tokenizer``. The result maps a list of
    texts to (flat int64 ids, per-text lengths): the tokenizer's ids without special tokens (all components, shifted).
    """
    segmented = _segmenters(tokenizer)
    if segmented is not None:
        parts: list[ChunkStore] = []
        for seg in segmented.segmenters:
            seg_reference: Reference = lambda texts, seg=seg: [seg.ids(t) for t in texts]  # noqa: E731
            if isinstance(seg, _TrigramSegmenter) and seg.lookup == "split":
                part: ChunkStore | None = TrigramIds(seg, seg_reference)
            elif isinstance(seg, _TokenizersSegmenter):
                part = _tokenizers_fast_ids(seg.tokenizer, seg_reference)
            else:  # the ParaNMT-50M lookup rules: the fast path does not reproduce them
                part = None
            if part is None:
                return None
            parts.append(part)
        return parts[0] if len(parts) == 1 else CombinedIds(parts, segmented.offsets)
    backend = tokenizer if isinstance(tokenizer, Tokenizer) else getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None

    def reference(texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in backend.encode_batch_fast(list(texts), add_special_tokens=False)]

    return _tokenizers_fast_ids(backend, reference)


__all__ = ["fast_token_ids", "lengths_to_offsets", "ids_to_flat", "replace_rows", "entries", "ChunkStore",
           "TrigramIds", "CombinedIds", "FastIds", "MARK"]

r"""Exact, batched, cached token ids for ``ParaNMTEncoder.encode``: the single-core fast path.

``tokenizers`` spends most of its time per sentence (normalising, regex splitting, building ``Encoding`` objects).
For the tokenizers paranmt_hf builds, every token comes from one whitespace-separated chunk of the normalised text,
independently of the rest of the sentence:

- word: lower-case, then ``Split(WORD_SPLIT_PATTERN)``; no match crosses whitespace, no pattern looks behind;
- sp: NFKC + lower-case + whitespace runs -> ``" "`` + strip, then ``Metaspace(prepend_scheme="always")``: every
  space-separated chunk ``c`` becomes the pre-token ``"▁" + c``;
- trigram: the trigram text ``" " + " ".join(words) + " "`` is the space-join of the chunks' word strings.

So a batch is normalised at once (``str.lower`` for ASCII text, the tokenizer's own normalizer otherwise), joined
with a marker chunk between sentences and split into chunks by Python; each distinct chunk is tokenised once by the
tokenizer's own pre-tokenizer and model and cached; the ids of a batch are then gathered with NumPy. Trigrams are
looked up with NumPy too (a direct table for ASCII trigrams, a sorted-key search for the rest). Sentences this
cannot reproduce exactly (``\x00`` or ``▁`` in the text, the characters Python splits on but ``tokenizers`` does
not, added-token strings) take the reference path, so the ids always equal the tokenizer's
(``tests/test_encoder_speedpath.py``); other tokenizer configurations do not use this module at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .modeling.tokenization_paranmt import WORD_SPLIT_PATTERN, ParaNMTTokenizer, _TrigramSegmenter

MARK = "\x00"
"""Chunk that separates the sentences of a batch (sentences containing it take the reference path)."""

Reference = Callable[[Sequence[str]], list[list[int]]]
_PY_ONLY_SPACE = re.compile("[\x1c-\x1f]")  # str.split() splits on these, the tokenizers' ``\s`` does not
_MAX_ENTRIES = 500_000  # cached chunks (about 100 MB) before the cache starts over
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


class _Chunked:
    """Shared machinery: normalise a batch, split it into chunks, find sentences for the reference path."""

    def __init__(
        self, normalize: Callable[[str], str], lowercase: bool, added: Sequence[str], reference: Reference
    ) -> None:
        self.normalize = normalize
        self.lowercase = lowercase
        self.added = [a for a in added if a]
        self.reference = reference

    def _bad(self, texts: Sequence[str], norms: Sequence[str]) -> list[int]:
        def bad(raw: str, norm: str) -> bool:
            special = any(a in raw or a in norm for a in self.added)
            return special or MARK in raw or "▁" in norm or bool(_PY_ONLY_SPACE.search(norm))

        return [i for i, (raw, norm) in enumerate(zip(texts, norms, strict=True)) if bad(raw, norm)]

    def chunks(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """Chunks of the whole batch (``MARK`` between sentences) and the sentences left to the reference path."""
        raw = f" {MARK} ".join(texts)
        if raw.isascii():
            norm = raw.lower() if self.lowercase else raw
            clean = raw.count(MARK) == len(texts) - 1 and not _PY_ONLY_SPACE.search(raw)
            clean = clean and not any(a in raw or a in norm for a in self.added)
            if clean:
                return norm.split(), []
            norms = [t.lower() if self.lowercase else t for t in texts]
        else:
            norms = [(t.lower() if self.lowercase else t) if t.isascii() else self.normalize(t) for t in texts]
            joined = f" {MARK} ".join(norms)
            clean = raw.count(MARK) == len(texts) - 1 and "▁" not in joined and not _PY_ONLY_SPACE.search(joined)
            if clean and not any(a in raw or a in joined for a in self.added):
                return joined.split(), []
        bad = self._bad(texts, norms)
        for i in bad:
            norms[i] = ""
        return f" {MARK} ".join(norms).split(), bad

    def patch(self, texts: Sequence[str], flat: np.ndarray, lengths: np.ndarray, bad: list[int]) -> tuple:
        """Insert the reference ids of the ``bad`` sentences (which got no ids so far)."""
        if not bad:
            return flat, lengths
        pieces = np.split(flat, np.cumsum(lengths)[:-1]) if len(lengths) else []
        for i, ids in zip(bad, self.reference([texts[i] for i in bad]), strict=True):
            pieces[i] = np.asarray(ids, dtype=np.int64)
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        return (np.concatenate(pieces) if pieces else flat), lengths


class _ChunkIds(_Chunked):
    """Cached, batched ids of a ``tokenizers`` word-level (Split) or unigram (Metaspace) tokenizer."""

    def __init__(self, backend: Any, config: dict[str, Any], metaspace: bool, reference: Reference) -> None:
        spec = config.get("normalizer")
        steps = spec["normalizers"] if spec and spec["type"] == "Sequence" else [spec] if spec else []
        normalize = backend.normalizer.normalize_str if backend.normalizer else str
        added = [t["content"] for t in config.get("added_tokens", [])]
        super().__init__(normalize, {"type": "Lowercase"} in steps, added, reference)
        self.backend = backend
        self.metaspace = metaspace
        self.vocab: dict[str, int] = config["model"].get("vocab", {}) if not metaspace else {}
        unk = config["model"].get("unk_token")
        self.unk = self.vocab.get(unk) if unk is not None and not metaspace else None
        self.clear()

    def clear(self) -> None:
        """Forget every cached chunk."""
        self.index: dict[str, int] = {MARK: 0}  # chunk -> entry; entry 0 is the sentence marker (no ids)
        self.starts = np.zeros(1024, dtype=np.int64)  # entry -> first id in store
        self.lens = np.zeros(1024, dtype=np.int64)  # entry -> number of ids
        self.store = np.zeros(4096, dtype=np.int64)
        self.entries, self.used = 1, 0

    def _add(self, new: list[str], ids: list[list[int]]) -> None:
        lens = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter((t for x in ids for t in x), dtype=np.int64, count=int(lens.sum()))
        n, k, u = self.entries, len(new), self.used
        if n + k > len(self.starts):
            size = max(2 * len(self.starts), n + k)
            self.starts, self.lens = np.resize(self.starts, size), np.resize(self.lens, size)
        if u + len(flat) > len(self.store):
            self.store = np.resize(self.store, max(2 * len(self.store), u + len(flat)))
        self.lens[n : n + k] = lens
        self.starts[n : n + k] = u + np.cumsum(lens) - lens
        self.store[u : u + len(flat)] = flat
        self.index.update(zip(new, range(n, n + k), strict=True))
        self.entries, self.used = n + k, u + len(flat)

    def _tokenize_new(self, new: list[str]) -> list[list[int]]:
        if self.metaspace:  # the chunk has no space and no "▁": its only pre-token is "▁" + chunk
            tokenize = self.backend.model.tokenize
            return [[t.id for t in tokenize("▁" + c)] for c in new]
        words = self.backend.pre_tokenizer.pre_tokenize_str("\n".join(new))
        starts = np.cumsum([0] + [len(c) + 1 for c in new[:-1]])
        owner = np.searchsorted(starts, [s for _, (s, _) in words], side="right") - 1
        out: list[list[int]] = [[] for _ in new]
        get, unk = self.vocab.get, self.unk
        for (word, _), k in zip(words, owner.tolist(), strict=True):
            found = get(word, unk)
            if found is None:  # no unk token: let the model raise its own error
                found = self.backend.model.tokenize(word)[0].id
            out[k].append(found)
        return out

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat ids (int64) and per-sentence lengths."""
        chunks, bad = self.chunks(texts)
        if self.entries > _MAX_ENTRIES:
            self.clear()
        index = self.index
        new = list(set(chunks).difference(index))
        if new:
            self._add(new, self._tokenize_new(new))
        starts, lens, store = self.starts, self.lens, self.store
        ks = np.fromiter(map(index.__getitem__, chunks), dtype=np.int64, count=len(chunks))
        k_lens = lens[ks]
        ends = np.cumsum(k_lens)
        total = int(ends[-1]) if len(ends) else 0
        flat = store[np.repeat(starts[ks] - (ends - k_lens), k_lens) + np.arange(total)]
        sentence_ends = np.append(ends[ks == 0], total)
        lengths = np.diff(sentence_ends, prepend=0)
        return self.patch(texts, flat, lengths, bad)


class _TrigramIds(_Chunked):
    """Batched character-trigram ids of a one-component trigram ``ParaNMTTokenizer``, exact to ``encode_ids``."""

    def __init__(self, segmenter: _TrigramSegmenter, reference: Reference) -> None:
        super().__init__(segmenter._lower.normalize_str, True, [], reference)
        self.segmenter = segmenter
        self.unk = segmenter.unk_id
        self.cache: dict[str, str] = {MARK: MARK}
        self.ascii_table = np.full(1 << 21, self.unk, dtype=np.int64)
        keys, ids = [], []
        for token, i in segmenter.index.items():
            if len(token) != 3:
                continue  # [PAD]/[UNK] and anything else no trigram can equal
            c = [ord(ch) for ch in token]
            if max(c) < 128:
                self.ascii_table[(c[0] << 14) | (c[1] << 7) | c[2]] = i
            else:
                keys.append((c[0] << 42) | (c[1] << 21) | c[2])
                ids.append(i)
        order = np.argsort(np.asarray(keys, dtype=np.int64), kind="stable")
        self.keys = np.append(np.asarray(keys, dtype=np.int64)[order], np.iinfo(np.int64).max)
        self.key_ids = np.append(np.asarray(ids, dtype=np.int64)[order], self.unk)

    def clear(self) -> None:
        """Forget every cached chunk."""
        self.cache = {MARK: MARK}

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat trigram ids (int64) and per-sentence lengths."""
        chunks, bad = self.chunks(texts)
        cache = self.cache
        if len(cache) > _MAX_ENTRIES:
            self.clear()
            cache = self.cache
        new = list(set(chunks).difference(cache))
        if new:
            words = self.segmenter._split.pre_tokenize_str("\n".join(new))
            starts = np.cumsum([0] + [len(c) + 1 for c in new[:-1]])
            owner = np.searchsorted(starts, [s for _, (s, _) in words], side="right") - 1
            grouped: list[list[str]] = [[] for _ in new]
            for (word, _), k in zip(words, owner.tolist(), strict=True):
                grouped[k].append(word)
            cache.update(zip(new, map(" ".join, grouped), strict=True))
        text = " " + " ".join(map(cache.__getitem__, chunks)) + " "
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        flat, lengths = self.lookup(codes, len(texts))
        return self.patch(texts, flat, lengths, bad)

    def lookup(self, codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids of every trigram of the code points that touches no marker, and the count per sentence."""
        mark = codes == 0
        valid = ~(mark[:-2] | mark[1:-1] | mark[2:])
        sentence = np.cumsum(mark)[:-2][valid]
        c0, c1, c2 = codes[:-2][valid], codes[1:-1][valid], codes[2:][valid]
        small = (c0 < 128) & (c1 < 128) & (c2 < 128)
        ids = self.ascii_table[np.where(small, (c0 << 14) | (c1 << 7) | c2, 0)]
        if not small.all():
            big = np.flatnonzero(~small)
            keys = (c0[big] << 42) | (c1[big] << 21) | c2[big]
            pos = np.searchsorted(self.keys, keys)
            ids[big] = np.where(self.keys[pos] == keys, self.key_ids[pos], self.unk)
        return ids, np.bincount(sentence, minlength=n).astype(np.int64)


def fast_token_ids(tokenizer: Any, reference: Reference) -> Callable[[Sequence[str]], tuple] | None:
    """The batched fast path for ``tokenizer``, or None when it is not one of the configurations above.

    ``reference`` gives the ids of the (rare) sentences the fast path cannot reproduce.
    """
    if isinstance(tokenizer, ParaNMTTokenizer):
        segs = tokenizer.segmenters
        if len(segs) == 1 and isinstance(segs[0], _TrigramSegmenter) and segs[0].fast_path_exact:
            return _TrigramIds(segs[0], reference)
        return None
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    config = json.loads(backend.to_str())
    if config.get("truncation") or config.get("padding"):
        return None
    model, pre, norm = config["model"]["type"], config.get("pre_tokenizer"), config.get("normalizer")
    steps = norm["normalizers"] if norm and norm["type"] == "Sequence" else [norm] if norm else []
    if model == "WordLevel" and pre == _SPLIT and steps in ([], [{"type": "Lowercase"}]):
        return _ChunkIds(backend, config, False, reference)
    if model == "Unigram" and pre == _METASPACE and steps in (_SP_NORMALIZER, _SP_NORMALIZER[:1] + _SP_NORMALIZER[2:]):
        return _ChunkIds(backend, config, True, reference)
    return None

r"""Texts to model inputs, fast: exact batched token ids and the one featuriser every loader uses.

``ParaNMTFeaturizer`` turns a batch of texts into the inputs of ``ParaNMTModel``: flat ``input_ids`` + ``offsets``
(averaging encoders and their combinations: the ``EmbeddingBag`` layout, no padding) or padded ``input_ids`` +
``attention_mask`` (recurrent encoders). ``ParaNMTEncoder``, the sentence-transformers module, the tokenizer's batch
call (``AutoTokenizer``) and the training loss all use it.

Token ids come from :func:`fast_token_ids` when the tokenizer is one it can reproduce exactly, else from the
tokenizer one sentence at a time. ``tokenizers`` spends most of its time per sentence (normalising, splitting,
building ``Encoding`` objects), yet for the tokenizers paranmt_hf builds or loads every token comes from one
whitespace-separated chunk of the normalised text, independently of the rest of the sentence:

- word: lower-case, then ``Split(WORD_SPLIT_PATTERN)``; no match crosses whitespace, no pattern looks behind;
- sp: NFKC + lower-case + whitespace runs -> ``" "`` + strip, then ``Metaspace(prepend_scheme="always")``: every
  space-separated chunk ``c`` becomes the pre-token ``"▁" + c``;
- subword (WordPiece teachers such as BERT): ``BertNormalizer`` then ``BertPreTokenizer`` (whitespace, then
  punctuation) and ``WordPiece`` per word;
- trigram: the trigram text ``" " + " ".join(words) + " "`` is the space-join of the chunks' word strings;
- combinations: each component's ids, shifted, one component after the other.

So a batch is normalised at once (``str.lower`` for the ASCII text on which the tokenizer's normalizer is exactly
that, the tokenizer's own normalizer otherwise), joined with a marker chunk between sentences and split into chunks
by Python; each distinct chunk is tokenised once by the tokenizer's own pre-tokenizer and model and cached; the ids
of a batch are then gathered with NumPy. Trigrams are looked up with NumPy too (a direct table for ASCII trigrams,
a sorted-key search for the rest). Sentences this cannot reproduce exactly (``\x00`` or ``▁`` in the text, the
characters Python splits on but ``tokenizers`` does not, added-token strings) take the reference path, so the ids
always equal the tokenizer's (``tests/test_featurization.py``); other tokenizer configurations use the reference
path for everything.

This file is Hub remote code: it imports only numpy, torch, tokenizers and its sibling ``tokenization_paranmt``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from .tokenization_paranmt import WORD_SPLIT_PATTERN, ParaNMTTokenizer, _TokenizersSegmenter, _TrigramSegmenter

MARK = "\x00"
"""Chunk that separates the sentences of a batch (sentences containing it take the reference path)."""

Reference = Callable[[Sequence[str]], list[list[int]]]
FastIds = Callable[[Sequence[str]], tuple[np.ndarray, np.ndarray]]
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
        self._unsafe_ascii = re.compile("[" + "".join(map(re.escape, unsafe)) + "]") if unsafe else None

    def _ascii_shortcut(self, text: str) -> bool:
        return text.isascii() and (self._unsafe_ascii is None or not self._unsafe_ascii.search(text))

    def _fold(self, text: str) -> str:
        return text.lower() if self.lowercase else text

    def _bad(self, texts: Sequence[str], norms: Sequence[str]) -> list[int]:
        def bad(raw: str, norm: str) -> bool:
            special = any(a in raw or a in norm for a in self.added)
            return special or MARK in raw or "▁" in norm or bool(_PY_ONLY_SPACE.search(norm))

        return [i for i, (raw, norm) in enumerate(zip(texts, norms, strict=True)) if bad(raw, norm)]

    def chunks(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """Chunks of the whole batch (``MARK`` between sentences) and the sentences left to the reference path."""
        raw = f" {MARK} ".join(texts)
        if self._ascii_shortcut(raw):
            norm = self._fold(raw)
            clean = raw.count(MARK) == len(texts) - 1 and not _PY_ONLY_SPACE.search(raw)
            clean = clean and not any(a in raw or a in norm for a in self.added)
            if clean:
                return norm.split(), []
            norms = [self._fold(t) for t in texts]
        else:
            norms = [self._fold(t) if self._ascii_shortcut(t) else self.normalize(t) for t in texts]
            joined = f" {MARK} ".join(norms)
            clean = raw.count(MARK) == len(texts) - 1 and "▁" not in joined and not _PY_ONLY_SPACE.search(joined)
            if clean and not any(a in raw or a in joined for a in self.added):
                return joined.split(), []
        bad = self._bad(texts, norms)
        for i in bad:
            norms[i] = ""
        return f" {MARK} ".join(norms).split(), bad

    def patch(
        self, texts: Sequence[str], flat: np.ndarray, lengths: np.ndarray, bad: list[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Insert the reference ids of the ``bad`` sentences (which got no ids so far)."""
        if not bad:
            return flat, lengths
        pieces = np.split(flat, np.cumsum(lengths)[:-1]) if len(lengths) else []
        for i, ids in zip(bad, self.reference([texts[i] for i in bad]), strict=True):
            pieces[i] = np.asarray(ids, dtype=np.int64)
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        return (np.concatenate(pieces) if pieces else flat), lengths


class _ChunkIds(_Chunked):
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
        self.backend = backend
        self.mode = mode
        self.vocab: dict[str, int] = config["model"].get("vocab", {}) if mode == "lookup" else {}
        unk = config["model"].get("unk_token")
        self.unk = self.vocab.get(unk) if unk is not None and mode == "lookup" else None
        self.clear()

    def clear(self) -> None:
        """Forget every cached chunk."""
        self.index: dict[str, int] = {MARK: 0}  # chunk -> entry; entry 0 is the sentence marker (no ids)
        self.starts = np.zeros(1024, dtype=np.int64)  # entry -> first id in store
        self.lens = np.zeros(1024, dtype=np.int64)  # entry -> number of ids
        self.store = np.zeros(4096, dtype=np.int64)
        self.entries, self.used = 1, 0

    def _add(self, new: list[str], ids: list[list[int]]) -> None:
        flat, lens = ids_to_flat(ids)
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
        tokenize = self.backend.model.tokenize
        if self.mode == "metaspace":  # the chunk has no space and no "▁": its only pre-token is "▁" + chunk
            return [[t.id for t in tokenize("▁" + c)] for c in new]
        words = self.backend.pre_tokenizer.pre_tokenize_str("\n".join(new))
        starts = np.cumsum([0] + [len(c) + 1 for c in new[:-1]])
        owner = np.searchsorted(starts, [s for _, (s, _) in words], side="right") - 1
        out: list[list[int]] = [[] for _ in new]
        if self.mode == "model":
            for (word, _), k in zip(words, owner.tolist(), strict=True):
                out[k].extend(t.id for t in tokenize(word))
            return out
        get, unk = self.vocab.get, self.unk
        for (word, _), k in zip(words, owner.tolist(), strict=True):
            found = get(word, unk)
            if found is None:  # no unk token: let the model raise its own error
                found = tokenize(word)[0].id
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
    """Batched character-trigram ids of a trigram segmenter, exact to its ``ids``."""

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


class _CombinedIds:
    """Ids of a combination: every component's fast ids, shifted by its offset, one component after the other."""

    def __init__(self, parts: list[FastIds], offsets: list[int]) -> None:
        self.parts = parts
        self.offsets = offsets

    def clear(self) -> None:
        """Forget every cached chunk of every component."""
        for part in self.parts:
            part.clear()  # type: ignore[attr-defined]

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat ids (int64) and per-sentence lengths over all components."""
        results = [part(texts) for part in self.parts]
        lengths = np.sum([lens for _, lens in results], axis=0).astype(np.int64)
        flat = np.empty(int(lengths.sum()), dtype=np.int64)
        base = lengths_to_offsets(lengths)  # where each sentence starts in the output
        for (ids, lens), shift in zip(results, self.offsets, strict=True):
            within = np.arange(len(ids), dtype=np.int64) - np.repeat(lengths_to_offsets(lens), lens)
            flat[np.repeat(base, lens) + within] = ids + shift
            base = base + lens
        return flat, lengths


def _tokenizers_fast_ids(backend: Any, reference: Reference) -> FastIds | None:
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


def fast_token_ids(tokenizer: Any, reference: Reference) -> FastIds | None:
    """The batched fast path for ``tokenizer``, or None when it is not one of the configurations above.

    ``reference`` gives the (unshifted, all-component) ids of the rare sentences the fast path cannot reproduce.
    """
    if isinstance(tokenizer, ParaNMTTokenizer):
        parts: list[FastIds] = []
        for seg in tokenizer.segmenters:
            seg_reference: Reference = lambda texts, seg=seg: [seg.ids(t) for t in texts]  # noqa: E731
            if getattr(seg, "fast_path_exact", True) is False:
                return None  # a component with lookup rules the fast path does not reproduce
            if isinstance(seg, _TrigramSegmenter):
                part: FastIds | None = _TrigramIds(seg, seg_reference)
            elif isinstance(seg, _TokenizersSegmenter):
                part = _tokenizers_fast_ids(seg.tokenizer, seg_reference)
            else:
                part = None
            if part is None:
                return None
            parts.append(part)
        return parts[0] if len(parts) == 1 else _CombinedIds(parts, tokenizer.offsets)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    return _tokenizers_fast_ids(backend, reference)


def reference_token_ids(tokenizer: Any, sentences: Sequence[str]) -> list[list[int]]:
    """Token ids straight from the tokenizer, one sentence at a time (the definition the fast path matches)."""
    if isinstance(tokenizer, ParaNMTTokenizer):
        return [tokenizer.encode_ids(s) for s in sentences]
    backend = tokenizer.backend_tokenizer
    return [e.ids for e in backend.encode_batch_fast(list(sentences), add_special_tokens=False)]


def component_vocab_sizes(tokenizer: Any) -> list[int]:
    """Vocabulary size of each model component as ``tokenizer`` sees it."""
    if isinstance(tokenizer, ParaNMTTokenizer):
        return tokenizer.component_vocab_sizes
    return [len(tokenizer)]


class ParaNMTFeaturizer:
    """Texts -> ``ParaNMTModel`` inputs, exactly as the tokenizer defines the ids, fast.

    Args:
        tokenizer: the model's tokenizer (a transformers fast tokenizer for word / sp / subword models, a
            ``ParaNMTTokenizer`` for trigram and combined models).
        flat: emit the flat ``input_ids`` + ``offsets`` layout (the model's ``accepts_flat_input``) instead of padded
            ``input_ids`` + ``attention_mask``.
        pad_token_id: padding id of the padded layout.

    No special tokens are added and nothing is truncated here (the model applies ``max_seq_length``).
    """

    def __init__(self, tokenizer: Any, flat: bool, pad_token_id: int = 0) -> None:
        self.tokenizer = tokenizer
        self.flat = flat
        self.pad_token_id = int(pad_token_id)
        self._fast: FastIds | None | bool = None  # None: not built yet; False: no fast path for this tokenizer

    @classmethod
    def for_model(cls, model: Any, tokenizer: Any) -> ParaNMTFeaturizer:
        """The featuriser of ``model`` (a ``ParaNMTModel``) with ``tokenizer``; checks that their vocabularies match.

        Raises:
            ValueError: the tokenizer's vocabulary sizes differ from the model's components.
        """
        expected = [c["vocab_size"] for c in model.config.resolved_components()]
        found = component_vocab_sizes(tokenizer)
        if expected != found:
            raise ValueError(f"tokenizer vocabulary sizes {found} do not match the model's components {expected}")
        return cls(tokenizer, model.accepts_flat_input, model.config.pad_token_id)

    @property
    def fast_ids(self) -> FastIds | None:
        """The batched fast path for this tokenizer (None when the tokenizer has none)."""
        if self._fast is None:
            self._fast = fast_token_ids(self.tokenizer, self.reference_ids) or False
        return self._fast or None

    def reference_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Token ids straight from the tokenizer, one sentence at a time."""
        return reference_token_ids(self.tokenizer, sentences)

    def token_ids(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """All token ids of a batch back to back (int64) and the number of tokens of each sentence."""
        if not sentences:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        fast = self.fast_ids
        if fast is not None:
            return fast(sentences)
        return ids_to_flat(self.reference_ids(sentences))

    def pad(self, flat: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Padded ``[B, max(lengths)]`` ids (``pad_token_id`` after each sentence) and the 0/1 attention mask."""
        width = max(1, int(lengths.max(initial=0)))
        padded = np.full((len(lengths), width), self.pad_token_id, dtype=np.int64)
        rows = np.repeat(np.arange(len(lengths)), lengths)
        padded[rows, np.arange(len(flat)) - np.repeat(lengths_to_offsets(lengths), lengths)] = flat
        mask = (np.arange(width)[None, :] < lengths[:, None]).astype(np.int64)
        return padded, mask

    def __call__(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Model inputs for a batch: flat ``input_ids`` + ``offsets`` (averaging) or padded ids + mask."""
        flat, lengths = self.token_ids(sentences)
        if self.flat:
            return {"input_ids": torch.from_numpy(flat), "offsets": torch.from_numpy(lengths_to_offsets(lengths))}
        padded, mask = self.pad(flat, lengths)
        return {"input_ids": torch.from_numpy(padded), "attention_mask": torch.from_numpy(mask)}


__all__ = ["ParaNMTFeaturizer", "fast_token_ids", "reference_token_ids", "lengths_to_offsets", "ids_to_flat"]

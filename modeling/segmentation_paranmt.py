"""How ParaNMT models read raw text: the word split, the lookup rules, and the segmenters of the custom tokenizer.

``ParaNMTTokenizer`` (``tokenization_paranmt.py``) is a list of segmenters, one per component: character trigrams,
words with the original ParaNMT-50M lookup, or a ``tokenizers`` model; paranmt_hf's batched ids
(``paranmt_hf.model.token_ids``) and its torch-free encoder read the same segmenters.

This file is Hub remote code: it imports ``tokenizers`` and the standard library only.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers

WORD_SPLIT_PATTERN = r"\w+(?=n't\b)|n't\b|'(?:s|m|d|ll|re|ve)\b|\w+(?:[-.]\w+)*|[^\w\s]"
"""Moses/PTB-like word splitting of raw text (``don't`` -> ``do n't``, ``it's`` -> ``it 's``, punctuation apart,
hyphenated words and decimals kept), matching the tokenised, lower-cased text ParaNMT was released as."""

PAD_TOKEN = "[PAD]"
UNK_TOKEN = "[UNK]"

LOOKUP_RULES = ("split", "paranmt50m")
"""How a word or trigram component reads raw text:

- ``"split"``: lower-case, split into words with ``WORD_SPLIT_PATTERN`` (trigrams: of the words joined by single
  spaces), exact vocabulary lookup, unknown -> ``[UNK]``;
- ``"paranmt50m"``: ParaNMT-50M's ``main/example.py`` (converted models embed raw text as its ``evaluate.py``):
  ``phrase = text.strip().lower()`` (Python 2: :func:`py2_lower`); words ``phrase.split()``, trigrams of
  ``" " + phrase + " "`` as is (none: one ``[UNK]``); a token is looked up lower-cased, else without its Unicode
  punctuation, else ``[UNK]``."""


def py2_lower(text: str) -> str:
    """Python 2's ``unicode.lower()``: Python 3's but for ``İ`` (-> ``i``, not ``i̇``) and final ``Σ`` (-> ``σ``)."""
    if text.isascii():
        return text.lower()
    return text.replace("\u0130", "i").replace("\u03a3", "\u03c3").lower()


def strip_punctuation(text: str) -> str:
    """``text`` without its Unicode punctuation characters (general category P*), as ``example.py``'s ``tbl``."""
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))


def paranmt50m_words(text: str) -> list[str]:
    """The words ``example.populate_embeddings`` looks up: ``phrase.split()`` (``phrase``: stripped, lower-cased)."""
    return py2_lower(text.strip()).split()


def paranmt50m_trigrams(text: str) -> list[str]:
    """The character trigrams ``example.populate_embeddings_ngrams`` looks up: windows of ``" " + phrase + " "``."""
    padded = " " + py2_lower(text.strip()) + " "
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


def paranmt50m_lookup(index: dict[str, int], token: str, unk: int) -> int:
    """``example.lookup``: the id of ``token`` lower-cased, else of it without punctuation, else ``unk``."""
    token = py2_lower(token)
    found = index.get(token)
    if found is None:
        found = index.get(strip_punctuation(token), unk)
    return found


def word_pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """The ``tokenizers`` pre-tokenizer that splits raw text into words (one source for every word-level vocab)."""
    return pre_tokenizers.Split(Regex(WORD_SPLIT_PATTERN), behavior="removed", invert=True)


def char_trigrams(words: list[str]) -> list[str]:
    """Character trigrams of ``" " + " ".join(words) + " "`` (ParaNMT-50M's ``-wordtype 3grams``)."""
    text = " " + " ".join(words) + " "
    return [text[i : i + 3] for i in range(len(text) - 2)]


class _VocabSegmenter:
    """Tokens of a vocabulary list, read with the ``lookup`` rules (:data:`LOOKUP_RULES`)."""

    kind = ""

    def __init__(self, vocab: list[str], lookup: str) -> None:
        if lookup not in LOOKUP_RULES:
            raise ValueError(f"lookup={lookup!r} is not one of {LOOKUP_RULES}")
        self.vocab, self.lookup = vocab, lookup
        self.index = {token: i for i, token in enumerate(vocab)}
        self.unk_id = self.index[UNK_TOKEN]

    def tokens(self, text: str) -> list[str]:
        return [self.vocab[i] for i in self.ids(text)]

    def to_json(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"kind": self.kind, "vocab": self.vocab}
        return spec if self.lookup == "split" else spec | {"lookup": self.lookup}


class _TrigramSegmenter(_VocabSegmenter):
    """Character trigrams looked up in a vocabulary."""

    kind = "trigram"

    def __init__(self, vocab: list[str], lookup: str = "split") -> None:
        super().__init__(vocab, lookup)
        self._lower = normalizers.Lowercase()
        self._split = word_pre_tokenizer()

    def tokens(self, text: str) -> list[str]:
        if self.lookup == "paranmt50m":
            return super().tokens(text)
        return char_trigrams([w for w, _ in self._split.pre_tokenize_str(self._lower.normalize_str(text))])

    def ids(self, text: str) -> list[int]:
        index, unk = self.index, self.unk_id
        if self.lookup == "paranmt50m":
            return [paranmt50m_lookup(index, t, unk) for t in paranmt50m_trigrams(text)] or [unk]
        return [index.get(t, unk) for t in self.tokens(text)]


class _WordSegmenter(_VocabSegmenter):
    """Words looked up with the ``"paranmt50m"`` rules (``"split"`` word components are ``tokenizers`` WordLevel)."""

    kind = "word"

    def __init__(self, vocab: list[str], lookup: str = "paranmt50m") -> None:
        if lookup == "split":
            raise ValueError("a 'word' component reads text with lookup='paranmt50m' (else use a tokenizer.json)")
        super().__init__(vocab, lookup)

    def ids(self, text: str) -> list[int]:
        index, unk = self.index, self.unk_id
        return [paranmt50m_lookup(index, w, unk) for w in paranmt50m_words(text)]


class _TokenizersSegmenter:
    """A ``tokenizers`` model (word-level or unigram) used as one component of a combination."""

    def __init__(self, tokenizer_json: str) -> None:
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.json = tokenizer_json
        vocab = self.tokenizer.get_vocab(with_added_tokens=True)
        self.vocab = sorted(vocab, key=vocab.__getitem__)  # tokens in id order
        self.index = vocab

    def tokens(self, text: str) -> list[str]:
        return self.tokenizer.encode(text, add_special_tokens=False).tokens

    def ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def to_json(self) -> dict[str, Any]:
        return {"kind": "tokenizers", "tokenizer": json.loads(self.json)}


def _segmenter(spec: dict[str, Any]) -> _TrigramSegmenter | _WordSegmenter | _TokenizersSegmenter:
    if spec.get("kind") == "trigram":
        return _TrigramSegmenter(list(spec["vocab"]), spec.get("lookup", "split"))
    if spec.get("kind") == "word":
        return _WordSegmenter(list(spec["vocab"]), spec.get("lookup", "paranmt50m"))
    if spec.get("kind") == "tokenizers":
        return _TokenizersSegmenter(json.dumps(spec["tokenizer"]))
    raise ValueError(
        f"unknown tokenizer component kind {spec.get('kind')!r} (expected 'trigram', 'word' or 'tokenizers')"
    )


class Segmenters:
    """The ``"components"`` of a ``paranmt_tokenizer.json``, ready to read text: one segmenter each.

    Component ``k``'s ids are shifted by the vocabulary sizes before it (``offsets``). ``ParaNMTTokenizer`` is these
    as a transformers tokenizer; alone (``tokenizers`` only) they give its ids too (the ONNX export's README).
    ``ValueError``: a component of unknown kind, or a vocabulary that does not start with ``[PAD]``, ``[UNK]``.
    """

    def __init__(self, components: list[dict[str, Any]]) -> None:
        self.segmenters = [_segmenter(spec) for spec in components]
        self.offsets: list[int] = []
        start = 0
        for seg in self.segmenters:
            if seg.vocab[:2] != [PAD_TOKEN, UNK_TOKEN]:
                raise ValueError(f"every component vocabulary must start with {PAD_TOKEN}, {UNK_TOKEN}")
            self.offsets.append(start)
            start += len(seg.vocab)

    @classmethod
    def from_file(cls, path: str) -> Segmenters:
        """The segmenters of a ``paranmt_tokenizer.json`` file."""
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f)["components"])

    @property
    def component_vocab_sizes(self) -> list[int]:
        """Vocabulary size of each component."""
        return [len(seg.vocab) for seg in self.segmenters]

    def encode_ids(self, text: str) -> list[int]:
        """The ids of one text: every component's, shifted, one component after the other (no special tokens)."""
        ids: list[int] = []
        for seg, offset in zip(self.segmenters, self.offsets, strict=True):
            ids.extend(i + offset for i in seg.ids(text)) if offset else ids.extend(seg.ids(text))
        return ids


__all__ = ["WORD_SPLIT_PATTERN", "PAD_TOKEN", "UNK_TOKEN", "LOOKUP_RULES", "word_pre_tokenizer", "char_trigrams",
           "py2_lower", "strip_punctuation", "paranmt50m_words", "paranmt50m_trigrams", "paranmt50m_lookup",
           "Segmenters"]

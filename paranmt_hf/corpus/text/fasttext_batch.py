"""Batched top-label test of a fastText supervised model (``lid.176``) in NumPy, exact by falling back to fastText.

fastText's own ``predict`` costs ~35 µs per sentence on this project's CPUs, which bounds a corpus filter to ~15,000
pairs/s per core. For the one question the PRAS filter asks (*is the top label ``__label__en``?*) this module reads
the model file (``.bin`` or quantised ``.ftz``) and computes the same model in NumPy for a whole batch:

* the hidden vector is the mean of the input rows of the line's words, their character n-grams (hashed with
  fastText's FNV-1a, remapped through the pruned-bucket table of ``.ftz`` models) and the end-of-line token; the row
  sum and count of each distinct word are cached, so a batch costs one dictionary look-up per word;
* with hierarchical softmax (``lid.176``) the probability of the asked label is the product of the sigmoids on its
  tree path (two nodes for English). When it exceeds ``0.5 + margin`` no other label can outrank it (leaf
  probabilities sum to one, and fastText's ``log(p + 1e-5)`` search scores cannot close that gap), so the answer is
  *yes*; so it is when the label's path score beats the score of leaving the path at any step (every other label
  hangs off it). For the other rows every label's search score is computed as fastText's tree search does (the sum of
  ``log(p + 1e-5)`` along its path) and the answer is taken when the label and the best other one differ by more
  than ``margin``; with a softmax loss likewise from the logits;
* the remaining near-ties (where float rounding could decide) are asked of fastText itself, in one batched call.

So the answers are fastText's answers; ``tests/test_corpus_langid.py`` checks that on real multilingual text.
"""

from __future__ import annotations

import itertools
import os
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

MAGIC = 793712314
EOS = "</s>"
LABEL_PREFIX = "__label__"
# fastText splits words on these bytes only (str.split() would also split on NBSP and other Unicode spaces)
_FT_SPACE = re.compile(r"[ \n\r\t\v\f\x00]+")
# texts holding one of these (or "__label__") are split fastText's way: Unicode spaces str.split() splits on, NUL
_SPECIAL = re.compile(r"[\x00\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
LOSS_HS, LOSS_SOFTMAX = 1, 3


def _read(handle: BinaryIO, fmt: str) -> tuple:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("truncated fastText model file")
    return struct.unpack(fmt, data)


def _product_quantizer(handle: BinaryIO) -> tuple[int, int, int, int, np.ndarray]:
    dim, nsubq, dsub, lastdsub = _read(handle, "<4i")
    centroids = np.frombuffer(handle.read(4 * dim * 256), dtype="<f4").astype(np.float32)
    return dim, nsubq, dsub, lastdsub, centroids


def _decode_rows(codes: np.ndarray, pq: tuple[int, int, int, int, np.ndarray]) -> np.ndarray:
    """Rows of a product-quantised matrix (``ProductQuantizer::addcode`` with alpha 1)."""
    dim, nsubq, dsub, lastdsub, centroids = pq
    rows = np.zeros((codes.shape[0], dim), dtype=np.float32)
    for m in range(nsubq):
        d = lastdsub if m == nsubq - 1 else dsub
        base = m * 256 * dsub
        table = centroids[base : base + 256 * d].reshape(256, d)
        rows[:, m * dsub : m * dsub + d] = table[codes[:, m]]
    return rows


def _matrix(handle: BinaryIO, quantised: bool) -> np.ndarray:
    """A dense or quantised fastText matrix as a dense float32 array (quantised rows scaled by their norm)."""
    if not quantised:
        m, n = _read(handle, "<qq")
        return np.frombuffer(handle.read(4 * m * n), dtype="<f4").astype(np.float32).reshape(m, n)
    (qnorm,) = _read(handle, "<?")
    m, n = _read(handle, "<qq")
    (codesize,) = _read(handle, "<i")
    codes = np.frombuffer(handle.read(codesize), dtype=np.uint8)
    pq = _product_quantizer(handle)
    rows = _decode_rows(codes.reshape(m, pq[1]), pq)
    if qnorm:
        norm_codes = np.frombuffer(handle.read(m), dtype=np.uint8)
        npq = _product_quantizer(handle)
        norms = npq[4][norm_codes]  # one sub-quantiser of dimension 1
        rows = (rows * norms[:, None]).astype(np.float32)
    return rows


@dataclass
class FastTextFile:
    """The parts of a fastText supervised model that prediction needs."""

    dim: int
    loss: int
    word_ngrams: int
    bucket: int
    minn: int
    maxn: int
    words: dict[str, int]  # word -> id (words only, not labels)
    labels: list[str]
    label_counts: list[int]
    prune: dict[int, int] | None  # hashed bucket -> pruned row offset (None: not pruned)
    nwords: int
    input: np.ndarray  # [rows, dim] float32
    output: np.ndarray  # [labels or internal nodes, dim] float32

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FastTextFile:
        """Read a ``.bin`` / ``.ftz`` supervised model (fastText file format version 11-12)."""
        with open(path, "rb") as handle:
            magic, version = _read(handle, "<ii")
            if magic != MAGIC or version > 12:
                raise ValueError(f"{path} is not a fastText model file (magic {magic}, version {version})")
            dim, _ws, _epoch, _min_count, _neg, word_ngrams, loss, model, bucket, minn, maxn, _lr, _t = _read(
                handle, "<12id")
            if model != 3:
                raise ValueError(f"{path} is not a supervised fastText model")
            if version == 11:
                maxn = 0
            size, nwords, nlabels, _ntokens, prune_size = _read(handle, "<iiiqq")
            words: dict[str, int] = {}
            labels: list[str] = []
            counts: list[int] = []
            raw = handle.read()
        offset = 0
        for index in range(size):
            end = raw.index(b"\x00", offset)
            word = raw[offset:end].decode("utf-8", errors="surrogateescape")
            count, kind = struct.unpack_from("<qb", raw, end + 1)
            offset = end + 1 + 9
            if kind == 0:
                words[word] = index
            else:
                labels.append(word)
                counts.append(count)
        prune = None
        if prune_size >= 0:
            pairs = np.frombuffer(raw, dtype="<i4", count=2 * prune_size, offset=offset).reshape(-1, 2)
            prune = dict(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(), strict=True))
            offset += 8 * prune_size
        stream = _Buffer(raw, offset)
        (quant_input,) = _read(stream, "<?")
        input_matrix = _matrix(stream, quant_input)
        (qout,) = _read(stream, "<?")
        output_matrix = _matrix(stream, quant_input and qout)
        if len(labels) != nlabels or len(words) != nwords:
            raise ValueError(f"{path}: inconsistent dictionary ({len(words)} words, {len(labels)} labels)")
        return cls(dim, loss, word_ngrams, bucket, minn, maxn, words, labels, counts, prune, nwords,
                   input_matrix, output_matrix)


class _Buffer:
    """A minimal binary reader over bytes (what :func:`_read` and :func:`_matrix` need)."""

    def __init__(self, data: bytes, offset: int) -> None:
        self.data, self.offset = data, offset

    def read(self, size: int) -> bytes:
        chunk = self.data[self.offset : self.offset + size]
        self.offset += size
        return chunk


def fnv1a(data: bytes) -> int:
    """The 32-bit FNV-1a hash of fastText (bytes taken as *signed* chars, as its C++ does)."""
    h = 2166136261
    for byte in data:
        h = ((h ^ (byte if byte < 128 else byte | 0xFFFFFF00)) * 16777619) & 0xFFFFFFFF
    return h


def hs_tree(counts: Sequence[int]) -> tuple[list[list[int]], list[list[bool]]]:
    """Paths (internal node rows) and codes (True = right) of each label in fastText's Huffman tree (``buildTree``)."""
    osz = len(counts)
    n = 2 * osz - 1
    parent, count, binary = [-1] * n, [10**15] * n, [False] * n
    count[:osz] = list(counts)
    leaf, node = osz - 1, osz
    for i in range(osz, n):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini[j] = leaf
                leaf -= 1
            else:
                mini[j] = node
                node += 1
        count[i] = count[mini[0]] + count[mini[1]]
        parent[mini[0]] = parent[mini[1]] = i
        binary[mini[1]] = True
    paths, codes = [], []
    for i in range(osz):
        path, code, j = [], [], i
        while parent[j] != -1:
            path.append(parent[j] - osz)
            code.append(binary[j])
            j = parent[j]
        paths.append(path)
        codes.append(code)
    return paths, codes


class BatchTopLabel:
    """Whether fastText's top-1 label of each text is ``label``, for whole batches (see the module docstring).

    Only the logits that the test needs are computed: each distinct word caches its row count and the projection
    of its row sum on the output rows of the label's tree path (hierarchical softmax) or on every label (softmax),
    so a batch costs a dictionary look-up per word and a segment sum of a few columns.

    Args:
        path: the model file (``lid.176.ftz`` / ``.bin``).
        fallback: fastText's own top-1 label (without the prefix) of each text of a list, used for the rows that
            NumPy cannot decide with certainty.
        label: the label asked about (without ``__label__``).
        margin: probability margin (hierarchical softmax) or logit margin (softmax) of a certain answer.
        max_words: bound of the per-word cache; a full cache is emptied.
    """

    def __init__(self, path: str | os.PathLike[str], fallback: Callable[[list[str]], list[str]],
                 label: str = "en", margin: float = 1e-3, max_words: int = 1 << 19) -> None:
        model = FastTextFile.load(path)
        if model.word_ngrams > 1:
            raise ValueError("word n-gram fastText models are not supported by the batched path")
        if model.loss not in (LOSS_HS, LOSS_SOFTMAX):
            raise ValueError(f"fastText loss {model.loss} is not supported by the batched path (hs or softmax)")
        self.model = model
        self.label = label
        self.fallback = fallback
        self.margin = margin
        self.max_words = max_words
        try:
            self.target = model.labels.index(LABEL_PREFIX + label)
        except ValueError:
            raise ValueError(f"the model has no label {label!r}") from None
        self._input = model.input.astype(np.float64)
        if model.loss == LOSS_HS:
            paths, codes = hs_tree(model.label_counts)
            depth = len(paths[self.target])
            # the label's path rows, then the identity: each word also keeps its full row sum (the hidden vector of
            # the rows NumPy cannot decide from the path alone)
            self._project = np.concatenate([model.output[paths[self.target]].astype(np.float64),
                                            np.eye(model.dim)])
            self._sign = np.where(codes[self.target], 1.0, -1.0)
            self._depth = depth
            self._internal = model.output[: len(model.labels) - 1].astype(np.float64)
            # leaf score = right-step logs @ _rights + left-step logs @ _lefts (0/1 path matrices, internal x leaf)
            self._rights = np.zeros((len(self._internal), len(paths)))
            self._lefts = np.zeros((len(self._internal), len(paths)))
            for leaf, (path, code) in enumerate(zip(paths, codes, strict=True)):
                for node, right in zip(path, code, strict=True):
                    (self._rights if right else self._lefts)[node, leaf] = 1.0
        else:
            self._project = model.output.astype(np.float64)  # [labels, dim]
        width = 1 + len(self._project)
        self._projected = self._input @ self._project.T  # every input row projected on the needed output rows
        self._prune_keys = self._prune_values = None
        if model.prune is not None:
            keys = np.fromiter(model.prune.keys(), dtype=np.int64, count=len(model.prune))
            values = np.fromiter(model.prune.values(), dtype=np.int64, count=len(model.prune))
            order = np.argsort(keys)
            self._prune_keys, self._prune_values = keys[order], values[order]
        self._slots: dict[str, int] = {}
        self._feats = np.zeros((4096, width), dtype=np.float64)  # per word: row count, projections of its row sum
        self._eos_feat = self._features([EOS])[0]
        self.fallbacks = 0  # rows asked of fastText itself

    # ---- words -----------------------------------------------------------------------------------------------
    def subword_rows(self, word: str) -> list[int]:
        """Input-matrix rows of one word: its id (in the vocabulary) and its hashed character n-grams."""
        model = self.model
        rows = []
        wid = model.words.get(word)
        if wid is not None:
            rows.append(wid)
        if word == EOS or model.maxn <= 0:
            return rows
        data = ("<" + word + ">").encode("utf-8", errors="surrogateescape")
        size = len(data)
        prune, bucket, nwords, minn, maxn = model.prune, model.bucket, model.nwords, model.minn, model.maxn
        for i in range(size):
            if data[i] & 0xC0 == 0x80:
                continue
            h, j, n = 2166136261, i, 0
            while j < size and n < maxn:
                byte = data[j]
                h = ((h ^ (byte if byte < 128 else byte | 0xFFFFFF00)) * 16777619) & 0xFFFFFFFF
                j += 1
                while j < size and data[j] & 0xC0 == 0x80:
                    h = ((h ^ (data[j] | 0xFFFFFF00)) * 16777619) & 0xFFFFFFFF
                    j += 1
                n += 1
                if n >= minn and not (n == 1 and (i == 0 or j == size)):
                    index = h % bucket
                    if prune is not None:
                        index = prune.get(index, -1)
                        if index < 0:
                            continue
                    rows.append(nwords + index)
        return rows

    def subword_rows_many(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`subword_rows` of many words at once, vectorised: ``(rows, word index of each row)``."""
        model = self.model
        ids = [model.words.get(w, -1) for w in words]
        vocab = np.asarray([i for i in ids if i >= 0], dtype=np.int64)
        vocab_word = np.asarray([k for k, i in enumerate(ids) if i >= 0], dtype=np.int64)
        hashed = [k for k, w in enumerate(words) if w != EOS]
        if model.maxn <= 0 or not hashed:
            return vocab, vocab_word
        data = [("<" + words[k] + ">").encode("utf-8", "surrogateescape") for k in hashed]
        lengths = np.fromiter(map(len, data), dtype=np.int64, count=len(data))
        ends = np.cumsum(lengths)
        buf = np.frombuffer(b"".join(data), dtype=np.uint8).astype(np.int64)
        byte_word = np.repeat(np.arange(len(data)), lengths)
        char_pos = np.flatnonzero((buf & 0xC0) != 0x80)
        char_word = byte_word[char_pos]
        char_end = np.minimum(np.append(char_pos[1:], len(buf)), ends[char_word])
        signed = np.where(buf < 128, buf, buf | 0xFFFFFF00)
        word_start = ends - lengths
        all_rows, all_words = [vocab], [vocab_word]
        for n in range(max(model.minn, 1), model.maxn + 1):
            k = np.arange(len(char_pos) - n + 1)
            k = k[char_word[k] == char_word[k + n - 1]]
            start, end, owner = char_pos[k], char_end[k + n - 1], char_word[k]
            if n == 1:
                keep = (start != word_start[owner]) & (end != ends[owner])
                start, end, owner = start[keep], end[keep], owner[keep]
            h = np.full(len(start), 2166136261, dtype=np.int64)
            size = end - start
            last = len(signed) - 1
            for d in range(int(size.max(initial=0))):
                step = ((h ^ signed[np.minimum(start + d, last)]) * 16777619) & 0xFFFFFFFF
                h = np.where(d < size, step, h)
            index = h % model.bucket
            if self._prune_keys is not None:
                pos = np.minimum(np.searchsorted(self._prune_keys, index), len(self._prune_keys) - 1)
                found = self._prune_keys[pos] == index
                index, owner = self._prune_values[pos[found]], owner[found]
            all_rows.append(model.nwords + index)
            all_words.append(np.asarray(hashed, dtype=np.int64)[owner])
        return np.concatenate(all_rows), np.concatenate(all_words)

    def _features(self, words: list[str]) -> np.ndarray:
        rows, owner = self.subword_rows_many(words)
        out = np.zeros((len(words), self._feats.shape[1]), dtype=np.float64)
        out[:, 0] = np.bincount(owner, minlength=len(words))
        projected = self._projected[rows]
        for j in range(projected.shape[1]):
            out[:, 1 + j] = np.bincount(owner, weights=projected[:, j], minlength=len(words))
        return out

    def _add_words(self, words: list[str]) -> None:
        slots = self._slots
        need = len(slots) + len(words)
        if need > len(self._feats):
            grown = np.zeros((max(need, 2 * len(self._feats)), self._feats.shape[1]), dtype=np.float64)
            grown[: len(slots)] = self._feats[: len(slots)]
            self._feats = grown
        start = len(slots)
        self._feats[start : start + len(words)] = self._features(words)
        slots.update(zip(words, range(start, start + len(words)), strict=True))

    @staticmethod
    def split(texts: Sequence[str], words: Sequence[list[str]] | None = None) -> list[list[str]]:
        """The words fastText sees in each text (split on ASCII whitespace and NUL; ``__label__*`` dropped).

        ``words``: the texts' ``str.split()`` when the caller has them already (the few texts where fastText splits
        otherwise are split again).
        """
        joined = "\n".join(texts)
        special = [m.start() for m in _SPECIAL.finditer(joined)]
        found = joined.find(LABEL_PREFIX)
        while found >= 0:
            special.append(found)
            found = joined.find(LABEL_PREFIX, found + 1)
        out = [t.split() for t in texts] if words is None else list(words)
        if special:
            ends = np.cumsum([len(t) + 1 for t in texts])
            for i in sorted(set(np.searchsorted(ends, special, side="right").tolist())):
                out[i] = [w for w in _FT_SPACE.split(texts[i]) if w and not w.startswith(LABEL_PREFIX)]
        return out

    def word_ids(self, texts: Sequence[str], words: Sequence[list[str]] | None = None,
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The cache slot of every word of the texts (back to back, new words added) and each text's word count."""
        split = self.split([t.replace("\n", " ") for t in texts], words)
        flat = list(itertools.chain.from_iterable(split))
        try:  # every word cached (the common case): one look-up each, a None (new word) makes NumPy refuse
            ids = np.array(list(map(self._slots.get, flat)), dtype=np.int64)
        except TypeError:
            new = set(flat).difference(self._slots)
            if len(self._slots) + len(new) > self.max_words:  # bounded: start afresh, keeping this batch's words
                self._slots.clear()
                new = set(flat)
            self._add_words(sorted(new))
            ids = np.array(list(map(self._slots.__getitem__, flat)), dtype=np.int64)
        return ids, np.fromiter(map(len, split), dtype=np.int64, count=len(split))

    def hidden(self, ids: np.ndarray, lengths: np.ndarray, width: int | None = None,
               rows: np.ndarray | None = None) -> np.ndarray:
        """Projections of fastText's hidden vector (the mean of its input rows) for the texts of :meth:`word_ids`.

        ``width``: only the first ``width`` projections (the label's path; None: all, the full hidden vector last);
        ``rows``: only these texts. Each text's row sum is added up word by word in order (the same sums whichever
        columns or rows are asked).
        """
        feats = self._feats if width is None else self._feats[:, : 1 + width]
        eos = self._eos_feat if width is None else self._eos_feat[: 1 + width]
        if rows is not None:
            ids = ids[np.repeat(np.isin(np.arange(len(lengths)), rows), lengths)]
            lengths = lengths[rows]
        sums = np.tile(eos, (len(lengths), 1))
        nonempty = lengths > 0
        if nonempty.any():
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            sums[nonempty] += np.add.reduceat(feats[ids], starts[nonempty], axis=0)
        return sums[:, 1:] / sums[:, :1]

    def logits(self, texts: Sequence[str], words: Sequence[list[str]] | None = None) -> np.ndarray:
        """Per text: the projections of fastText's hidden vector (mean of its input rows) used by the test."""
        return self.hidden(*self.word_ids(texts, words))

    # ---- the answer ------------------------------------------------------------------------------------------
    def hs_scores(self, hidden: np.ndarray, chunk: int = 2048) -> np.ndarray:
        """Every label's score under hierarchical softmax: ``sum(log(p + 1e-5))`` over its tree path (fastText's)."""
        out = np.empty((len(hidden), self._rights.shape[1]))
        for start in range(0, len(hidden), chunk):
            f = 1.0 / (1.0 + np.exp(-(hidden[start : start + chunk] @ self._internal.T)))
            out[start : start + chunk] = np.log(f + 1e-5) @ self._rights + np.log(1.0 - f + 1e-5) @ self._lefts
        return out

    def __call__(self, texts: Sequence[str], words: Sequence[list[str]] | None = None) -> np.ndarray:
        """Boolean array: whether fastText's top-1 label of each text is the asked label.

        ``words``: each text's ``str.split()``, when the caller has it (saves splitting again).
        """
        if not texts:
            return np.zeros(0, dtype=bool)
        ids, lengths = self.word_ids(texts, words)
        if self.model.loss == LOSS_HS:
            # the label's path projections of every text; the full hidden vector only for the undecided ones
            logits = self.hidden(ids, lengths, width=self._depth)
            # leaf probabilities sum to one: above one half (plus margin) the label is the top one for sure
            # probability of each step towards the label, from the root down (paths are stored leaf first)
            step = 1.0 / (1.0 + np.exp(-logits[:, self._depth - 1 :: -1] * self._sign[::-1]))
            answer = np.prod(step, axis=1) > 0.5 + self.margin
            # every other leaf hangs off the label's path: its score is at most the score of leaving the path
            # there (fastText's log(p + 1e-5) steps can add at most 1e-5 per further level)
            logs = np.log(step + 1e-5)
            before = np.concatenate([np.zeros((len(step), 1)), np.cumsum(logs, axis=1)[:, :-1]], axis=1)
            leave = before + np.log(1.0 - step + 1e-5)
            answer |= logs.sum(axis=1) - leave.max(axis=1) > self.margin + 1e-5 * len(self._internal)
            certain = answer.copy()
            rest = np.flatnonzero(~certain)
            if len(rest):  # every leaf's search score, as fastText's tree search computes it
                scores = self.hs_scores(self.hidden(ids, lengths, rows=rest)[:, self._depth :])
                mine = scores[:, self.target].copy()
                scores[:, self.target] = -np.inf
                best_other = scores.max(axis=1)
                answer[rest] = mine > best_other
                certain[rest] = np.abs(mine - best_other) > self.margin
        else:
            logits = self.hidden(ids, lengths)
            best_other = np.max(np.delete(logits, self.target, axis=1), axis=1)
            mine = logits[:, self.target]
            certain = np.abs(mine - best_other) > self.margin
            answer = certain & (mine > best_other)
        unsure = np.flatnonzero(~certain)
        if len(unsure):
            self.fallbacks += len(unsure)
            labels = self.fallback([texts[i] for i in unsure])
            answer[unsure] = [lab == self.label for lab in labels]
        return answer

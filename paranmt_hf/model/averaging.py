"""Averaging models in NumPy, with a per-chunk cache of summed rows: the inference fast path of every loader.

An averaging model embeds a sentence, per component, as the mean of the embedding rows of its token ids. A
sentence's ids are those of its whitespace chunks, one after the other (:mod:`.token_ids`), plus, for character
trigrams, one trigram across each space between two chunks. So :class:`ChunkAverager` caches each distinct chunk's
row sum and count next to its ids, and embeds a sentence from one cached vector per chunk instead of one row per
token. The result equals ``ParaNMTModel``'s forward up to float32 rounding (the order of the additions): unknown
tokens, ``max_seq_length``, ``concat``/``add`` and empty texts follow the model (sentences it cannot build from
chunks take :func:`embed_token_ids`). The torch-free :class:`paranmt_hf.model.static.StaticEncoder` embeds with it.

:func:`segment_sum_lengths` sums rows with SciPy's compiled CSR × dense kernel where SciPy is installed (the ``fast``
extra), else in NumPy (segments of equal length together, a cache-sized block at a time); both write straight into
the caller's output. Speeds: ``benchmarks/speed``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .token_ids import ChunkStore, FastIds, TrigramIds
from .unigram_search import run_places

DEFAULT_CACHE_BYTES = 256 * 2**20
"""Memory for cached chunk vectors (float32) before the chunk cache starts over (at least 4,096 chunks)."""

Ids = Callable[[Sequence[str]], tuple[np.ndarray, np.ndarray]]


SCRATCH_BYTES = 256 * 2**10
"""Size of the gathered rows summed at a time by the NumPy path of :func:`segment_sum_lengths` (they stay in the
core's L2 cache)."""

GROUP_BYTES = 256 * 2**10
"""Size of the sums of segments of one length collected before they are written to the output at once."""


USE_SCIPY: bool | None = None
"""Sum rows with SciPy's CSR × dense kernel: when SciPy is installed (None), always (True: an ImportError without it)
or never (False: NumPy only, e.g. to compare the two)."""

SPARSE_MIN_ROWS = 4096
"""Rows a sum reads before SciPy is imported for it (an import paid once); after that, every sum uses it."""

_kernel: Any = None  # SciPy's csr_matvecs once looked up; False: SciPy is not installed


def _csr_kernel(rows: int) -> Any:
    """SciPy's ``csr_matvecs`` (``Y += A·X``, CSR ``A``, row-major ``X`` and ``Y``) to sum ``rows`` rows, or None."""
    global _kernel
    if USE_SCIPY is False:
        return None
    if _kernel is None:
        if USE_SCIPY is None and rows < SPARSE_MIN_ROWS and "scipy.sparse" not in sys.modules:
            return None
        try:
            from scipy.sparse import _sparsetools

            _kernel = _sparsetools.csr_matvecs
        except (ImportError, AttributeError):
            _kernel = False
    if _kernel is False and USE_SCIPY:
        from ..utils.imports import install_command

        raise ImportError("averaging.USE_SCIPY is True but SciPy's sparse kernel is not available (the [fast] "
                          f"extra): `{install_command(['fast'])}`")
    return _kernel or None


def _sparse_sums(
    table: np.ndarray, index: np.ndarray, lengths: np.ndarray, out: np.ndarray | None, add: bool
) -> np.ndarray | None:
    """:func:`segment_sum_lengths` as one CSR × dense product (a row of ones per segment), or None.

    None: not applicable (no SciPy, a small sum before SciPy was imported, a table the kernel cannot read as it is,
    nothing to sum).
    """
    count, dim = len(lengths), table.shape[1]
    if not count or not dim or not len(table) or not table.flags.c_contiguous or table.dtype not in (np.float32,
                                                                                                      np.float64):
        return None
    kernel = _csr_kernel(len(index))
    if kernel is None:
        return None
    lengths = np.asarray(lengths, dtype=np.int64)
    index = np.asarray(index, dtype=np.int64)
    if len(index) and (int(index.min()) < 0 or int(index.max()) >= len(table)):  # the kernel does not check
        raise IndexError(f"row ids in [{index.min()}, {index.max()}] outside a table of {len(table)} rows")
    indptr = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    direct = out is not None and out.flags.c_contiguous and out.dtype == table.dtype
    target = out if direct else np.zeros((count, dim), dtype=table.dtype)
    if direct and not add:
        target.fill(0)
    kernel(count, len(table), dim, indptr, index, np.ones(len(index), dtype=table.dtype), table.reshape(-1),
           target.reshape(-1))
    if out is None or direct:
        return target
    if add:
        out += target
    else:
        out[...] = target
    return out


def segment_sum_lengths(
    table: np.ndarray, index: np.ndarray, lengths: np.ndarray, out: np.ndarray | None = None, add: bool = False
) -> np.ndarray:
    """Sums of ``table[index]`` over consecutive segments of ``lengths`` rows (``[len(lengths), dim]``; empty: zero).

    With SciPy (:data:`USE_SCIPY`): one compiled CSR × dense product, each row added straight into its segment's sum.
    In NumPy: segments of equal length are summed together, a block at a time: the block's rows are gathered into a
    small reused buffer (``np.take``, no allocation; :data:`SCRATCH_BYTES`, so they are still in cache when read) and
    summed over the length axis of its ``[segments, length, dim]`` view, one NumPy call each; the sums of a length's
    segments are collected side by side (:data:`GROUP_BYTES`) and written to the output with one indexed assignment,
    not one per block. Every row is read from the table once and no ``[rows, dim]`` array is built; a segment longer
    than a block (a long document) is summed a block at a time, so memory stays bounded. Sums are in the table's dtype.

    ``out``: where to write the sums (a ``[len(lengths), dim]`` array or view of the table's dtype; every row is
    written), or, with ``add``, to which to add them (rows of empty segments unchanged).
    """
    summed = _sparse_sums(table, index, lengths, out, add)
    return summed if summed is not None else _numpy_sums(table, index, lengths, out, add)


def _numpy_sums(
    table: np.ndarray, index: np.ndarray, lengths: np.ndarray, out: np.ndarray | None, add: bool
) -> np.ndarray:
    """:func:`segment_sum_lengths` in NumPy: equal-length segments together, a cache-sized block of rows at a time."""
    count, dim = len(lengths), table.shape[1]
    if out is None:
        out = np.zeros((count, dim), dtype=table.dtype) if add else np.empty((count, dim), dtype=table.dtype)
    if not count:
        return out
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order]
    edges = [0, *(np.flatnonzero(sorted_lengths[1:] != sorted_lengths[:-1]) + 1).tolist(), count]
    rows_per_block = max(1, SCRATCH_BYTES // (dim * table.itemsize))
    scratch = np.empty((rows_per_block, dim), dtype=table.dtype)
    group_rows = max(1, GROUP_BYTES // (dim * table.itemsize))
    sums = np.empty((min(group_rows, count), dim), dtype=table.dtype)
    take, total = np.take, np.add.reduce
    for a, b in zip(edges[:-1], edges[1:], strict=False):
        size = int(sorted_lengths[a])
        if size == 0:
            if not add:
                out[order[a:b]] = 0
            continue
        if size > rows_per_block:  # long segments (documents): one at a time, a block of rows after the other
            for segment in order[a:b].tolist():
                acc = np.zeros(dim, dtype=table.dtype)
                for c in range(starts[segment], starts[segment] + size, rows_per_block):
                    rows = index[c : min(c + rows_per_block, starts[segment] + size)]
                    acc += total(take(table, rows, axis=0, out=scratch[: len(rows)]), axis=0, out=sums[0])
                if add:
                    out[segment] += acc
                else:
                    out[segment] = acc
            continue
        step = max(1, rows_per_block // size)
        for g in range(a, b, group_rows):  # a chunk of the segments of this length: sums side by side in ``sums``
            group = order[g : min(g + group_rows, b)]
            # the rows of every segment of this chunk, segment after segment
            rows = index[(starts[group][:, None] + np.arange(size)).ravel()] if size > 1 else index[starts[group]]
            chunk = sums[: len(group)]
            if size == 1:
                take(table, rows, axis=0, out=chunk)
            else:
                for c in range(0, len(group), step):
                    n = min(step, len(group) - c)
                    block = take(table, rows[c * size : (c + n) * size], axis=0, out=scratch[: n * size])
                    total(block.reshape(n, size, dim), axis=1, out=chunk[c : c + n])
            if add:  # one scattered write per chunk, not per block
                out[group] += chunk
            else:
                out[group] = chunk
    return out


def _counts(segment: np.ndarray, count: int) -> np.ndarray:
    return np.bincount(segment, minlength=count).astype(np.int64)


class AveragingModel:
    """The tables and rules of an averaging ParaNMT model, for NumPy inference.

    Args:
        tables: each component's embedding table (``[vocab_size, embedding_dim]`` float32; views of a torch model's
            weights are fine).
        components: the resolved components (``ParaNMTConfig.resolved_components()`` / ``resolve_components``):
            ``unk_token_id``, ``unknown_token_ids``, ``drop_unknown_tokens``.
        combination: ``"concat"`` or ``"add"``.
        pooling: ``"mean"`` or ``"max"``.
        max_seq_length: tokens read per sentence and component (``None``: all).
    """

    def __init__(
        self,
        tables: Sequence[np.ndarray],
        components: Sequence[dict[str, Any]],
        combination: str = "concat",
        pooling: str = "mean",
        max_seq_length: int | None = None,
    ) -> None:
        if len(tables) != len(components):
            raise ValueError(f"{len(tables)} tables for {len(components)} components")
        self.tables = [np.asarray(t) for t in tables]
        for table, spec in zip(self.tables, components, strict=True):
            if table.ndim != 2 or table.shape[0] != int(spec["vocab_size"]) or table.dtype != np.float32:
                raise ValueError(f"a {spec['kind']} table must be float32 [{spec['vocab_size']}, dim], got "
                                 f"{table.dtype} {list(table.shape)}")
        self.components = [dict(c) for c in components]
        self.combination = combination
        self.pooling = pooling
        self.max_seq_length = max_seq_length
        self.unk = [int(c["unk_token_id"]) for c in components]
        self.unknown = [np.asarray(sorted({int(c["unk_token_id"]), *map(int, c["unknown_token_ids"])}),
                                   dtype=np.int64) for c in components]
        self.drop = [bool(c["drop_unknown_tokens"]) for c in components]
        self.dims = [t.shape[1] for t in self.tables]
        self.bounds = np.cumsum([0, *self.dims]).tolist()
        self.offsets = np.cumsum([0, *(t.shape[0] for t in self.tables)]).tolist()
        if combination == "add" and len(set(self.dims)) > 1:
            raise ValueError(f"combination='add' needs components of equal size, got {self.dims}")
        self.dim = self.dims[0] if combination == "add" else sum(self.dims)

    def finish(self, sums: np.ndarray, counts: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Sentence embeddings from each component's row sums (``[B, sum(dims)]``) and counts (``[B, K]``).

        A component with no token in a sentence gives its unknown token's row (as the model does). The means are
        taken in place in ``sums``, which is the result for ``concat`` (and single) models; ``add`` models write the
        sum of the components into ``out`` (a new array when None).
        """
        for k, (a, b) in enumerate(zip(self.bounds[:-1], self.bounds[1:], strict=True)):
            part, n = sums[:, a:b], counts[:, k]
            empty = n == 0
            np.divide(part, np.where(empty, 1, n).astype(np.float32)[:, None], out=part)
            if empty.any():
                part[empty] = self.tables[k][self.unk[k]]
        if self.combination != "add" or len(self.tables) == 1:
            if out is not None and out is not sums:
                out[...] = sums[:, : self.dim]
                return out
            return sums
        out = np.empty((len(sums), self.dim), dtype=np.float32) if out is None else out
        np.add(sums[:, : self.dims[0]], sums[:, self.dims[0] : self.bounds[2]], out=out)
        for a, b in zip(self.bounds[2:-1], self.bounds[3:], strict=True):
            out += sums[:, a:b]
        return out

    def embed_token_ids(self, flat: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Embeddings of a batch given as flat model ids (every component's, shifted) and per-sentence lengths.

        Raises:
            ValueError: an id outside every component's range.
        """
        flat = np.asarray(flat, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        count = len(lengths)
        if flat.size and (flat.min() < 0 or flat.max() >= self.offsets[-1]):
            raise ValueError(f"token ids in [{flat.min()}, {flat.max()}] outside the model's vocabulary "
                             f"[0, {self.offsets[-1]}): was the input made by this model's tokenizer?")
        sentence = np.repeat(np.arange(count), lengths)
        sums = np.zeros((count, self.bounds[-1]), dtype=np.float32)
        counts = np.zeros((count, len(self.tables)), dtype=np.int64)
        maxima = []
        for k, table in enumerate(self.tables):
            mine = (flat >= self.offsets[k]) & (flat < self.offsets[k + 1])
            ids, owner = flat[mine] - self.offsets[k], sentence[mine]
            if self.max_seq_length is not None:
                sizes = np.bincount(owner, minlength=count)
                keep = run_places(0, sizes) < self.max_seq_length
                ids, owner = ids[keep], owner[keep]
            if self.drop[k]:
                keep = ~np.isin(ids, self.unknown[k])
                ids, owner = ids[keep], owner[keep]
            counts[:, k] = _counts(owner, count)
            if self.pooling == "max":
                part = np.repeat(table[self.unk[k]][None, :], count, axis=0)
                filled = counts[:, k] > 0
                if filled.any():
                    starts = (np.cumsum(counts[:, k]) - counts[:, k])[filled]
                    part[filled] = np.maximum.reduceat(table[ids], starts, axis=0)
                maxima.append(part)
            else:
                segment_sum_lengths(table, ids, counts[:, k], out=sums[:, self.bounds[k] : self.bounds[k + 1]])
        if self.pooling == "max":
            if self.combination == "add":
                return np.sum(maxima, axis=0, dtype=np.float32)
            return np.concatenate(maxima, axis=1) if len(maxima) > 1 else maxima[0]
        return self.finish(sums, counts)


class ChunkAverager:
    """Embeds texts with an :class:`AveragingModel`, from the chunk cache of its fast token ids.

    Args:
        model: the tables and rules.
        ids: exact token ids of a batch (flat, shifted; lengths): the fast path, or the tokenizer's reference path.
        fast: the batched fast path of the tokenizer (``fast_token_ids``), whose chunk cache this extends with
            per-chunk sums; ``None``: every text goes through ``ids``.
        cache_bytes: memory for cached chunk vectors before the chunk cache starts over.
    """

    def __init__(
        self, model: AveragingModel, ids: Ids, fast: FastIds | None = None, cache_bytes: int = DEFAULT_CACHE_BYTES
    ) -> None:
        self.model = model
        self.ids = ids
        self.fast = fast if hasattr(fast, "chunk_plan") else None
        self.parts: list[ChunkStore] = list(self.fast.parts) if self.fast is not None else []
        if self.fast is not None and len(self.parts) != len(model.tables):
            raise ValueError(f"the tokenizer has {len(self.parts)} components, the model {len(model.tables)}")
        self.max_entries = max(4096, cache_bytes // (4 * max(1, model.bounds[-1])))
        for part in self.parts:
            part.max_entries = min(part.max_entries, self.max_entries)
        self.clear()

    def clear(self) -> None:
        """Forget the cached chunk vectors (e.g. after the tables changed); the cached token ids stay.

        Their memory is kept for the next vectors (a buffer the size of the cache's high-water mark).
        """
        self._generation = -1
        self._filled = 0
        if not hasattr(self, "_vectors"):
            self._vectors = np.zeros((0, self.model.bounds[-1]), dtype=np.float32)
            self._kept = np.zeros((0, len(self.model.tables)), dtype=np.int64)

    def _fill(self) -> None:
        """Sums and counts of the cache entries that have none yet (all of them after the cache started over)."""
        lead = self.parts[0]
        if lead.generation != self._generation:
            self._generation, self._filled = lead.generation, 1  # entry 0 separates sentences: no ids
        n, start = lead.entries, self._filled
        if n <= start:
            return
        if n > len(self._vectors):
            size = min(max(n, 2 * len(self._vectors), 4096), max(n, self.max_entries + 65536))
            vectors = np.empty((size, self._vectors.shape[1]), dtype=np.float32)
            kept = np.empty((size, self._kept.shape[1]), dtype=np.int64)
            used = min(start, len(self._vectors))
            vectors[:used], kept[:used] = self._vectors[:used], self._kept[:used]
            self._vectors, self._kept = vectors, kept
        self._vectors[0], self._kept[0] = 0, 0
        new = np.arange(start, n)
        for k, (part, table) in enumerate(zip(self.parts, self.model.tables, strict=True)):
            ids, lens = part.chunk_ids.gather(new)
            owner = np.repeat(np.arange(len(new)), lens)
            if self.model.drop[k]:
                keep = ~np.isin(ids, self.model.unknown[k])
                ids, owner = ids[keep], owner[keep]
            a, b = self.model.bounds[k], self.model.bounds[k + 1]
            kept = _counts(owner, len(new))
            segment_sum_lengths(table, ids, kept, out=self._vectors[start:n, a:b])
            self._kept[start:n, k] = kept
        self._filled = n

    def __call__(self, texts: Sequence[str], out: np.ndarray | None = None) -> np.ndarray:
        """Sentence embeddings ``[len(texts), dim]`` (float32), written into ``out`` when given (and returned)."""
        texts = list(texts)
        model = self.model
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32) if out is None else out
        plan = self.fast.chunk_plan(texts) if self.fast is not None and model.pooling == "mean" else None
        if plan is None:
            embedded = model.embed_token_ids(*self.ids(texts))
            if out is None:
                return embedded
            out[...] = embedded
            return out
        ks, redo = plan
        self._fill()
        count = len(texts)
        marks = np.cumsum(ks == 0)
        is_chunk = ks != 0
        rows, sentence = ks[is_chunk], marks[is_chunk]
        chunks = np.bincount(sentence, minlength=count)
        in_place = out is not None and model.dim == model.bounds[-1]  # concat (or one component): sums -> out
        sums = out if in_place else np.empty((count, model.bounds[-1]), dtype=np.float32)
        segment_sum_lengths(self._vectors, rows, chunks, out=sums)
        counts = np.zeros((count, len(self.parts)), dtype=np.int64)
        for k in range(len(self.parts)):
            counts[:, k] = np.bincount(sentence, weights=self._kept[rows, k], minlength=count)
        redo = set(redo)
        limit = model.max_seq_length
        pairs = np.flatnonzero(is_chunk[:-1] & is_chunk[1:])  # a trigram across the space between two chunks
        for k, part in enumerate(self.parts):
            totals = None
            if limit is not None:
                totals = np.bincount(sentence, weights=part.chunk_ids.counts[rows], minlength=count).astype(np.int64)
            if isinstance(part, TrigramIds):
                wordless = part.chunk_ids.counts[rows] == 0  # a chunk without words (never expected): the id path
                if wordless.any():
                    redo.update(sentence[wordless].tolist())
                space = np.full(len(pairs), 32, dtype=np.int64)
                ids = part.ids(part.last[ks[pairs]], space, part.first[ks[pairs + 1]])
                owner = marks[pairs]
                if totals is not None:
                    totals += _counts(owner, count)
                if model.drop[k]:
                    keep = ~np.isin(ids, model.unknown[k])
                    ids, owner = ids[keep], owner[keep]
                a, b = model.bounds[k], model.bounds[k + 1]
                between = _counts(owner, count)
                segment_sum_lengths(model.tables[k], ids, between, out=sums[:, a:b], add=True)
                counts[:, k] += between
            if totals is not None:
                redo.update(np.flatnonzero(totals > limit).tolist())
        out = model.finish(sums, counts, out)
        if redo:
            again = sorted(redo)
            out[again] = model.embed_token_ids(*self.ids([texts[i] for i in again]))
        return out


__all__ = ["AveragingModel", "ChunkAverager", "DEFAULT_CACHE_BYTES"]

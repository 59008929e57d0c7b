"""Add ``paraphrase_score`` (cosine under a paranmt_hf model) and ``trigram_overlap`` to any pair corpus.

This is "build your own ParaNMT": back-translate the non-English side of your bitext, pair the translations with the
English references, and score them like ParaNMT-50M (whose score is the cosine of averaged PARAGRAM-PHRASE
embeddings; any paranmt_hf encoder can play that role).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from .overlap import trigram_overlap


def cosine_scores(encoder: Any, texts_a: list[str], texts_b: list[str], batch_size: int = 1024) -> np.ndarray:
    """Row-wise cosine similarity of the embeddings of ``texts_a[i]`` and ``texts_b[i]`` (0 for a zero vector)."""
    if len(texts_a) != len(texts_b):
        raise ValueError(f"need as many first as second sides ({len(texts_a)} vs {len(texts_b)})")
    if not texts_a:
        return np.zeros(0, dtype=np.float32)
    emb_a = encoder.encode(texts_a, batch_size=batch_size, normalize=True, show_progress_bar=False)
    emb_b = encoder.encode(texts_b, batch_size=batch_size, normalize=True, show_progress_bar=False)
    return np.einsum("ij,ij->i", np.asarray(emb_a, np.float32), np.asarray(emb_b, np.float32))


def annotate_pairs(
    records: Iterable[Mapping[str, Any]],
    encoder: Any | None = None,
    overlap: bool = True,
    tokenizer: str = "nltk",
    chunk_size: int = 8192,
    batch_size: int = 1024,
) -> Iterator[dict[str, Any]]:
    """Yield each record with ``score`` (replaced by the model's cosine when ``encoder`` is given) and ``overlap``.

    Args:
        records: dicts with ``text_a``/``text_b`` (and optional ``score``/``overlap``), e.g. from
            :func:`paranmt_hf.corpus.records.iter_records`.
        encoder: a :class:`paranmt_hf.ParaNMTEncoder` (anything with ``encode(texts, batch_size, normalize,
            show_progress_bar)``); None keeps the records' own scores.
        overlap: add the papers' trigram overlap when the record has none.
        tokenizer: overlap tokenizer (``"nltk"`` or ``"whitespace"``).
        chunk_size: records embedded together (memory stays bounded by one chunk).
        batch_size: encoder batch size.
    """
    iterator = iter(records)
    while chunk := [dict(r) for r in itertools.islice(iterator, chunk_size)]:
        if encoder is not None:
            scores = cosine_scores(encoder, [r["text_a"] for r in chunk], [r["text_b"] for r in chunk], batch_size)
            for record, score in zip(chunk, scores, strict=True):
                record["score"] = float(score)
        for record in chunk:
            if overlap and record.get("overlap") is None:
                record["overlap"] = trigram_overlap(record["text_a"], record["text_b"], tokenizer)
            yield record

"""Add ``paraphrase_score`` (cosine under a paranmt_hf model) and ``trigram_overlap`` to any pair corpus.

This is "build your own ParaNMT": back-translate the non-English side of your bitext, pair the translations with the
English references, and score them like ParaNMT-50M (whose score is the cosine of averaged PARAGRAM-PHRASE
embeddings; any paranmt_hf encoder can play that role). :class:`AnnotateTask` does it block by block for
``paranmt-hf corpus annotate`` (each worker process loads the model once; memory stays bounded by a block).
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.reader import Block
from ..data.records import parse_block
from ..data.writer import format_numbers
from .output import compress_block
from .overlap import overlaps_many
from .pipeline import BlockResult, BlockTask


def cosine_scores(encoder: Any, texts_a: list[str], texts_b: list[str], batch_size: int = 1024,
                  **encode_kwargs: Any) -> np.ndarray:
    """Row-wise cosine similarity of the embeddings of ``texts_a[i]`` and ``texts_b[i]`` (0 for a zero vector)."""
    if len(texts_a) != len(texts_b):
        raise ValueError(f"need as many first as second sides ({len(texts_a)} vs {len(texts_b)})")
    if not texts_a:
        return np.zeros(0, dtype=np.float32)
    options = {"batch_size": batch_size, "normalize_embeddings": True, "show_progress_bar": False, **encode_kwargs}
    emb_a = encoder.encode(texts_a, **options)
    emb_b = encoder.encode(texts_b, **options)
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
        encoder: a :class:`paranmt_hf.ParaNMTEncoder` (anything with ``encode(texts, batch_size, normalize_embeddings,
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
        if overlap:
            todo = [r for r in chunk if r.get("overlap") is None]
            values = overlaps_many([r["text_a"] for r in todo], [r["text_b"] for r in todo], tokenizer)
            for record, value in zip(todo, values, strict=True):
                record["overlap"] = value
        yield from chunk


@dataclass
class AnnotateTask(BlockTask):
    """Score (model cosine) and overlap for the pairs of one block; the payload is the output lines as bytes.

    Output columns: ``text_a, text_b, score[, overlap]`` (the ``para-nmt-50m.txt`` format plus the overlap).
    Without ``model`` each pair keeps its own score (lines without one are an error).
    """

    model: str | os.PathLike[str] | None = None
    fmt: str = "pairs"
    strict: bool = False
    overlap: bool = True
    tokenizer: str = "nltk"
    batch_size: int = 8192
    compress: bool = False
    _encoder: Any = field(default=None, init=False, repr=False)

    def setup(self) -> None:
        """Load what the blocks need (once per process)."""
        if self.model is not None and self._encoder is None:
            from ..model.encoder import ParaNMTEncoder

            self._encoder = ParaNMTEncoder.from_pretrained(self.model)
        if self.overlap and self.tokenizer == "nltk":
            from .tokens import shared_tokenizer

            shared_tokenizer()

    def __call__(self, block: Block) -> BlockResult:
        """The result of one block."""
        parsed = parse_block(block, self.fmt, self.strict)
        a, b = parsed.text_a, parsed.text_b
        if self._encoder is not None:
            scores = cosine_scores(self._encoder, a, b, self.batch_size, num_processes=1).tolist()
        else:
            scores = parsed.score
            if any(s is None for s in scores):
                line = parsed.numbers[scores.index(None)]
                raise ValueError(f"{block.source}:{line}: no score to keep: pass --model to score the pairs")
        columns = [a, b, format_numbers(scores)]
        if self.overlap:
            overlap = list(parsed.overlap)
            todo = [i for i, v in enumerate(overlap) if v is None]
            for i, value in zip(todo, overlaps_many([a[i] for i in todo], [b[i] for i in todo], self.tokenizer),
                                strict=True):
                overlap[i] = value
            columns.append(format_numbers(overlap))
        lines = list(map("\t".join, zip(*columns, strict=True)))
        data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        return BlockResult(compress_block(data) if self.compress else data, block.lines,
                           Counter({"annotated": len(lines)}), parsed.report)

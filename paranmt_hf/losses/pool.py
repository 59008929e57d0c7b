"""The mega-batch pool: one entry per mini-batch (token ids, unit embeddings, text hashes), gathered under DDP."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch import Tensor

from .features import Rows, hash_rows, rows_from_features
from .mining import all_gather_dim0, distributed_ready

INPUT_KEYS = ("input_ids", "attention_mask", "offsets", "token_type_ids")
"""Tensor features kept from a mini-batch (non-tensor entries such as ``modality`` are kept too)."""


@dataclass
class PoolEntry:
    """One mini-batch of the mega-batch: its sentences (per column), their unit embeddings and text hashes.

    ``units``: the sentence embeddings scaled to unit length (detached, float32), what mining compares; scaled once
    when the mini-batch joins the pool, not at each of the M steps it is a candidate in.
    """

    rows: tuple[Rows, Rows]
    units: tuple[Tensor, Tensor]
    hashes: tuple[Tensor, Tensor]
    translation: Tensor | None = None
    """[B] bool per pair: a translation (X-English, English first) whose negatives come from the other language, or
    a paraphrase pair (negatives among all sentences); ``None``: every pair follows the loss's ``candidates``."""

    def __len__(self) -> int:
        return len(self.rows[0])


def make_entry(
    inputs: list[dict[str, Any]], anchors: Tensor, positives: Tensor, translation: Tensor | None = None,
    rows: list[Rows] | None = None,
) -> PoolEntry:
    """The pool entry of a mini-batch: its two feature dicts, embeddings and (optional) pair kinds.

    ``rows``: the feature dicts' sentences as :class:`Rows`, when the caller has them already.
    """
    rows = tuple((rows_from_features(f) if rows is None else r).to(anchors.device)
                 for f, r in zip(inputs, rows or [None, None], strict=True))
    kinds = None if translation is None else translation.to(anchors.device).bool()
    return PoolEntry(rows, (unit_rows(anchors), unit_rows(positives)), tuple(hash_rows(r) for r in rows), kinds)


def unit_rows(embeddings: Tensor) -> Tensor:
    """Sentence embeddings [B, D] scaled to unit length (detached, float32): the cosine of two is their dot product."""
    return F.normalize(embeddings.detach().float(), dim=-1)


def gather_entry(entry: PoolEntry) -> tuple[PoolEntry, int]:
    """The mini-batches of all processes as one entry (rank order), and where this process's pairs start in it.

    Without a process group of several processes, returns ``(entry, 0)``.
    """
    if not distributed_ready():
        return entry, 0
    import torch.distributed as dist

    def gathered_rows(rows: Rows) -> Rows:
        ids, lengths = all_gather_dim0(rows.ids), all_gather_dim0(rows.lengths)
        return Rows.cat([Rows(i, n) for i, n in zip(ids, lengths, strict=True)])

    rows = (gathered_rows(entry.rows[0]), gathered_rows(entry.rows[1]))
    sizes = [len(x) for x in all_gather_dim0(entry.hashes[0])]
    units = tuple(torch.cat(all_gather_dim0(u)) for u in entry.units)
    hashes = tuple(torch.cat(all_gather_dim0(h)) for h in entry.hashes)
    translation = None if entry.translation is None else torch.cat(all_gather_dim0(entry.translation))
    return PoolEntry(rows, units, hashes, translation), sum(sizes[: dist.get_rank()])

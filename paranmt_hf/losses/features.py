"""Token-id bookkeeping for the mega-batch loss: one row layout for padded and flat (EmbeddingBag) features.

sentence-transformers hands a loss one feature dict per text column. Padded models give ``input_ids`` [B, L] with an
``attention_mask``; ``StaticEmbedding`` and the averaging ``ParaNMTInputModule`` give flat ``input_ids`` [N] with
bag start ``offsets`` [B]. The loss keeps the texts of past mini-batches as *rows*: every token id of every sentence
back to back (``ids`` [N]) plus the number of tokens of each sentence (``lengths`` [B]). From rows it can select any
sentences and rebuild features in the layout the model reads, without Python loops over sentences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class Rows:
    """Sentences as token ids back to back (``ids`` [N]) with the token count of each sentence (``lengths`` [B])."""

    ids: torch.Tensor
    lengths: torch.Tensor

    def __len__(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def starts(self) -> torch.Tensor:
        """Index in ``ids`` of the first token of each sentence."""
        return torch.cumsum(self.lengths, 0) - self.lengths

    def select(self, index: torch.Tensor) -> Rows:
        """The sentences at ``index`` (any order, repeats allowed)."""
        lengths = self.lengths[index]
        total = int(lengths.sum())
        within = torch.arange(total, device=self.ids.device) - torch.repeat_interleave(
            torch.cumsum(lengths, 0) - lengths, lengths, output_size=total
        )
        source = torch.repeat_interleave(self.starts[index], lengths, output_size=total) + within
        return Rows(self.ids[source], lengths)

    def to(self, device: torch.device) -> Rows:
        """The same rows on ``device``."""
        return Rows(self.ids.to(device), self.lengths.to(device))

    @staticmethod
    def cat(parts: list[Rows]) -> Rows:
        """Concatenate several row sets (sentences of ``parts[0]`` first)."""
        return Rows(torch.cat([p.ids for p in parts]), torch.cat([p.lengths for p in parts]))


def is_flat(features: dict[str, Any]) -> bool:
    """Whether ``features`` use the flat EmbeddingBag layout (``input_ids`` [N] + ``offsets`` [B])."""
    return "offsets" in features and features["input_ids"].dim() == 1


def rows_from_features(features: dict[str, Any]) -> Rows:
    """The sentences of a feature dict (either layout) as :class:`Rows`."""
    ids = features["input_ids"]
    if is_flat(features):
        offsets = features["offsets"].long()
        lengths = torch.diff(offsets, append=offsets.new_tensor([ids.shape[0]]))
        return Rows(ids.long(), lengths)
    if ids.dim() != 2:
        raise ValueError(f"input_ids must be [batch, length] or flat with offsets, got shape {tuple(ids.shape)}")
    mask = features.get("attention_mask")
    valid = torch.ones_like(ids, dtype=torch.bool) if mask is None else mask.bool()
    return Rows(ids[valid].long(), valid.sum(dim=1))


def features_from_rows(rows: Rows, template: dict[str, Any]) -> dict[str, Any]:
    """Model inputs for ``rows`` in the layout of ``template`` (a feature dict of the current mini-batch).

    Flat templates give ``input_ids`` + ``offsets``. Padded templates give right-padded ``input_ids`` and
    ``attention_mask`` (and zero ``token_type_ids`` if the template has them); the padding id is the one the
    template uses. Non-tensor entries of the template (such as ``modality``) are copied.
    """
    out: dict[str, Any] = {k: v for k, v in template.items() if not isinstance(v, torch.Tensor)}
    ids, lengths = rows.ids, rows.lengths
    if is_flat(template):
        out["input_ids"] = ids.to(template["input_ids"].dtype)
        out["offsets"] = (torch.cumsum(lengths, 0) - lengths).to(template["offsets"].dtype)
        return out
    count = int(lengths.shape[0])
    width = max(1, int(lengths.max())) if count else 1
    row = torch.repeat_interleave(torch.arange(count, device=ids.device), lengths, output_size=int(ids.shape[0]))
    col = torch.arange(ids.shape[0], device=ids.device) - torch.repeat_interleave(
        torch.cumsum(lengths, 0) - lengths, lengths, output_size=int(ids.shape[0])
    )
    template_ids = template["input_ids"]
    padded = torch.full((count, width), pad_value(template), dtype=template_ids.dtype, device=ids.device)
    padded[row, col] = ids.to(template_ids.dtype)
    out["input_ids"] = padded
    mask = torch.zeros((count, width), dtype=torch.bool, device=ids.device)
    mask[row, col] = True
    mask_dtype = template["attention_mask"].dtype if "attention_mask" in template else torch.long
    out["attention_mask"] = mask.to(mask_dtype)
    if "token_type_ids" in template:
        out["token_type_ids"] = torch.zeros_like(padded)
    return out


def pad_value(features: dict[str, Any]) -> int:
    """The padding id used in padded ``features`` (0 if no position is padded)."""
    mask = features.get("attention_mask")
    if mask is None or bool(mask.bool().all()):
        return 0
    return int(features["input_ids"][~mask.bool()][0])


_WEIGHTS: list[torch.Tensor] = []
_MASK64 = (1 << 64) - 1


def _position_weights(length: int) -> torch.Tensor:
    """Odd 64-bit pseudo-random weights of the first ``length`` token positions (splitmix64; cached, grown)."""
    if not _WEIGHTS or _WEIGHTS[0].shape[0] < length:
        values, state = [], 0
        for _ in range(max(length, 2 * (_WEIGHTS[0].shape[0] if _WEIGHTS else 0), 64)):
            state = (state + 0x9E3779B97F4A7C15) & _MASK64
            z = (state ^ (state >> 30)) * 0xBF58476D1CE4E5B9 & _MASK64
            z = (z ^ (z >> 27)) * 0x94D049BB133111EB & _MASK64
            z = (z ^ (z >> 31)) | 1
            values.append(z - (1 << 64) if z >= 1 << 63 else z)  # as a signed int64
        _WEIGHTS[:] = [torch.tensor(values, dtype=torch.int64)]
    return _WEIGHTS[0][:length]


def hash_rows(rows: Rows) -> torch.Tensor:
    """A 64-bit fingerprint of each sentence's token ids [B]: equal ids, equal hash.

    ``sum_i (id_i + 1) * w_i`` modulo 2**64 (int64 products and sums wrap around, as torch's CPU and CUDA kernels
    do), with odd pseudo-random weights ``w_i`` per position: two different sentences collide only if their id
    differences weighted by ``w`` sum to 0 modulo 2**64, for token ids about once in 2**64 pairs. Four tensor ops per
    token. Sentences that tokenize identically have identical embeddings, so this is the identity the loss excludes.
    """
    count = len(rows)
    ids = rows.ids.long()
    if ids.numel() == 0:
        return torch.zeros(count, dtype=torch.int64, device=ids.device)
    bag = torch.repeat_interleave(torch.arange(count, device=ids.device), rows.lengths, output_size=int(ids.shape[0]))
    position = torch.arange(ids.shape[0], device=ids.device) - rows.starts[bag]
    weights = _position_weights(int(rows.lengths.max())).to(ids.device)[position]
    return torch.zeros(count, dtype=torch.int64, device=ids.device).index_add_(0, bag, (ids + 1) * weights)

"""Texts to model inputs: the one featuriser every loader uses (``ParaNMTEncoder``, the sentence-transformers module).

Flat ``input_ids`` + ``offsets`` (averaging encoders: ``StaticEmbedding``'s layout) or padded ``input_ids`` +
``attention_mask`` (recurrent), with the tokenizer's ids (no special tokens): from its batch call, or where paranmt_hf
is installed from ``paranmt_hf.model.token_ids.fast_token_ids`` (the same ids, batched and cached per chunk).
Hub remote code: imports numpy, torch and its siblings, and paranmt_hf only inside a guard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

try:  # paranmt_hf installed: its batched, cached token ids (exactly the tokenizer's ids, faster)
    from paranmt_hf.model.token_ids import fast_token_ids
except ImportError:  # pragma: no cover - exercised where paranmt_hf is not installed
    fast_token_ids = None


def reference_token_ids(tokenizer: Any, sentences: Sequence[str]) -> list[list[int]]:
    """Token ids straight from the tokenizer (no special tokens): the definition every path matches."""
    if hasattr(tokenizer, "encode_ids"):  # ParaNMTTokenizer
        return [tokenizer.encode_ids(s) for s in sentences]
    return [e.ids for e in tokenizer.backend_tokenizer.encode_batch_fast(list(sentences), add_special_tokens=False)]


def component_vocab_sizes(tokenizer: Any) -> list[int]:
    """Vocabulary size of each model component as ``tokenizer`` sees it."""
    return list(getattr(tokenizer, "component_vocab_sizes", None) or [len(tokenizer)])


def lengths_to_offsets(lengths: np.ndarray) -> np.ndarray:
    """Start offset of each sentence's ids in the flat id array, from the sentence lengths."""
    offsets = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return offsets


class ParaNMTFeaturizer:
    """Texts -> ``ParaNMTModel`` inputs, with the tokenizer's ids.

    Args:
        tokenizer: the model's tokenizer (transformers fast tokenizer, or ``ParaNMTTokenizer``).
        flat: the flat layout (the model's ``accepts_flat_input``) instead of padded ids + mask.
        pad_token_id: padding id of the padded layout.
    """

    def __init__(self, tokenizer: Any, flat: bool, pad_token_id: int = 0) -> None:
        self.tokenizer = tokenizer
        self.flat = flat
        self.pad_token_id = int(pad_token_id)
        self._fast: Any = None  # paranmt_hf's fast ids, built on first use (False: none for this tokenizer)

    @classmethod
    def for_model(cls, model: Any, tokenizer: Any) -> ParaNMTFeaturizer:
        """The featuriser of ``model`` with ``tokenizer`` (whose vocabulary sizes must be the components')."""
        expected = [c["vocab_size"] for c in model.config.resolved_components()]
        found = component_vocab_sizes(tokenizer)
        if expected != found:
            raise ValueError(f"tokenizer vocabulary sizes {found} do not match the model's components {expected}")
        return cls(tokenizer, model.accepts_flat_input, model.config.pad_token_id)

    @property
    def fast_ids(self) -> Any:
        """paranmt_hf's batched ids for this tokenizer (None: no paranmt_hf, or not a tokenizer it reproduces)."""
        if self._fast is None:
            self._fast = (fast_token_ids(self.tokenizer) if fast_token_ids is not None else None) or False
        return self._fast or None

    def reference_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Token ids straight from the tokenizer, one list per sentence."""
        return reference_token_ids(self.tokenizer, sentences)

    def token_ids(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """All token ids of a batch back to back (int64) and the number of tokens of each sentence."""
        fast = self.fast_ids
        if fast is not None and len(sentences):
            return fast(list(sentences))
        ids = self.reference_ids(sentences)
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        return np.fromiter((t for x in ids for t in x), dtype=np.int64, count=int(lengths.sum())), lengths

    def __call__(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Flat ``input_ids`` + ``offsets`` (averaging) or padded ``input_ids`` + ``attention_mask``.

        Combinations on the fast path also get ``component_lengths`` (each sentence's number of ids per component).
        """
        fast = self.fast_ids if self.flat and len(sentences) else None
        if fast is not None and hasattr(fast, "with_component_lengths"):
            flat, lengths, per_component = fast.with_component_lengths(list(sentences))
            return {"input_ids": torch.from_numpy(flat), "offsets": torch.from_numpy(lengths_to_offsets(lengths)),
                    "component_lengths": torch.from_numpy(per_component)}
        flat, lengths = self.token_ids(sentences)
        if self.flat:
            return {"input_ids": torch.from_numpy(flat), "offsets": torch.from_numpy(lengths_to_offsets(lengths))}
        mask = np.arange(max(1, int(lengths.max(initial=0))))[None, :] < lengths[:, None]
        padded = np.full(mask.shape, self.pad_token_id, dtype=np.int64)
        padded[mask] = flat  # row by row, as the ids come
        return {"input_ids": torch.from_numpy(padded), "attention_mask": torch.from_numpy(mask.astype(np.int64))}


__all__ = ["ParaNMTFeaturizer", "reference_token_ids", "component_vocab_sizes", "lengths_to_offsets"]

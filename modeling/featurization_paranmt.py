"""Texts to model inputs: the one featuriser every loader uses.

``ParaNMTFeaturizer`` turns a batch of texts into the inputs of ``ParaNMTModel``: flat ``input_ids`` + ``offsets``
(averaging encoders and their combinations: the ``EmbeddingBag`` layout, no padding) or padded ``input_ids`` +
``attention_mask`` (recurrent encoders). ``ParaNMTEncoder``, the sentence-transformers module, the ONNX runner and
the training loss all use it. Token ids come from the batched fast path (``token_ids_paranmt.py``) when the tokenizer
is one it reproduces exactly, else from the tokenizer one sentence at a time: always the tokenizer's ids.

This file is Hub remote code: it imports only numpy, torch and its siblings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .token_ids_paranmt import FastIds, fast_token_ids, ids_to_flat, lengths_to_offsets
from .tokenization_paranmt import ParaNMTTokenizer
from .unigram_paranmt import run_places


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
        padded[rows, run_places(0, lengths)] = flat
        mask = (np.arange(width)[None, :] < lengths[:, None]).astype(np.int64)
        return padded, mask

    def __call__(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Model inputs for a batch: flat ``input_ids`` + ``offsets`` (averaging) or padded ids + mask.

        Combinations on the fast path also get ``component_lengths`` (how many ids of each sentence belong to each
        component), which spares the model a range test on every id.
        """
        fast = self.fast_ids if self.flat and sentences else None
        if fast is not None and hasattr(fast, "with_component_lengths"):
            flat, lengths, per_component = fast.with_component_lengths(sentences)
            return {"input_ids": torch.from_numpy(flat), "offsets": torch.from_numpy(lengths_to_offsets(lengths)),
                    "component_lengths": torch.from_numpy(per_component)}
        flat, lengths = self.token_ids(sentences)
        if self.flat:
            return {"input_ids": torch.from_numpy(flat), "offsets": torch.from_numpy(lengths_to_offsets(lengths))}
        padded, mask = self.pad(flat, lengths)
        return {"input_ids": torch.from_numpy(padded), "attention_mask": torch.from_numpy(mask)}


__all__ = ["ParaNMTFeaturizer", "reference_token_ids", "component_vocab_sizes", "lengths_to_offsets", "ids_to_flat"]

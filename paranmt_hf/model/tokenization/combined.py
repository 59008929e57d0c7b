"""One tokenizer for a combination of encoders (e.g. ParaNMT-50M's trigram + word model)."""

from __future__ import annotations

import json
from typing import Any

from ...modeling.tokenization_paranmt import ParaNMTTokenizer


def component_spec(tokenizer: Any) -> list[dict[str, Any]]:
    """The ParaNMTTokenizer component spec(s) of a tokenizer: a ParaNMTTokenizer, or a fast (tokenizer.json) one."""
    if isinstance(tokenizer, ParaNMTTokenizer):
        return tokenizer.component_specs()
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    if backend is None:
        raise TypeError(f"cannot combine a {type(tokenizer).__name__}: expected a ParaNMTTokenizer or fast tokenizer")
    return [{"kind": "tokenizers", "tokenizer": json.loads(backend.to_str())}]


def combine_tokenizers(tokenizers: list[Any]) -> ParaNMTTokenizer:
    """One tokenizer emitting the tokens of every component, component ``k`` shifted by the earlier vocab sizes.

    The model must be a ``ParaNMTConfig(components=[...])`` with the components in the same order and
    ``vocab_size`` equal to ``tokenizer.component_vocab_sizes``.
    """
    if len(tokenizers) < 2:
        raise ValueError("combine_tokenizers needs at least two tokenizers")
    specs = [spec for tok in tokenizers for spec in component_spec(tok)]
    return ParaNMTTokenizer(components=specs)

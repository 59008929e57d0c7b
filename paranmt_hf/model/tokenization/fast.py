"""Wrap a ``tokenizers.Tokenizer`` as a transformers fast tokenizer with the ParaNMT special tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokenizers import Tokenizer

from ...modeling.segmentation_paranmt import PAD_TOKEN, UNK_TOKEN

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast


def to_transformers(tok: Tokenizer, model_max_length: int = 10_000) -> PreTrainedTokenizerFast:
    """Return ``PreTrainedTokenizerFast(tokenizer_object=tok)`` with ``[PAD]``/``[UNK]`` set.

    No special tokens are added around sentences: the encoders average tokens, and ``[CLS]``-style tokens would
    change the mean.
    """
    from transformers import PreTrainedTokenizerFast

    if tok.token_to_id(PAD_TOKEN) != 0 or tok.token_to_id(UNK_TOKEN) != 1:
        raise ValueError(f"tokenizer vocabulary must have {PAD_TOKEN} at id 0 and {UNK_TOKEN} at id 1")
    tok.no_padding()
    tok.no_truncation()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD_TOKEN,
        unk_token=UNK_TOKEN,
        model_max_length=model_max_length,
        padding_side="right",
        split_special_tokens=True,  # "[PAD]" / "[UNK]" typed in text are words, not the special tokens
    )

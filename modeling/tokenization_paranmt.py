"""Tokenizer for ParaNMT models that ``tokenizers`` alone cannot express.

Used for character-trigram models (ParaNMT-50M: trigrams of ``" " + lower-cased sentence + " "``) and for
combinations of encoders, where one ``input_ids`` row carries the tokens of every component, component ``k`` shifted
by the vocabulary sizes of the components before it (see ``ParaNMTConfig``), and for word and trigram models that
read raw text with the lookup rules of the original ParaNMT-50M code (``LOOKUP_RULES``: converted ParaNMT-50M
models). Other word and sentencepiece models use a plain ``tokenizer.json`` instead.

This file is Hub remote code: it imports transformers, ``tokenizers`` (a hard dependency of transformers) and the
standard library only.
"""

from __future__ import annotations

import json
import os
from typing import Any

from transformers import BatchEncoding, PreTrainedTokenizer, PreTrainedTokenizerFast
from transformers.tokenization_utils_base import PaddingStrategy, TruncationStrategy

from .segmentation_paranmt import PAD_TOKEN, UNK_TOKEN, Segmenters

VOCAB_FILES_NAMES = {"vocab_file": "paranmt_tokenizer.json"}

_PLAIN_BATCH_OPTIONS = {
    "add_special_tokens", "padding_strategy", "truncation_strategy", "max_length", "stride", "is_split_into_words",
    "pad_to_multiple_of", "padding_side", "return_tensors", "return_token_type_ids", "return_attention_mask",
    "return_overflowing_tokens", "return_special_tokens_mask", "return_offsets_mapping", "return_length", "verbose",
    "split_special_tokens",
}


def _is_plain_batch(text: Any, text_pair: Any, kwargs: dict[str, Any]) -> bool:
    """Whether a call is a batch of plain texts with options the vectorised path reproduces exactly."""
    if text_pair is not None or not isinstance(text, (list, tuple)) or not text:
        return False
    if not all(isinstance(t, str) for t in text) or set(kwargs) - _PLAIN_BATCH_OPTIONS:
        return False
    if kwargs.get("is_split_into_words") or kwargs.get("stride"):
        return False
    if any(kwargs.get(k) for k in ("return_overflowing_tokens", "return_special_tokens_mask",
                                   "return_offsets_mapping", "return_length")):
        return False
    return kwargs.get("split_special_tokens", True) is True


class ParaNMTTokenizer(PreTrainedTokenizer):
    """Tokenizer of character-trigram and combined ParaNMT models.

    Args:
        vocab_file (`str`, *optional*): a ``paranmt_tokenizer.json`` file: ``{"components": [...]}``, each component
            ``{"kind": "trigram", "vocab": [tokens]}`` (optionally with ``"lookup": "paranmt50m"``),
            ``{"kind": "word", "vocab": [tokens], "lookup": "paranmt50m"}`` or
            ``{"kind": "tokenizers", "tokenizer": <tokenizer.json>}``. See ``LOOKUP_RULES`` for ``lookup``.
        components (`list[dict]`, *optional*): the same component list given directly (instead of ``vocab_file``).

    Every component vocabulary starts with ``[PAD]`` (id 0) and ``[UNK]`` (id 1). Tokens of component ``k > 0`` are
    written ``"<k>|<token>"`` by ``tokenize`` so that equal strings of different components stay apart.
    """

    vocab_files_names = VOCAB_FILES_NAMES
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(
        self,
        vocab_file: str | None = None,
        components: list[dict[str, Any]] | None = None,
        pad_token: str = PAD_TOKEN,
        unk_token: str = UNK_TOKEN,
        **kwargs: Any,
    ) -> None:
        if components is None:
            if vocab_file is None:
                raise ValueError("ParaNMTTokenizer needs `vocab_file` (paranmt_tokenizer.json) or `components`")
            with open(vocab_file, encoding="utf-8") as f:
                components = json.load(f)["components"]
        segmented = Segmenters(components)
        self.segmenters = segmented.segmenters
        self.offsets: list[int] = segmented.offsets
        self._segmented = segmented
        self._vocab = {
            self._tag(k, t): off + i
            for k, (seg, off) in enumerate(zip(self.segmenters, self.offsets, strict=True))
            for i, t in enumerate(seg.vocab)
        }
        self._inverse = {i: t for t, i in self._vocab.items()}
        # "[UNK]" typed in a text is text, as for the model (``encode_ids``): never matched as the special token
        kwargs.setdefault("split_special_tokens", True)
        super().__init__(pad_token=pad_token, unk_token=unk_token, **kwargs)
        self.init_kwargs.pop("components", None)  # saved to paranmt_tokenizer.json, not tokenizer_config.json
        self._batch_ids: Any = None  # the batched fast path (featurization_paranmt), built on first use

    @staticmethod
    def _tag(component: int, token: str) -> str:
        return token if component == 0 else f"{component}|{token}"

    @property
    def component_vocab_sizes(self) -> list[int]:
        """Vocabulary size of each component (the model config's ``components[k].vocab_size``)."""
        return self._segmented.component_vocab_sizes

    @property
    def vocab_size(self) -> int:
        """Total number of ids over all components."""
        return sum(self.component_vocab_sizes)

    def get_vocab(self) -> dict[str, int]:
        """Token -> id over all components (tokens of component k > 0 prefixed ``"k|"``)."""
        return dict(self._vocab)

    def encode_ids(self, text: str) -> list[int]:
        """Fast path: the model ids of one text (every component, shifted), without special tokens or padding."""
        return self._segmented.encode_ids(text)

    def batch_ids(self, texts: list[str]) -> tuple[Any, Any]:
        """Ids of a batch as (flat int64 NumPy ids, lengths): ``encode_ids`` of every text, batched and cached."""
        if self._batch_ids is None:
            from .token_ids_paranmt import fast_token_ids, ids_to_flat

            fast = fast_token_ids(self, lambda batch: [self.encode_ids(t) for t in batch])
            self._batch_ids = fast or (lambda batch: ids_to_flat([self.encode_ids(t) for t in batch]))
        return self._batch_ids(texts)

    def _encode_plus(self, text: Any, text_pair: Any = None, **kwargs: Any) -> BatchEncoding:
        """Batches of plain texts take the vectorised path (same output as the per-text path); the rest goes on."""
        if not _is_plain_batch(text, text_pair, kwargs):
            return super()._encode_plus(text, text_pair, **kwargs)
        import numpy as np

        from .unigram_paranmt import run_places

        flat, lengths = self.batch_ids(list(text))
        truncation, max_length = kwargs.get("truncation_strategy"), kwargs.get("max_length")
        if truncation not in (None, TruncationStrategy.DO_NOT_TRUNCATE) and max_length is not None:
            keep = run_places(0, lengths) < max_length
            flat, lengths = flat[keep], np.minimum(lengths, max_length)
        width = int(lengths.max(initial=0))
        strategy = kwargs.get("padding_strategy", PaddingStrategy.DO_NOT_PAD)
        if strategy == PaddingStrategy.MAX_LENGTH and max_length is not None:
            width = max(width, max_length)
        multiple = kwargs.get("pad_to_multiple_of")
        if multiple and width % multiple:
            width += multiple - width % multiple
        data: dict[str, Any] = {}
        want_mask = kwargs.get("return_attention_mask")
        want_mask = "attention_mask" in self.model_input_names if want_mask is None else want_mask
        want_types = kwargs.get("return_token_type_ids")
        want_types = "token_type_ids" in self.model_input_names if want_types is None else want_types
        if strategy == PaddingStrategy.DO_NOT_PAD:
            rows = np.split(flat, np.cumsum(lengths)[:-1]) if len(lengths) else []
            data["input_ids"] = [r.tolist() for r in rows]
            if want_types:
                data["token_type_ids"] = [[0] * len(r) for r in rows]
            if want_mask:
                data["attention_mask"] = [[1] * len(r) for r in rows]
        else:
            positions = run_places(0, lengths)
            if (kwargs.get("padding_side") or self.padding_side) == "left":
                positions = positions + np.repeat(width - lengths, lengths)
            ids = np.full((len(lengths), width), self.pad_token_id, dtype=np.int64)
            mask = np.zeros((len(lengths), width), dtype=np.int64)
            rows_index = np.repeat(np.arange(len(lengths)), lengths)
            ids[rows_index, positions] = flat
            mask[rows_index, positions] = 1
            data["input_ids"] = ids if kwargs.get("return_tensors") else ids.tolist()
            if want_types:
                zeros = np.zeros_like(ids)
                data["token_type_ids"] = zeros if kwargs.get("return_tensors") else zeros.tolist()
            if want_mask:
                data["attention_mask"] = mask if kwargs.get("return_tensors") else mask.tolist()
        return BatchEncoding(data, tensor_type=kwargs.get("return_tensors"))

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        return [self._tag(k, t) for k, seg in enumerate(self.segmenters) for t in seg.tokens(text)]

    def _convert_token_to_id(self, token: str) -> int:
        found = self._vocab.get(token)
        if found is not None:
            return found
        component, _, _ = token.partition("|")
        k = int(component) if component.isdigit() and "|" in token else 0
        return self.offsets[k] + 1 if k < len(self.offsets) else 1  # that component's [UNK]

    def _convert_id_to_token(self, index: int) -> str:
        return self._inverse.get(index, self.unk_token)

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        """Join tokens with spaces (trigram and combined tokenizations are not invertible)."""
        return " ".join(tokens)

    def component_specs(self) -> list[dict[str, Any]]:
        """The component list as stored in ``paranmt_tokenizer.json``."""
        return [seg.to_json() for seg in self.segmenters]

    def save_vocabulary(self, save_directory: str, filename_prefix: str | None = None) -> tuple[str]:
        """Write ``paranmt_tokenizer.json`` (all components) into ``save_directory``."""
        name = (filename_prefix + "-" if filename_prefix else "") + VOCAB_FILES_NAMES["vocab_file"]
        path = os.path.join(save_directory, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"components": self.component_specs()}, f, ensure_ascii=False)
        return (path,)


HUB_KWARGS = ("token", "revision", "cache_dir", "local_files_only", "subfolder", "force_download", "proxies")
"""Keyword arguments that locate files (passed on to the tokenizer's loader)."""


def load_tokenizer(name_or_path: str | os.PathLike[str], **hub_kwargs: Any) -> Any:
    """The tokenizer of a saved model: ``ParaNMTTokenizer`` (trigram, combinations) or the fast ``tokenizer.json``.

    Chosen by the directory's ``tokenizer_config.json`` (``tokenizer_class``), without transformers' Auto classes, so
    no code beyond this file's siblings runs.
    """
    from transformers.utils import cached_file

    hub_kwargs = {k: v for k, v in hub_kwargs.items() if k in HUB_KWARGS}
    config_file = cached_file(os.fspath(name_or_path), "tokenizer_config.json", **hub_kwargs)
    with open(config_file, encoding="utf-8") as f:
        tokenizer_class = json.load(f).get("tokenizer_class", "")
    if tokenizer_class == "ParaNMTTokenizer":
        return ParaNMTTokenizer.from_pretrained(name_or_path, **hub_kwargs)
    return PreTrainedTokenizerFast.from_pretrained(name_or_path, **hub_kwargs)


__all__ = ["HUB_KWARGS", "load_tokenizer", "ParaNMTTokenizer"]

# save_pretrained writes the tokenizer auto_map entry and copies this file (Hub remote code).
ParaNMTTokenizer.register_for_auto_class("AutoTokenizer")

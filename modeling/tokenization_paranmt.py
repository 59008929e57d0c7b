"""Tokenizer for ParaNMT models that ``tokenizers`` alone cannot express.

Character trigrams, combinations of encoders (component ``k``'s ids shifted by the vocabulary sizes before it, see
``ParaNMTConfig``), the lookup rules of the original ParaNMT-50M code (``LOOKUP_RULES``). Others: ``tokenizer.json``.

This file is Hub remote code: it imports transformers, ``tokenizers`` and the standard library only.
"""

from __future__ import annotations

import json
import os
from typing import Any

from transformers import PreTrainedTokenizer, PreTrainedTokenizerFast

from .segmentation_paranmt import PAD_TOKEN, UNK_TOKEN, Segmenters

VOCAB_FILES_NAMES = {"vocab_file": "paranmt_tokenizer.json"}


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
        self.segmented = segmented  # the components' segmenters: what reads text (``encode_ids`` runs them)
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

    @staticmethod
    def _tag(component: int, token: str) -> str:
        return token if component == 0 else f"{component}|{token}"

    @property
    def component_vocab_sizes(self) -> list[int]:
        """Vocabulary size of each component (the model config's ``components[k].vocab_size``)."""
        return self.segmented.component_vocab_sizes

    @property
    def vocab_size(self) -> int:
        """Total number of ids over all components."""
        return sum(self.component_vocab_sizes)

    def get_vocab(self) -> dict[str, int]:
        """Token -> id over all components (tokens of component k > 0 prefixed ``"k|"``)."""
        return dict(self._vocab)

    @property
    def vocab(self) -> dict[str, int]:
        """Token -> id, as transformers' tokenizers have it (:meth:`get_vocab`)."""
        return self.get_vocab()

    def encode_ids(self, text: str) -> list[int]:
        """Fast path: the model ids of one text (every component, shifted), without special tokens or padding."""
        return self.segmented.encode_ids(text)

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
    """The tokenizer of a saved model: ``ParaNMTTokenizer`` or the fast ``tokenizer.json``.

    Chosen by ``tokenizer_config.json``'s ``tokenizer_class``, without the Auto classes (no code beyond this file's).
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

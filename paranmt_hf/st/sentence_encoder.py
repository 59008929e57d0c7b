"""``ParaNMTSentenceEncoder``: a ParaNMT model and its tokenizer as a sentence-transformers input module."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from sentence_transformers.base.modules import InputModule

from ..encoder import ParaNMTEncoder
from ..modeling.modeling_paranmt import ParaNMTModel

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

CONFIG_FILE_NAME = "paranmt_st_config.json"


class ParaNMTSentenceEncoder(InputModule):
    """A :class:`ParaNMTModel` with its tokenizer, for training and encoding with sentence-transformers.

    ``preprocess`` tokenizes exactly as :meth:`ParaNMTEncoder.encode` does (no special tokens, no truncation):
    averaging encoders and their combinations get flat ``input_ids`` + ``offsets`` (EmbeddingBag, no padding, the
    ``StaticEmbedding`` layout), recurrent models padded ``input_ids`` + ``attention_mask``. ``forward`` writes the
    model's ``pooler_output`` to ``features["sentence_embedding"]``, so embeddings equal ``ParaNMTEncoder.encode``.

    Saving with ``SentenceTransformer.save`` writes the Hugging Face files (config.json, model.safetensors,
    remote-code files, tokenizer) in the model directory plus ``paranmt_st_config.json``; ``modules.json`` then names
    this class, so reloading needs paranmt_hf and ``trust_remote_code=True`` (sentence-transformers 6 asks for the
    flag for any class outside its own package). For a directory that loads everywhere, with sentence-transformers'
    own modules, use :meth:`save_pretrained` (= ``ParaNMTEncoder.save_pretrained``).

    Args:
        model: the ``ParaNMTModel``.
        tokenizer: its tokenizer (fast tokenizer for word / sp models, ``ParaNMTTokenizer`` otherwise).

    Example:
        ::

            from sentence_transformers import SentenceTransformer
            from paranmt_hf import ParaNMTSentenceEncoder, build_encoder

            encoder = build_encoder("word", corpus=["a man plays a guitar .", "a dog runs ."], embedding_dim=8)
            model = SentenceTransformer(modules=[ParaNMTSentenceEncoder.from_encoder(encoder)])
            model.encode(["a man plays"]).shape  # (1, 8)
    """

    config_keys: list[str] = []
    config_file_name = CONFIG_FILE_NAME
    save_in_root = True

    def __init__(self, model: ParaNMTModel, tokenizer: PreTrainedTokenizerBase) -> None:
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        was_training = model.training
        self._encoder = ParaNMTEncoder(model, tokenizer)  # tokenization only (validates vocabulary sizes)
        model.train(was_training)

    @classmethod
    def from_encoder(cls, encoder: ParaNMTEncoder) -> ParaNMTSentenceEncoder:
        """Wrap a :class:`ParaNMTEncoder` (shares its model and tokenizer)."""
        return cls(encoder.model, encoder.tokenizer)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike[str], **kwargs: Any) -> ParaNMTSentenceEncoder:
        """Load a directory or Hub repository saved by ``ParaNMTEncoder.save_pretrained`` (kwargs: see there)."""
        return cls.from_encoder(ParaNMTEncoder.from_pretrained(name_or_path, **kwargs))

    def to_encoder(self) -> ParaNMTEncoder:
        """A :class:`ParaNMTEncoder` sharing this module's model and tokenizer (puts the model in eval mode)."""
        return ParaNMTEncoder(self.model, self.tokenizer)

    def save_pretrained(self, directory: str | os.PathLike[str]) -> None:
        """Write the portable layout (see ``ParaNMTEncoder.save_pretrained``), keeping the model's train/eval mode."""
        was_training = self.model.training
        try:
            self.to_encoder().save_pretrained(directory)
        finally:
            self.model.train(was_training)

    @property
    def is_flat(self) -> bool:
        """Whether ``preprocess`` emits the flat EmbeddingBag layout (averaging encoders and their combinations)."""
        return self._encoder.is_flat

    @property
    def max_seq_length(self) -> float:
        """No truncation: averaging and recurrent encoders read every token (as ``ParaNMTEncoder.encode``)."""
        return math.inf

    def get_embedding_dimension(self) -> int:
        """Size of the sentence embedding."""
        return int(self.model.config.hidden_size)

    def preprocess(
        self, inputs: Sequence[str], prompt: str | None = None, **kwargs: Any
    ) -> dict[str, torch.Tensor | Any]:
        """Token ids of the texts (flat ``input_ids`` + ``offsets`` or padded ``input_ids`` + ``attention_mask``)."""
        texts = [str(t) for t in inputs]
        if prompt:
            texts = self._prepend_prompt(texts, prompt)
        return self._encoder.features(texts)

    def forward(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Add ``sentence_embedding`` (the model's ``pooler_output``) to ``features``."""
        output = self.model(
            input_ids=features["input_ids"],
            attention_mask=features.get("attention_mask"),
            offsets=features.get("offsets"),
        )
        features["sentence_embedding"] = output.pooler_output
        if output.last_hidden_state is not None and "attention_mask" in features:
            features["token_embeddings"] = output.last_hidden_state
        return features

    def save(self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any) -> None:
        """Save the Hugging Face files and this module's config into ``output_path``."""
        os.makedirs(output_path, exist_ok=True)
        self.model.save_pretrained(output_path)
        self.tokenizer.save_pretrained(output_path)
        self.save_config(output_path)

    @classmethod
    def load(
        cls,
        model_name_or_path: str,
        subfolder: str = "",
        token: bool | str | None = None,
        cache_folder: str | None = None,
        revision: str | None = None,
        local_files_only: bool = False,
        **kwargs: Any,
    ) -> ParaNMTSentenceEncoder:
        """Load the module saved by :meth:`save` (a local directory or a Hub repository)."""
        hub_kwargs: dict[str, Any] = {"token": token, "cache_dir": cache_folder, "revision": revision,
                                      "local_files_only": local_files_only}
        if subfolder:
            hub_kwargs["subfolder"] = subfolder
        return cls.from_pretrained(model_name_or_path, **hub_kwargs)

"""The sentence-transformers input module of ParaNMT models, shipped inside every model directory.

``modules.json`` names ``input_module_paranmt.ParaNMTInputModule``, so ``SentenceTransformer(dir,
trust_remote_code=True)`` (and mteb, LangChain, ... through it) embeds with ``ParaNMTEncoder``'s featuriser and
forward, in the shape of ``StaticEmbedding``. Hub remote code: imports torch, transformers and its siblings, and
derives from sentence-transformers' ``InputModule`` where that is installed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from typing import Any

from torch import nn

from .featurization_paranmt import ParaNMTFeaturizer
from .modeling_paranmt import ParaNMTModel
from .tokenization_paranmt import load_tokenizer

try:  # sentence-transformers' base class when it is installed (transformers' import check skips try blocks)
    from sentence_transformers.base.modules import InputModule as _ModuleBase
except ImportError:  # pragma: no cover - exercised where sentence-transformers is absent
    _ModuleBase = nn.Module

CONFIG_FILE_NAME = "paranmt_st_config.json"
"""The module's own (empty) sentence-transformers config; the model's settings live in config.json."""
CLASS_REF = "input_module_paranmt.ParaNMTInputModule"
"""How ``modules.json`` names this class (file in the model directory + class)."""


class ParaNMTInputModule(_ModuleBase):
    """A ``ParaNMTModel`` and its tokenizer as a sentence-transformers input module.

    ``preprocess`` gives ``ParaNMTEncoder``'s inputs and ``forward`` writes the model's ``pooler_output`` to
    ``features["sentence_embedding"]``: the embeddings equal ``ParaNMTEncoder.encode``. Trains inside
    ``SentenceTransformerTrainer`` (e.g. with ``paranmt_hf.MegaBatchMarginLoss``).

    Args:
        model: the ``ParaNMTModel``.
        tokenizer: its tokenizer (fast tokenizer for word / sp / subword models, ``ParaNMTTokenizer`` otherwise).

    Example: ``SentenceTransformer("my-paranmt-model", trust_remote_code=True).encode(["A man plays."])``.
    """

    save_in_root = True
    config_file_name = CONFIG_FILE_NAME
    config_keys: list[str] = []

    def __init__(self, model: ParaNMTModel, tokenizer: Any) -> None:
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.featurizer = ParaNMTFeaturizer.for_model(model, tokenizer)

    @classmethod
    def load(cls, model_name_or_path: str, subfolder: str = "", token: bool | str | None = None,
             cache_folder: str | None = None, revision: str | None = None, local_files_only: bool = False,
             **kwargs: Any) -> ParaNMTInputModule:
        """sentence-transformers' loader: the module saved in ``model_name_or_path`` (a directory or Hub id).

        ``model_kwargs`` go to the model's ``from_pretrained`` (``{"torch_dtype": torch.float16}``, or ``"dtype"``).
        Raises ``ValueError`` for a ``backend`` other than ``"torch"`` (the model would silently run in PyTorch).
        """
        backend = kwargs.get("backend") or "torch"
        if backend != "torch":
            raise ValueError(f"SentenceTransformer(..., backend={backend!r}): this ParaNMT model runs in PyTorch only "
                             "inside sentence-transformers. For ONNX: `paranmt-hf export MODEL_DIR --format onnx "
                             "--output DIR` (DIR/README.md has the code); or load it with backend='torch'")
        hub = {"subfolder": subfolder, "token": token, "cache_dir": cache_folder, "revision": revision}
        hub = {k: v for k, v in hub.items() if v not in (None, "", False)} | {"local_files_only": local_files_only}
        model_kwargs = dict(kwargs.get("model_kwargs") or {})
        if "torch_dtype" in model_kwargs:  # transformers 5 calls it dtype
            model_kwargs.setdefault("dtype", model_kwargs.pop("torch_dtype"))
        model = ParaNMTModel.from_pretrained(model_name_or_path, **hub, **model_kwargs)
        return cls(model, load_tokenizer(model_name_or_path, **hub))

    @classmethod
    def from_encoder(cls, encoder: Any) -> ParaNMTInputModule:
        """Wrap a ``paranmt_hf.ParaNMTEncoder`` (shares its model and tokenizer)."""
        return cls(encoder.model, encoder.tokenizer)

    def save(self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any) -> None:
        """Write the model (config.json, weights, remote code), the tokenizer and this module's files.

        ``SentenceTransformer.save`` calls this and then writes ``modules.json`` itself. safetensors writes the
        weights with mode 0600: they get ``config.json``'s mode, readable by those the folder is shared with.
        """
        os.makedirs(output_path, exist_ok=True)
        self.model.save_pretrained(output_path)
        self.tokenizer.save_pretrained(output_path)
        copy_module_files(output_path)
        with open(os.path.join(output_path, CONFIG_FILE_NAME), "w", encoding="utf-8") as f:
            json.dump({}, f)
        mode = os.stat(os.path.join(output_path, "config.json")).st_mode & 0o777
        for name in ("model.safetensors", "model_int8.safetensors"):
            if os.path.isfile(os.path.join(output_path, name)):
                os.chmod(os.path.join(output_path, name), mode)

    def save_pretrained(self, directory: str | os.PathLike[str]) -> None:
        """Write a directory that loads everywhere: :meth:`save` plus a ``modules.json`` naming the shipped class."""
        self.save(os.fspath(directory))
        with open(os.path.join(directory, "modules.json"), "w", encoding="utf-8") as f:
            json.dump([{"idx": 0, "name": "0", "path": "", "type": CLASS_REF}], f, indent=2)

    @property
    def modalities(self) -> list[str]:
        """Text only."""
        return ["text"]

    @property
    def max_seq_length(self) -> int | None:
        """Tokens read per sentence and component (``config.max_seq_length``; ``None``: all)."""
        return self.model.config.max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, value: int | None) -> None:
        if value is not None and int(value) < 1:
            raise ValueError(f"max_seq_length must be a positive number of tokens or None, got {value}")
        self.model.config.max_seq_length = None if value is None else int(value)

    @property
    def is_flat(self) -> bool:
        """Whether ``preprocess`` emits the flat EmbeddingBag layout (averaging encoders and their combinations)."""
        return self.featurizer.flat

    def get_embedding_dimension(self) -> int:
        """Size of the sentence embedding."""
        return int(self.model.config.hidden_size)

    get_sentence_embedding_dimension = get_embedding_dimension

    def preprocess(self, inputs: Sequence[str], prompt: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """Model inputs of the texts: flat ``input_ids`` + ``offsets`` (averaging) or padded ids + mask."""
        texts = [t if isinstance(t, str) else str(t) for t in inputs]
        if prompt:
            texts = [prompt + t for t in texts]
        return self.featurizer(texts)

    def forward(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Add ``sentence_embedding`` (the model's ``pooler_output``) to ``features``."""
        last, pooled = self.model(  # a tuple: no output object to build for every batch
            input_ids=features["input_ids"],
            attention_mask=features.get("attention_mask"),
            offsets=features.get("offsets"),
            component_lengths=features.get("component_lengths"),
            return_dict=False,
        )
        features["sentence_embedding"] = pooled
        if self.model.has_token_states and "attention_mask" in features:
            features["token_embeddings"] = last
        return features

    def __repr__(self) -> str:
        kinds = "+".join(c["kind"] for c in self.model.config.resolved_components())
        return f"ParaNMTInputModule({kinds}, dim={self.get_embedding_dimension()})"


def copy_module_files(directory: str | os.PathLike[str]) -> None:
    """Copy this file and the sibling files it imports into ``directory`` (what ``modules.json`` points to)."""
    from transformers.dynamic_module_utils import get_relative_import_files

    for source in [os.path.abspath(__file__), *get_relative_import_files(os.path.abspath(__file__))]:
        target = os.path.join(directory, os.path.basename(source))
        if not (os.path.exists(target) and os.path.samefile(source, target)):
            shutil.copyfile(source, target)


__all__ = ["ParaNMTInputModule", "load_tokenizer", "copy_module_files", "CLASS_REF", "CONFIG_FILE_NAME"]

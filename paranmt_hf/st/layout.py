"""The sentence-transformers files of a saved ParaNMT model directory ("save once, load everywhere").

``ParaNMTEncoder.save_pretrained(dir)`` writes the Hugging Face files (config.json with ``auto_map``,
model.safetensors, the remote-code files, the tokenizer) and then calls :func:`write_sentence_transformers_files`,
which adds:

- at the root, a one-module ``modules.json`` naming sentence-transformers' own ``Transformer`` module, configured
  (``sentence_bert_config.json``) to return the model's ``pooler_output`` as the sentence embedding. No
  sentence-transformers custom code is involved: ``SentenceTransformer(dir)`` works without flag once paranmt_hf is
  imported (it registers ``model_type="paranmt"`` with transformers), and with ``trust_remote_code=True`` where
  paranmt_hf is not installed (transformers then runs the shipped ``modeling_paranmt.py``).
- for single averaging encoders with mean pooling that keep unknown tokens (where an ``nn.EmbeddingBag`` mean over
  the same token ids is the same function), a complete second model in ``static/``: the stock ``StaticEmbedding``
  (``static/model.safetensors`` + ``static/tokenizer.json`` + its own ``modules.json``), which
  ``SentenceTransformer(f"{dir}/static")`` loads with no custom code at all. One difference: a text with no token
  (empty or whitespace only) embeds as the zero vector there, as the unknown token's row in ``ParaNMTModel`` (zero
  too in models built by paranmt_hf, whose unknown-token row starts at zero).
"""

from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..encoder import ParaNMTEncoder

STATIC_SUBFOLDER = "static"
SENTENCE_BERT_CONFIG = {
    "transformer_task": "feature-extraction",
    "modality_config": {"text": {"method": "forward", "method_output_name": "pooler_output"}},
    "module_output_name": "sentence_embedding",
}


def static_embedding_is_exact(encoder: ParaNMTEncoder) -> bool:
    """Whether sentence-transformers' ``StaticEmbedding`` computes the same embeddings as ``encoder``.

    True for one averaging component (word / trigram / sp) with mean pooling that embeds unknown tokens (does not
    drop them) and whose tokenizer is a ``tokenizers`` tokenizer emitting the model's ids with no special tokens.
    """
    from ..modeling.tokenization_paranmt import ParaNMTTokenizer

    config = encoder.model.config
    components = config.resolved_components()
    if len(components) != 1 or not encoder.is_flat:
        return False
    if config.pooling != "mean" or components[0]["drop_unknown_tokens"]:
        return False
    return not isinstance(encoder.tokenizer, ParaNMTTokenizer) and hasattr(encoder.tokenizer, "backend_tokenizer")


def _model_config() -> dict[str, Any]:
    import sentence_transformers
    import torch
    import transformers

    return {
        "__version__": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "pytorch": torch.__version__,
        },
        "model_type": "SentenceTransformer",
        "prompts": {"query": "", "document": ""},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    }


def _class_ref(cls: type) -> str:
    return f"{cls.__module__}.{cls.__name__}"


def _write_json(path: str, value: Any) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, sort_keys=isinstance(value, dict))
        f.write("\n")


def write_static_embedding(encoder: ParaNMTEncoder, directory: str | os.PathLike[str]) -> None:
    """Write a complete ``StaticEmbedding`` model (modules.json, weights, tokenizer.json) into ``directory``.

    Raises:
        ValueError: when ``StaticEmbedding`` would not reproduce the model (see :func:`static_embedding_is_exact`).
    """
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer

    if not static_embedding_is_exact(encoder):
        raise ValueError("this model is not a single mean-averaging encoder that keeps unknown tokens: "
                         "StaticEmbedding would not reproduce its embeddings")
    os.makedirs(directory, exist_ok=True)
    tokenizer = Tokenizer.from_str(encoder.tokenizer.backend_tokenizer.to_str())
    tokenizer.no_truncation()
    weight = encoder.model.encoders[0].embedding.weight.detach().to("cpu", copy=True).float()
    module = StaticEmbedding(tokenizer, embedding_weights=weight)
    module.save(str(directory))
    _write_json(os.path.join(directory, "modules.json"),
                [{"idx": 0, "name": "0", "path": "", "type": _class_ref(StaticEmbedding)}])
    _write_json(os.path.join(directory, "config_sentence_transformers.json"), _model_config())


def write_sentence_transformers_files(
    encoder: ParaNMTEncoder, directory: str | os.PathLike[str], static: bool | None = None
) -> None:
    """Add the sentence-transformers files to a directory that already holds the Hugging Face files of ``encoder``.

    Root: ``modules.json`` (stock ``Transformer`` module reading ``pooler_output``), ``sentence_bert_config.json``
    and ``config_sentence_transformers.json``.

    Args:
        encoder: the saved encoder.
        directory: the model directory.
        static: write the ``StaticEmbedding`` copy in ``static/`` (see :func:`write_static_embedding`; it
            duplicates the embedding table on disk). ``None``: where it is exact. ``True`` where it is not raises.
    """
    from sentence_transformers.base.modules import Transformer

    directory = os.fspath(directory)
    if not os.path.isfile(os.path.join(directory, "config.json")):
        raise FileNotFoundError(f"{directory} has no config.json: save the Hugging Face files first")
    _write_json(os.path.join(directory, "modules.json"),
                [{"idx": 0, "name": "0", "path": "", "type": _class_ref(Transformer)}])
    _write_json(os.path.join(directory, "sentence_bert_config.json"), SENTENCE_BERT_CONFIG)
    _write_json(os.path.join(directory, "config_sentence_transformers.json"), _model_config())
    static_dir = os.path.join(directory, STATIC_SUBFOLDER)
    if static or (static is None and static_embedding_is_exact(encoder)):
        write_static_embedding(encoder, static_dir)
    elif _is_static_copy(static_dir):  # a stale copy from an earlier save into this directory
        shutil.rmtree(static_dir)


def _is_static_copy(path: str) -> bool:
    """Whether ``path`` holds a StaticEmbedding copy written by :func:`write_static_embedding`."""
    try:
        with open(os.path.join(path, "modules.json"), encoding="utf-8") as f:
            modules = json.load(f)
    except (OSError, ValueError):
        return False
    return len(modules) == 1 and str(modules[0].get("type", "")).endswith(".StaticEmbedding")

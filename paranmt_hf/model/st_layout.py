"""The sentence-transformers files of a saved ParaNMT model directory ("save once, load everywhere").

``ParaNMTEncoder.save_pretrained(dir)`` writes the Hugging Face files (config.json with ``auto_map``, the weights,
the remote-code files, the tokenizer), then :func:`write_sentence_transformers_files` adds:

- a one-module ``modules.json`` naming ``input_module_paranmt.ParaNMTInputModule``, shipped in the directory, so
  ``SentenceTransformer(dir, trust_remote_code=True)`` embeds exactly as ``ParaNMTEncoder`` (writing it needs no
  sentence-transformers);
- with ``static=True``, a stock ``StaticEmbedding`` in ``static/`` that ``SentenceTransformer(f"{dir}/static")`` and
  model2vec load with no custom code. A second copy of the table, so not by default; written only where it is exact:
  one averaging encoder, mean pooling, unknown tokens kept with zero rows (``StaticEmbedding`` embeds a text with no
  token as zeros, where ``ParaNMTModel`` uses the unknown row).

Directories of earlier releases name sentence-transformers' ``Transformer`` module in ``modules.json``; they keep
loading (the padded path), and saving them again writes this layout.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING, Any

from ..modeling.input_module_paranmt import CLASS_REF, CONFIG_FILE_NAME, copy_module_files
from ..utils.imports import is_available, require

if TYPE_CHECKING:
    from ..modeling.modeling_paranmt import ParaNMTModel

STATIC_SUBFOLDER = "static"
LEGACY_FILES = ("sentence_bert_config.json",)
"""Files of the earlier layout (its sentence-transformers `Transformer` module), removed on a rewrite."""


def static_embedding_is_exact(model: ParaNMTModel, tokenizer: Any) -> bool:
    """Whether sentence-transformers' ``StaticEmbedding`` computes the same embeddings as ``model`` + ``tokenizer``.

    True for one averaging component (word / trigram / sp / subword) with mean pooling that embeds unknown tokens
    (does not drop them) with zero rows (``StaticEmbedding`` gives a text without tokens the zero vector, the model the
    unknown token's row), reads every token (no ``max_seq_length``) and whose tokenizer is a ``tokenizers`` tokenizer
    emitting the model's ids with no special tokens.
    """
    from ..modeling.tokenization_paranmt import ParaNMTTokenizer

    config = model.config
    components = config.resolved_components()
    if len(components) != 1 or not model.accepts_flat_input or config.max_seq_length is not None:
        return False
    if config.pooling != "mean" or components[0]["drop_unknown_tokens"]:
        return False
    if isinstance(tokenizer, ParaNMTTokenizer) or not hasattr(tokenizer, "backend_tokenizer"):
        return False
    unknown = sorted({components[0]["unk_token_id"], *components[0]["unknown_token_ids"]})
    return not bool(model.components[0].embedding.weight.detach()[unknown].any())


def _model_config() -> dict[str, Any]:
    import torch
    import transformers

    versions = {"transformers": transformers.__version__, "pytorch": torch.__version__}
    if is_available("sentence_transformers"):
        import sentence_transformers

        versions["sentence_transformers"] = sentence_transformers.__version__
    return {
        "__version__": versions,
        "model_type": "SentenceTransformer",
        "prompts": {"query": "", "document": ""},
        "default_prompt_name": None,
        "similarity_fn_name": "cosine",
    }


def _write_json(path: str, value: Any) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, sort_keys=isinstance(value, dict))
        f.write("\n")


def write_static_embedding(model: ParaNMTModel, tokenizer: Any, directory: str | os.PathLike[str]) -> None:
    """Write a complete ``StaticEmbedding`` model (modules.json, weights, tokenizer.json) into ``directory``.

    Raises:
        ValueError: when ``StaticEmbedding`` would not reproduce the model (see :func:`static_embedding_is_exact`).
    """
    from tokenizers import Tokenizer

    StaticEmbedding = require("sentence_transformers.sentence_transformer.modules", "st").StaticEmbedding  # noqa: N806

    if not static_embedding_is_exact(model, tokenizer):
        raise ValueError("StaticEmbedding would not reproduce this model: it is not a single mean-averaging encoder "
                         "that keeps unknown tokens with zero rows and reads every token (a trained unknown-token "
                         "row: an empty text would embed as zeros there, as that row here)")
    os.makedirs(directory, exist_ok=True)
    backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
    backend.no_truncation()
    weight = model.components[0].embedding.weight.detach().to("cpu", copy=True).float()
    module = StaticEmbedding(backend, embedding_weights=weight)
    module.save(str(directory))
    cls = type(module)
    _write_json(os.path.join(directory, "modules.json"),
                [{"idx": 0, "name": "0", "path": "", "type": f"{cls.__module__}.{cls.__name__}"}])
    _write_json(os.path.join(directory, "config_sentence_transformers.json"), _model_config())


def write_sentence_transformers_files(
    model: ParaNMTModel, tokenizer: Any, directory: str | os.PathLike[str], static: bool = False
) -> None:
    """Add the sentence-transformers files to a directory that already holds the Hugging Face files of a model.

    Root: ``modules.json`` (the shipped ``ParaNMTInputModule``), its files, ``paranmt_st_config.json`` and
    ``config_sentence_transformers.json``.

    Args:
        model: the saved ``ParaNMTModel``.
        tokenizer: its tokenizer.
        directory: the model directory.
        static: also write the ``StaticEmbedding`` copy in ``static/`` (see :func:`write_static_embedding`: a second
            copy of the embedding table; raises where it would not be exact). Without it, a copy left by an earlier
            save is removed.
    """
    directory = os.fspath(directory)
    if not os.path.isfile(os.path.join(directory, "config.json")):
        raise FileNotFoundError(f"{directory} has no config.json: save the Hugging Face files first")
    copy_module_files(directory)
    _write_json(os.path.join(directory, "modules.json"), [{"idx": 0, "name": "0", "path": "", "type": CLASS_REF}])
    _write_json(os.path.join(directory, CONFIG_FILE_NAME), {})
    _write_json(os.path.join(directory, "config_sentence_transformers.json"), _model_config())
    for name in LEGACY_FILES:
        if os.path.isfile(os.path.join(directory, name)):
            os.remove(os.path.join(directory, name))
    static_dir = os.path.join(directory, STATIC_SUBFOLDER)
    if static:
        write_static_embedding(model, tokenizer, static_dir)
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

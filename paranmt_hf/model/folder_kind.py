"""What library a local model folder belongs to, and the sentence that says how to load one that is not ParaNMT's.

``ParaNMTEncoder.from_pretrained`` reads only ParaNMT folders (``config.json`` with ``model_type: "paranmt"``); a
model2vec or sentence-transformers folder given to it is named, with the call that loads it, instead of the
errors transformers would raise half-way through.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class NotAParaNMTFolderError(ValueError):
    """A local folder that holds a model of another library (or no model): the message says how to load it."""


def _config(base: Path) -> dict[str, Any]:
    try:
        return json.loads((base / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def model_kind(path: str | os.PathLike[str]) -> str:
    """``"paranmt"``, ``"model2vec"`` or ``"sentence-transformers"`` for a model directory.

    Raises:
        FileNotFoundError: not a directory. NotAParaNMTFolderError: no known layout.
    """
    base = Path(path)
    if not base.is_dir():
        raise FileNotFoundError(f"model directory {base} not found (the Hub is not used here: pass a local folder)")
    config = _config(base)
    if config.get("model_type") == "paranmt":
        return "paranmt"
    if config.get("model_type") == "model2vec" or (
        (base / "model.safetensors").is_file() and (base / "tokenizer.json").is_file() and "hidden_size" not in config
        and not (base / "modules.json").is_file()
    ):
        return "model2vec"
    if (base / "modules.json").is_file() or (base / "sentence_bert_config.json").is_file():
        return "sentence-transformers"
    raise NotAParaNMTFolderError(f"{base}: not a ParaNMT, model2vec or sentence-transformers model directory")


def _saved_by_model2vec(base: Path) -> bool:
    """Whether ``base`` is in model2vec's own layout.

    That is ``config.json`` of the static model (no ``model_type``, no ``hidden_size``), weights and
    ``tokenizer.json`` at the top (model2vec also writes a ``modules.json`` so that sentence-transformers reads it).
    """
    config = _config(base)
    return ("model_type" not in config and "hidden_size" not in config and bool({"normalize", "embedding_dtype"} &
            set(config)) and (base / "model.safetensors").is_file() and (base / "tokenizer.json").is_file())


_OTHERS = "paranmt_hf.evaluation.load_encoder(folder) and `paranmt-hf eval/embed/score` read it as it is"


def check_paranmt_folder(path: str | os.PathLike[str]) -> None:
    """Refuse a local folder that is not a ParaNMT model, saying what it is and how to load it.

    Hub ids and folders that are not there are left to the caller (transformers asks the Hub; a missing local path
    is reported by :func:`paranmt_hf.utils.integrity.check_model_path`).

    Raises:
        NotAParaNMTFolderError: a model2vec, sentence-transformers or unknown folder. DamagedFileError: its
            config.json is damaged.
    """
    from ..utils.integrity import DamagedFileError, file_problem

    base = Path(path).expanduser()
    if not base.is_dir():
        return
    config_path = base / "config.json"
    problem = file_problem(config_path) if config_path.is_file() else None
    if problem is not None:  # what the folder is cannot be told: the damage is the news
        raise DamagedFileError(f"{config_path} is damaged: {problem}. Save, copy or download that model again")
    try:
        kind = model_kind(base)
    except ValueError:
        config = _config(base)
        found = (f"its config.json says model_type {config['model_type']!r}" if "model_type" in config
                 else "it has no config.json" if not (base / "config.json").is_file()
                 else "its config.json has no model_type")
        raise NotAParaNMTFolderError(
            f"{path} is not a ParaNMT model folder ({found}; a ParaNMT folder's says 'paranmt'): give the folder "
            "written by save_pretrained, `paranmt-hf train` or `paranmt-hf build`") from None
    if kind == "paranmt":
        return
    if kind == "model2vec" or _saved_by_model2vec(base):
        raise NotAParaNMTFolderError(
            f"{path} is a model2vec model, not a ParaNMT one: load it with "
            f"`model2vec.StaticModel.from_pretrained({str(path)!r})` or `SentenceTransformer({str(path)!r})`; "
            f"{_OTHERS}")
    if base.name == "static" and _config(base.parent).get("model_type") == "paranmt":
        raise NotAParaNMTFolderError(
            f"{path} is the sentence-transformers StaticEmbedding copy of the ParaNMT model in {base.parent}: load "
            f"it with `SentenceTransformer({str(path)!r})`, or the model itself with "
            f"`ParaNMTEncoder.from_pretrained({str(base.parent)!r})`")
    raise NotAParaNMTFolderError(
        f"{path} is a sentence-transformers model, not a ParaNMT one: load it with "
        f"`SentenceTransformer({str(path)!r})`; {_OTHERS}")

"""Would loading a model directory run code shipped inside it? Then the user must say so (``trust_remote_code``).

transformers runs a directory's Python files for an ``auto_map`` whose model type (or tokenizer class) it does not
know; sentence-transformers imports the module classes ``modules.json`` names (trying a ``.py`` file of the directory
first) unless they are its own. paranmt_hf loads its own directories (``model_type="paranmt"``) with
``ParaNMTEncoder``, which reads their config, weights and tokenizer with the installed classes (``import paranmt_hf``
registers ``model_type="paranmt"`` and its tokenizer) and never reads ``modules.json``: they need no flag here, while
``SentenceTransformer(dir)`` asks for ``trust_remote_code=True`` (docs/loading.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ST_PREFIX = "sentence_transformers."


class RemoteCodeError(PermissionError):
    """Loading the directory would run code from it, and ``trust_remote_code`` was not given."""


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _config_reasons(folder: Path, where: str) -> list[str]:
    """Reasons in one folder's ``config.json`` / ``tokenizer_config.json``."""
    reasons = []
    config = _json(folder / "config.json")
    if isinstance(config, dict) and config.get("auto_map"):
        from transformers import CONFIG_MAPPING

        model_type = config.get("model_type")
        if model_type not in CONFIG_MAPPING:
            reasons.append(f"{where}config.json maps model_type {model_type!r}, which transformers does not know, to "
                           f"code in the directory ({', '.join(sorted(config['auto_map'].values()))})")
    tokenizer = _json(folder / "tokenizer_config.json")
    if isinstance(tokenizer, dict) and tokenizer.get("auto_map"):
        from transformers.models.auto.tokenization_auto import tokenizer_class_from_name

        name = tokenizer.get("tokenizer_class")
        if not name or tokenizer_class_from_name(name) is None:
            reasons.append(f"{where}tokenizer_config.json maps tokenizer class {name!r}, which transformers does not "
                           "know, to code in the directory")
    return reasons


def _is_paranmt_folder(folder: Path) -> bool:
    """Whether paranmt_hf loads ``folder`` with ``ParaNMTEncoder`` (its ``modules.json`` is then not read)."""
    config = _json(folder / "config.json")
    return isinstance(config, dict) and config.get("model_type") == "paranmt"


def remote_code_reasons(path: str | os.PathLike[str]) -> list[str]:
    """Why loading the model directory ``path`` with paranmt_hf would execute code from it (empty: it would not)."""
    base = Path(path)
    reasons = _config_reasons(base, "")
    modules = None if _is_paranmt_folder(base) else _json(base / "modules.json")
    for module in modules if isinstance(modules, list) else []:
        kind = str(module.get("type", ""))
        if kind and not kind.startswith(ST_PREFIX):
            reasons.append(f"modules.json names module class {kind!r}, which is not part of sentence-transformers "
                           "(its code would be imported, from the directory first)")
        sub = str(module.get("path", ""))
        if sub:
            reasons += _config_reasons(base / sub, f"{sub}/")
    return reasons


def check_remote_code(path: str | os.PathLike[str], trust_remote_code: bool) -> None:
    """Raise :class:`RemoteCodeError` if loading ``path`` would run its code and ``trust_remote_code`` is false.

    Raises:
        DamagedFileError: instead, when a file of the folder is damaged (one sentence naming it).
    """
    if trust_remote_code:
        return
    reasons = remote_code_reasons(path)
    if reasons:
        from ..utils.integrity import damaged_file_error

        damaged = damaged_file_error(path, RemoteCodeError("its files were not read"))
        if damaged is not None:  # (an unreadable config.json hides what kind of folder it is): name the file
            raise damaged
        raise RemoteCodeError(
            f"loading {path} would run code from the directory:\n  - " + "\n  - ".join(reasons)
            + "\nIf you trust this model, pass --trust-remote-code (trust_remote_code=True in Python)."
        )

"""Would loading a model directory run code shipped inside it? Then the user must say so (``trust_remote_code``).

transformers runs a directory's Python files for an ``auto_map`` whose model type (or tokenizer class) it does not
know; sentence-transformers imports the module classes ``modules.json`` names (trying a ``.py`` file of the directory
first). paranmt_hf's own directories need neither: ``import paranmt_hf`` registers ``model_type="paranmt"`` and its
tokenizer, and the input module their ``modules.json`` names resolves to paranmt_hf's installed copy.
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


def _installed_module_class(ref: str) -> bool:
    """Whether sentence-transformers resolves a ``modules.json`` type to installed code (nothing from the directory).

    Its own classes, and the refs it finds in ``BaseModel._module_classes`` before importing anything (paranmt_hf
    registers its input module's refs there: ``paranmt_hf.model.registration.ST_MODULE_CLASSES``).
    """
    if ref.startswith(ST_PREFIX):
        return True
    from . import registration as _registration

    if ref in getattr(_registration, "ST_MODULE_CLASSES", {}):
        return True
    from ..utils.imports import is_available

    if not is_available("sentence_transformers"):
        return False
    try:
        from sentence_transformers.base.model import BaseModel
    except ImportError:
        return False
    return ref in (getattr(BaseModel, "_module_classes", None) or {})


def remote_code_reasons(path: str | os.PathLike[str]) -> list[str]:
    """Why loading the model directory ``path`` would execute code from it (empty: it would not)."""
    base = Path(path)
    reasons = _config_reasons(base, "")
    modules = _json(base / "modules.json")
    for module in modules if isinstance(modules, list) else []:
        kind = str(module.get("type", ""))
        if kind and not _installed_module_class(kind):
            reasons.append(f"modules.json names module class {kind!r}, which is not part of sentence-transformers "
                           "(its code would be imported, from the directory first)")
        sub = str(module.get("path", ""))
        if sub:
            reasons += _config_reasons(base / sub, f"{sub}/")
    return reasons


def check_remote_code(path: str | os.PathLike[str], trust_remote_code: bool) -> None:
    """Raise :class:`RemoteCodeError` if loading ``path`` would run its code and ``trust_remote_code`` is false."""
    if trust_remote_code:
        return
    reasons = remote_code_reasons(path)
    if reasons:
        raise RemoteCodeError(
            f"loading {path} would run code from the directory:\n  - " + "\n  - ".join(reasons)
            + "\nIf you trust this model, pass --trust-remote-code (trust_remote_code=True in Python)."
        )

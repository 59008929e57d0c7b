"""Import guards for optional dependencies that name the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise an ImportError telling which paranmt_hf extra provides it.

    Args:
        module: dotted module name, e.g. ``"sentence_transformers"``.
        extra: the setup.cfg extra that installs it, e.g. ``"st"``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.split(".")[0]
        if err.name is not None and err.name.split(".")[0] != top:
            raise
        raise ImportError(
            f'{module!r} is needed for this feature: install it with `pip install "paranmt-hf[{extra}]"`'
        ) from err


EXTRA_OF = {"torch": "torch", "transformers": "torch", "safetensors": "torch", "sentence_transformers": "st",
            "datasets": "data", "scipy": "eval", "mteb": "eval", "model2vec": "peers", "onnxruntime": "onnx"}
"""The extra that installs a top-level module (for errors about a module that is missing)."""


def extra_hint(err: ImportError) -> ImportError | None:
    """An ImportError naming the extra to install for a missing module, or None when no extra provides it.

    For errors raised deep inside an import (``from paranmt_hf import ParaNMTEncoder`` in a core install, where
    torch is absent): ``raise extra_hint(err) or err``.
    """
    top = (err.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None or not isinstance(err, ModuleNotFoundError):
        return None
    note = " (averaging models embed without it: paranmt_hf.StaticEncoder)" if extra == "torch" else ""
    hint = ImportError(f"{top!r} is needed for this feature: install it with `pip install \"paranmt-hf[{extra}]\"`"
                       + note)
    hint.name = err.name
    return hint


def is_available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None

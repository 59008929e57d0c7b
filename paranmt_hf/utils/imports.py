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


def is_available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    return importlib.util.find_spec(module) is not None

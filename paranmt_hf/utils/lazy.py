"""Names a package exports but imports on first use (PEP 562 module ``__getattr__`` / ``__dir__``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    Args:
        package: the package's name (for the error message).
        table: exported name -> the module that defines it.
        namespace: the package's ``globals()``: a loaded name is stored there (later lookups skip ``__getattr__``);
            ``__dir__`` lists its ``__all__``.

    Example:
        ::

            __getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
    """

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's name
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            value = getattr(importlib.import_module(module), name)
        except ModuleNotFoundError as err:  # e.g. ParaNMTEncoder in a core install: name the extra that brings torch
            from .imports import extra_hint

            hint = extra_hint(err)
            if hint is None:
                raise
            raise hint from err
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(namespace.get("__all__", table))

    return __getattr__, __dir__

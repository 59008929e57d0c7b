"""Loading pickled checkpoints without executing pickled code.

A pickle can name any importable callable (``os.system``, ``builtins.eval``, ...) and have the unpickler call it, so
loading an untrusted pickle runs arbitrary code. The two loaders here resolve only an explicit allow-list of
globals and refuse everything else with :class:`UnsafePickleError` *before* anything is called:

- :func:`load_legacy_pickle` for the Python 2 ``cPickle`` files of ParaNMT-50M (lists of NumPy arrays and dicts),
  with ``encoding="latin1"`` as NumPy requires for Python 2 array data;
- :func:`load_torch_checkpoint` for PyTorch ``.pt`` files, through ``torch.load(weights_only=True)`` (PyTorch's own
  restricted unpickler) with extra globals allowed only for that call.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .integrity import DamagedFileError, torch_file_problem

LEGACY_PICKLE_ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {
        # NumPy arrays, dtypes and scalars (Python 2 pickles name numpy.core, NumPy 2 calls it numpy._core)
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        # containers and plain values (constructors without side effects)
        ("__builtin__", "set"),
        ("__builtin__", "frozenset"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("collections", "OrderedDict"),
        # bytes as written by Python 3 at protocol < 3
        ("_codecs", "encode"),
    }
)
"""``(module, name)`` pairs a ParaNMT-50M pickle may reference; anything else is refused."""


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle referenced a global outside the allow-list (it was not loaded, nothing was called)."""


UNREADABLE_ERRORS: tuple[type[BaseException], ...] = (pickle.UnpicklingError, EOFError, KeyError, IndexError,
                                                       ValueError, TypeError, struct.error, OverflowError,
                                                       RuntimeError, zipfile.BadZipFile)
"""What an unpickler raises on bytes that are no (complete) pickle: an empty or truncated file, text, random bytes
(a memo index that was never stored, a stack that underflows, an unknown opcode), a damaged zip."""


def _unreadable(path: str | os.PathLike[str], what: str, err: BaseException) -> DamagedFileError:
    """The one sentence for a file that is no readable ``what`` (never for a refused global)."""
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if not magic:
        problem = "an empty file"
    elif what == "torch checkpoint":
        problem = torch_file_problem(Path(path))
    elif magic == b"PK\x03\x04":
        problem = "a zip archive, as PyTorch saves its checkpoints, not a Python pickle"
    else:
        problem = None
    problem = problem or f"{type(err).__name__}: {' '.join(str(err).split())}".removesuffix(": ")
    return DamagedFileError(f"{os.fspath(path)} is not a readable {what} ({problem}): give the model's original "
                            "file (copy or download it again if it was cut short)")


class RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` whose ``find_class`` resolves only ``allowed`` ``(module, name)`` pairs.

    Args:
        file: binary file object.
        allowed: the allow-list (default :data:`LEGACY_PICKLE_ALLOWED`).
        source: name of the file, for error messages.
        **kwargs: passed to ``pickle.Unpickler`` (e.g. ``encoding="latin1"``).
    """

    def __init__(
        self,
        file: io.BufferedIOBase,
        allowed: Iterable[tuple[str, str]] = LEGACY_PICKLE_ALLOWED,
        source: str = "<pickle>",
        **kwargs: Any,
    ) -> None:
        super().__init__(file, **kwargs)
        self.allowed = frozenset(allowed)
        self.source = source

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 - see class docstring
        if (module, name) not in self.allowed:
            raise UnsafePickleError(
                f"refusing to load {self.source}: it references the global '{module}.{name}', which is not in the "
                f"allow-list of a ParaNMT checkpoint (numpy arrays, dtypes and plain containers). Loading it could "
                f"run arbitrary code; nothing was executed."
            )
        if module.startswith("numpy.core.") or module == "numpy.core":
            module = module.replace("numpy.core", "numpy._core", 1) if _numpy_major() >= 2 else module
        return super().find_class(module, name)


def _is_no_torch_file(path: str | os.PathLike[str]) -> bool:
    return torch_file_problem(Path(path)) is not None


def _numpy_major() -> int:
    import numpy as np

    return int(np.__version__.split(".")[0])


def load_legacy_pickle(
    path: str | os.PathLike[str], allowed: Iterable[tuple[str, str]] = LEGACY_PICKLE_ALLOWED
) -> Any:
    """Load a (Python 2 or 3) pickle of NumPy arrays and containers without running pickled code.

    Args:
        path: the ``.pickle`` file.
        allowed: ``(module, name)`` globals it may reference (default :data:`LEGACY_PICKLE_ALLOWED`).

    Raises:
        UnsafePickleError: the pickle references any other global (e.g. ``os.system``).
        DamagedFileError: the file is no readable pickle (empty, truncated, text, a PyTorch zip checkpoint...).
    """
    with open(path, "rb") as f:
        try:
            return RestrictedUnpickler(f, allowed=allowed, source=os.fspath(path), encoding="latin1").load()
        except UnsafePickleError:
            raise
        except UNREADABLE_ERRORS as err:
            raise _unreadable(path, "pickle", err) from err


def load_torch_checkpoint(path: str | os.PathLike[str], allowed_globals: Iterable[Any] = ()) -> Any:
    """``torch.load(path, weights_only=True, map_location="cpu")`` with ``allowed_globals`` allowed for this call.

    Args:
        path: the ``.pt`` file (zip or legacy format).
        allowed_globals: classes/functions the checkpoint may reference besides tensors and plain containers
            (e.g. ``[argparse.Namespace]``); they are allowed only while this call runs.

    Raises:
        UnsafePickleError: the checkpoint references a global outside PyTorch's safe set and ``allowed_globals``.
        DamagedFileError: the file is no readable torch checkpoint (empty, truncated, text, random bytes...).
    """
    import torch

    try:
        with torch.serialization.safe_globals(list(allowed_globals)):
            return torch.load(path, map_location="cpu", weights_only=True)
    except UnsafePickleError:
        raise
    except pickle.UnpicklingError as err:
        if "GLOBAL" not in str(err) and _is_no_torch_file(path):  # bytes that are no pickle at all
            raise _unreadable(path, "torch checkpoint", err) from err
        detail = str(err).split("Please file an issue")[0].strip()
        hint = next((line.strip() for line in detail.splitlines() if "GLOBAL" in line or "global" in line), detail)
        raise UnsafePickleError(
            f"refusing to load {os.fspath(path)}: it is not a plain checkpoint of tensors, containers and the "
            f"allowed classes {[getattr(g, '__qualname__', str(g)) for g in allowed_globals]}. Loading it could run "
            f"arbitrary code; nothing was executed. PyTorch said: {hint[:500]}"
        ) from err
    except UNREADABLE_ERRORS as err:
        raise _unreadable(path, "torch checkpoint", err) from err


__all__ = [
    "LEGACY_PICKLE_ALLOWED",
    "RestrictedUnpickler",
    "UnsafePickleError",
    "load_legacy_pickle",
    "load_torch_checkpoint",
]

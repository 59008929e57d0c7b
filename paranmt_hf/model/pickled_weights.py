"""One sentence for a weights file that is a pickle naming code, instead of torch's traceback and its advice.

transformers loads ``pytorch_model.bin`` with ``torch.load(weights_only=True)``: a pickle that names anything but
tensors and plain containers is refused before anything runs, with an ``UnpicklingError`` whose text advises
loading it with ``weights_only=False`` (which would run that code). :func:`pickled_code_error` turns that error
into one sentence that names the file and says nothing ran.
"""

from __future__ import annotations

import os
import pickle
import re
from types import TracebackType

from ..utils.exception_chain import exception_chain
from ..utils.safe_pickle import UnsafePickleError


def _loaded_file(tb: TracebackType | None) -> str | None:
    """The file the innermost ``torch.load`` of a traceback was reading (its ``f`` argument), if any."""
    found = None
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "load" and frame.f_globals.get("__name__") == "torch.serialization":
            f = frame.f_locals.get("f")
            name = f if isinstance(f, (str, os.PathLike)) else getattr(f, "name", None)
            if isinstance(name, (str, os.PathLike)):
                found = os.fspath(name)
        tb = tb.tb_next
    return found


def pickled_code_error(err: BaseException) -> UnsafePickleError | None:
    """The one-sentence error for a pickled weights file refused by torch's safe loader (None for other errors).

    ``err`` or an exception it was raised from must be torch's ``UnpicklingError``; the file is found in its
    traceback. A :class:`~paranmt_hf.utils.integrity.DamagedFileError` on the way already says what the file is (no
    pickle at all, e.g. text or an empty file): that is no refused pickle.
    """
    from ..utils.integrity import DamagedFileError

    for current in exception_chain(err):
        if isinstance(current, UnsafePickleError):
            return current
        if isinstance(current, DamagedFileError):
            return None
        if isinstance(current, pickle.UnpicklingError):
            path = _loaded_file(current.__traceback__) or "the model's pickled weights file"
            named = re.search(r"GLOBAL ([\w.]+)", str(current))
            what = f"names {named.group(1)}" if named else "holds objects other than tensors"
            return UnsafePickleError(
                f"{path} is a pickle that {what}, code that would run to load it: it was not loaded and nothing ran; "
                "use a copy of the model saved as safetensors (model.safetensors), from a source you trust")
    return None

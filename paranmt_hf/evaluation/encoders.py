"""What the evaluation calls an encoder, and loading one from a directory.

An *encoder* is any object with ``encode(list[str]) -> array [N, D]``: a :class:`~paranmt_hf.ParaNMTEncoder`, a
``sentence_transformers.SentenceTransformer``, a ``model2vec.StaticModel``, or anything else with that method. The
same code path evaluates our models and the peers.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..model.folder_kind import model_kind


@runtime_checkable
class SupportsEncode(Protocol):
    """Anything with ``encode(sentences) -> np.ndarray`` of shape ``[len(sentences), dim]``."""

    def encode(self, sentences: list[str], **kwargs: Any) -> Any:
        """Embed ``sentences``."""


def encode(
    encoder: SupportsEncode, sentences: Sequence[str], batch_size: int = 256, show_progress_bar: bool = False
) -> np.ndarray:
    """Call ``encoder.encode`` with the keyword arguments it accepts; return float32 ``[N, D]`` NumPy embeddings.

    Raises:
        ValueError: the encoder returned a wrong shape.
    """
    texts = list(sentences)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    try:
        params = inspect.signature(encoder.encode).parameters
    except (TypeError, ValueError):
        params = {}
    has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs: dict[str, Any] = {}
    for key, value in (("batch_size", batch_size), ("show_progress_bar", show_progress_bar)):
        if key in params or has_var_kw:
            kwargs[key] = value
    if "convert_to_numpy" in params:
        kwargs["convert_to_numpy"] = True
    out = encoder.encode(texts, **kwargs)
    if hasattr(out, "detach"):  # a torch tensor
        out = out.detach().float().cpu().numpy()
    arr = np.asarray(out, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != len(texts):
        raise ValueError(f"encoder returned shape {arr.shape} for {len(texts)} sentences; expected [N, dim]")
    return arr


def load_encoder(
    path: str | os.PathLike[str], device: str | None = None, trust_remote_code: bool = False
) -> SupportsEncode:
    """Load a local model directory as an encoder, whatever its library (ParaNMT, sentence-transformers, model2vec).

    Without torch, a ParaNMT averaging model is loaded as a ``StaticEncoder`` (the same embeddings, with NumPy).

    Args:
        path: the model directory.
        device: torch device of sentence-transformers models (default CPU).
        trust_remote_code: allow code shipped in the directory to run (off by default, as in transformers).

    Raises:
        FileNotFoundError: no such directory.
        RemoteCodeError: the directory's code would run and ``trust_remote_code`` is false.
        DamagedFileError: a file of the directory is damaged (one sentence naming it).
        UnsafePickleError: its weights are a pickle that names code (nothing ran).
    """
    from ..model.remote_code import check_remote_code
    from ..utils.integrity import DamagedFileError, damaged_file_error

    kind = model_kind(path)
    if kind == "paranmt" and not _has_torch():  # a core install: NumPy embeds averaging models the same
        from ..model.static import StaticEncoder

        try:
            return StaticEncoder.from_pretrained(path)  # runs no code of the folder
        except ValueError as err:  # a recurrent model: it needs torch, and the message names the extra
            if "recurrent model" not in str(err):
                raise
            from ..utils.imports import MissingExtraError

            raise MissingExtraError(str(err), ("torch",), ("torch", "transformers")) from None
    check_remote_code(path, trust_remote_code)
    try:
        return _load(path, kind, device, trust_remote_code)
    except DamagedFileError:
        raise
    except Exception as err:  # sentence-transformers / model2vec read the files themselves: name a damaged one
        from ..model.pickled_weights import pickled_code_error

        refused = pickled_code_error(err)
        if refused is not None:
            raise refused from None
        damaged = damaged_file_error(path, err)
        if damaged is None:
            raise
        raise damaged from err


def _has_torch() -> bool:
    """Whether torch and transformers can be imported (not in a core install)."""
    import importlib.util

    try:
        return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers"))
    except (ImportError, ValueError):
        return False


def _load(path: str | os.PathLike[str], kind: str, device: str | None, trust_remote_code: bool) -> SupportsEncode:
    """The encoder of a folder of library ``kind`` (:func:`~paranmt_hf.model.folder_kind.model_kind`)."""
    if kind == "paranmt":
        from ..model.encoder import ParaNMTEncoder

        return ParaNMTEncoder.from_pretrained(path, trust_remote_code=trust_remote_code)
    if kind == "model2vec":
        from ..utils.imports import require

        return require("model2vec", "peers").StaticModel.from_pretrained(str(path))
    from ..utils.imports import require

    st = require("sentence_transformers", "st")
    return st.SentenceTransformer(str(path), device=device or "cpu", trust_remote_code=trust_remote_code)


def embedding_dim(encoder: SupportsEncode) -> int | None:
    """The embedding size if the encoder tells it (``embedding_dim``, ``dim`` or ST's dimension getter)."""
    for attr in ("embedding_dim", "dim"):
        value = getattr(encoder, attr, None)
        if isinstance(value, int):
            return value
    for getter in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
        fn = getattr(encoder, getter, None)
        if callable(fn):
            try:
                value = fn()
            except Exception:  # noqa: BLE001 - a probe, any failure means "unknown"
                continue
            if isinstance(value, int):
                return value
    return None


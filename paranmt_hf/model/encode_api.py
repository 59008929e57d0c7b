"""The ``encode`` API, with sentence-transformers' keywords and meanings: inputs, options, outputs, similarity.

One place for :class:`~paranmt_hf.model.encoder.ParaNMTEncoder` and the torch-free
:class:`~paranmt_hf.model.static.StaticEncoder`: the input check (strings of valid Unicode), ``prompt`` /
``prompt_name``, ``truncate_dim`` (the first dimensions, before normalising, as sentence-transformers does),
``normalize_embeddings``, ``precision`` (``quantize_embeddings`` of
sentence-transformers, reimplemented in NumPy), cosine similarity as a matrix (``similarity``) or row by row
(``similarity_pairwise``); texts are refused (encode them first). NumPy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

_TEXT_CHECK_CHUNK = 8192


def _check_text(out: list[str]) -> None:
    """Raise a clear ``ValueError`` for a sentence that is not valid Unicode text (a lone surrogate such as U+D800).

    Such strings come from decoding bytes with ``errors="surrogateescape"`` and cannot be tokenized. The check encodes
    chunks of joined sentences to UTF-16 (a C loop; ASCII chunks skip it), so it costs little next to tokenization.
    """
    for start in range(0, len(out), _TEXT_CHECK_CHUNK):
        joined = "".join(out[start : start + _TEXT_CHECK_CHUNK])
        if joined.isascii():
            continue
        try:
            joined.encode("utf-16-le")
        except UnicodeEncodeError:
            for i in range(start, min(start + _TEXT_CHECK_CHUNK, len(out))):
                try:
                    out[i].encode("utf-16-le")
                except UnicodeEncodeError as err:
                    raise ValueError(
                        f"sentence {i} is not valid Unicode text: lone surrogate {out[i][err.start]!r} at character "
                        f"{err.start} of {out[i]!r:.80} (decode its bytes as UTF-8, with errors='replace' if need be)"
                    ) from None


def check_sentences(sentences: str | Sequence[str]) -> list[str]:
    """Validate the input of ``encode``: a string or a sequence of strings of valid Unicode text (clear errors).

    Raises:
        TypeError: an item is not a ``str``. ValueError: a string holds a lone surrogate (index and position named).
    """
    if isinstance(sentences, str):
        out = [sentences]
    else:
        if isinstance(sentences, np.ndarray):
            sentences = sentences.tolist()
        out = list(sentences)
        for i, s in enumerate(out):
            if not isinstance(s, str):
                raise TypeError(f"sentence {i} is a {type(s).__name__}, not a str: {s!r:.80}")
    _check_text(out)
    return out


PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")
"""``encode(precision=...)``: sentence-transformers' precisions (``quantize_embeddings``)."""

PROMPT_NAMES = ("query", "document")
"""Prompt names of a saved model (``config_sentence_transformers.json``): both empty, as the papers' models have
none."""

def resolve_prompt(prompt: str | None, prompt_name: str | None) -> str:
    """The text put before every sentence: ``prompt``, else the (empty) prompt called ``prompt_name``.

    Raises:
        ValueError: an unknown ``prompt_name``.
    """
    if prompt is not None:
        return prompt
    if prompt_name is not None and prompt_name not in PROMPT_NAMES:
        raise ValueError(f"prompt_name={prompt_name!r} is not one of this model's prompts {PROMPT_NAMES}")
    return ""


def check_encode_options(output_value: str | None, precision: str, truncate_dim: int | None) -> None:
    """Refuse ``encode`` options that a paraphrastic encoder cannot honour, with one clear sentence each."""
    if output_value != "sentence_embedding":
        raise ValueError(f"output_value={output_value!r}: ParaNMT encoders return sentence embeddings only "
                         "(output_value='sentence_embedding')")
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not one of {PRECISIONS}")
    if truncate_dim is not None and int(truncate_dim) < 1:
        raise ValueError(f"truncate_dim must be a positive number of dimensions or None, got {truncate_dim}")


def prepare_texts(
    sentences: str | Sequence[str], output_value: str | None, precision: str, truncate_dim: int | None,
    prompt: str | None, prompt_name: str | None,
) -> tuple[list[str], bool]:
    """The texts ``encode`` embeds (options checked, the prompt put in front) and whether one string was given."""
    check_encode_options(output_value, precision, truncate_dim)
    text = resolve_prompt(prompt, prompt_name)
    texts = check_sentences(sentences)
    return ([text + t for t in texts] if text else texts), isinstance(sentences, str)


def deliver(
    embeddings: np.ndarray, single: bool, normalize_embeddings: bool, truncate_dim: int | None, precision: str,
    convert_to_numpy: bool, convert_to_tensor: bool, rows_as_tensors: bool,
) -> Any:
    """What ``encode`` returns: :func:`postprocess`, then one array, tensor or list of rows.

    One torch tensor with ``convert_to_tensor``; one row per sentence with ``convert_to_numpy=False`` (tensors when
    ``rows_as_tensors``, else arrays); one row for a single string.
    """
    result: Any = postprocess(embeddings, normalize_embeddings, truncate_dim, precision)
    if convert_to_tensor or (not convert_to_numpy and rows_as_tensors):
        from ..utils.imports import require

        result = require("torch", "torch").from_numpy(result)
        result = result if convert_to_tensor else list(result)
    elif not convert_to_numpy:
        result = list(result)
    return result[0] if single else result


def quantize_embeddings(embeddings: np.ndarray, precision: str) -> np.ndarray:
    """sentence-transformers' ``quantize_embeddings`` without calibration data (NumPy).

    ``int8``/``uint8``: 256 buckets per dimension between the batch's minimum and maximum; ``binary``/``ubinary``:
    one bit per dimension (``> 0``), packed (``binary`` offset by -128 as int8).

    Raises:
        ValueError: an unknown precision, or int8/uint8 ranges from a single embedding.
    """
    embeddings = np.asarray(embeddings)
    if precision == "float32":
        return embeddings.astype(np.float32)
    if precision in ("int8", "uint8"):
        if embeddings.ndim == 1 or embeddings.shape[0] == 1:
            raise ValueError(f"cannot compute {precision} quantization ranges from a single embedding: encode more "
                             "sentences at once, or quantize with sentence_transformers.quantization and ranges")
        starts = embeddings.min(axis=0).astype(np.float32)
        steps = (embeddings.max(axis=0).astype(np.float32) - starts) / 255
        steps = np.where(steps == 0, 1, steps)
        buckets = np.clip(np.floor((embeddings - starts) / steps), 0, 255)
        return buckets.astype(np.uint8) if precision == "uint8" else (buckets - 128).astype(np.int8)
    if precision == "binary":
        return (np.packbits(embeddings > 0, axis=-1) - 128).astype(np.int8)
    if precision == "ubinary":
        return np.packbits(embeddings > 0, axis=-1)
    raise ValueError(f"precision={precision!r} is not one of {PRECISIONS}")


def postprocess(
    embeddings: np.ndarray, normalize_embeddings: bool, truncate_dim: int | None, precision: str
) -> np.ndarray:
    """Float32 sentence embeddings ``[n, dim]`` truncated, normalised and quantized as ``encode`` was asked."""
    if truncate_dim is not None:
        embeddings = embeddings[:, : int(truncate_dim)]
    if normalize_embeddings:
        norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
        embeddings = embeddings / np.maximum(norms, 1e-12)
    if precision != "float32":
        return quantize_embeddings(embeddings, precision)
    return np.ascontiguousarray(embeddings, dtype=np.float32)


def _as_matrix(embeddings: Any) -> np.ndarray:
    if is_text(embeddings):
        raise TypeError("similarity() compares embeddings, as sentence-transformers' does: encode the texts first "
                        "(similarity_pairwise(encode(texts_a), encode(texts_b)) is the cosine of each pair of texts)")
    if hasattr(embeddings, "detach"):  # a torch tensor
        embeddings = embeddings.detach().cpu().numpy()
    out = np.asarray(embeddings, dtype=np.float64)
    if out.ndim == 1:
        out = out[None, :]
    if out.ndim != 2:
        raise ValueError(f"embeddings must be [n, dim] (or one [dim] vector), got shape {list(out.shape)}")
    return out


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def cosine_matrix(a: Any, b: Any) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b``: ``[len(a), len(b)]`` (float32).

    Rows may be numpy arrays, torch tensors or lists; a single vector counts as one row.
    """
    x, y = _as_matrix(a), _as_matrix(b)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"embeddings of different sizes: {x.shape[1]} and {y.shape[1]}")
    return (_unit(x) @ _unit(y).T).astype(np.float32)


def pairwise_cosine(a: Any, b: Any) -> np.ndarray:
    """Cosine similarity of row ``i`` of ``a`` with row ``i`` of ``b``: ``[n]`` (float32)."""
    x, y = _as_matrix(a), _as_matrix(b)
    if x.shape != y.shape:
        raise ValueError(f"pairwise similarity needs embeddings of the same shape, got {list(x.shape)} and "
                         f"{list(y.shape)}")
    return (_unit(x) * _unit(y)).sum(axis=1).astype(np.float32)


def is_text(value: Any) -> bool:
    """Whether ``value`` is a text or a non-empty sequence of texts (not embeddings)."""
    if isinstance(value, str):
        return True
    return isinstance(value, Sequence) and len(value) > 0 and all(isinstance(v, str) for v in value)


__all__ = ["PRECISIONS", "PROMPT_NAMES", "check_encode_options", "check_sentences", "cosine_matrix", "deliver",
           "is_text", "pairwise_cosine", "postprocess", "prepare_texts", "quantize_embeddings",
           "resolve_prompt"]

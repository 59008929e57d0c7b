"""Export a model to another form (ONNX fp32/int8, float16/int8 weight storage) and check it against PyTorch.

:func:`export_model` writes the export atomically into its output folder only after the exported model reproduced
the PyTorch model: every value of every table, within the format's rounding and finite (:func:`check_tables` for
float16 / int8 storage, :func:`check_onnx_rows` for ONNX: each token id as a one-token sentence), and the embeddings
of a sample of natural sentences (:func:`compare`). A failed check raises :class:`ExportCheckError`, naming the
tensor and row, and writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .encoder import ParaNMTEncoder

FORMATS = ("onnx", "onnx-int8", "fp16", "int8", "static")
"""ONNX graph (fp32 / int8 weights), a model directory with float16 / int8 weight storage, or a stock
sentence-transformers ``StaticEmbedding`` model (loads in sentence-transformers and model2vec without custom code)."""

VERIFY_SENTENCES = [
    "A man is playing a guitar.",
    "Two dogs are running through a field of snow!",
    "I don't think it's 3.5 dollars, is it?",
    "",
    "   ",
    "The quick brown fox jumps over the lazy dog.",
    "A woman is slicing an onion in the kitchen.",
    "Someone is riding a horse along the beach at sunset.",
    "The stock market fell sharply on Monday after the announcement.",
    "Officials said the new bridge would open to traffic in early 2019.",
    "He said he had never seen anything like it before in his life.",
    "Can you tell me how to get to the nearest train station?",
    "Please send the report by Friday, 5 p.m. at the latest.",
    "The children were playing football in the park until it got dark.",
    "Scientists have discovered a new species of frog in the rainforest.",
    "What time does the museum open on Sundays?",
    "She has been working as a nurse in London for ten years.",
    "The government announced plans to cut taxes for small businesses.",
    "It was raining heavily, so we decided to stay at home and watch a film.",
    "The U.S. economy grew 2.3% in the third quarter, according to the Commerce Department.",
    "A cat is sleeping on the windowsill.",
    "Three men are standing on a stage and singing.",
    "The man cut the tomato with a knife.",
    "A plane is taking off from the runway.",
    "Mr. Smith's e-mail address is john.smith@example.com.",
    "Un hombre está tocando la guitarra.",
    "Je ne sais pas où se trouve la gare.",
    "Das Wetter ist heute sehr schön.",
    "Ünïcödé, numbers 3.14 & UNKNOWNWORDZ",
    "naïve café déjà vu — «quotes» and ‘apostrophes’",
    "東京は日本の首都です。",
    "Emoji 🙂 and symbols ©®™ € £ ¥",
    "ALL CAPS SENTENCE WITH SHOUTING",
    "lower case sentence without any punctuation at all",
    "Hyphenated-words, well-known state-of-the-art methods; semi-colons: colons!",
    "The committee, which met on Tuesday, rejected the proposal by a vote of 7 to 2.",
    "1 2 3 4 5 6 7 8 9 10 100 1000 1,000,000",
    " ".join(["a very long sentence that repeats itself"] * 40),
]
"""Natural sentences the export check embeds with both models (short, long, empty, punctuation, digits, other
languages and scripts), on top of every row of every table (:func:`check_tables`, :func:`check_onnx_rows`)."""

MIN_COSINE = {"onnx": 0.99999, "fp16": 0.9999, "onnx-int8": 0.999, "int8": 0.999, "static": 0.99999}
"""Smallest cosine between an exported sentence embedding and PyTorch's that the check accepts, per format."""
ZERO = 1e-6
ROW_CHUNK = 1 << 12
FLOAT16_MAX = 65504.0


class ExportCheckError(RuntimeError):
    """The exported model does not reproduce the PyTorch model."""


def compare(reference: Any, got: Any, fmt: str, sentences: Sequence[str] = VERIFY_SENTENCES) -> tuple[float, float]:
    """``(max abs diff, min cosine)`` of exported vs PyTorch embeddings of ``sentences``; raises if they disagree.

    A row that is zero in both (e.g. an empty sentence whose unknown-token row is zero) agrees (cosine 1); a row
    that is zero in one only disagrees (cosine 0).

    Raises:
        ExportCheckError: shapes differ, a value is not finite, or a cosine is below ``MIN_COSINE[fmt]``.
    """
    import numpy as np

    reference, got = np.asarray(reference, dtype=np.float64), np.asarray(got, dtype=np.float64)
    if reference.shape != got.shape:
        raise ExportCheckError(f"exported model gives shape {got.shape}, PyTorch {reference.shape}")
    bad = ~np.isfinite(got).all(axis=1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ExportCheckError(f"exported model gives non-finite embeddings ({int(bad.sum())} of {len(got)} "
                               f"sentences, e.g. {sentences[row]!r:.80})")
    na, nb = np.linalg.norm(reference, axis=1), np.linalg.norm(got, axis=1)
    both_zero = (na <= ZERO) & (nb <= ZERO)
    cos = np.where(both_zero, 1.0, (reference * got).sum(1) / np.maximum(na * nb, 1e-300))
    cos = np.where(~both_zero & ((na <= ZERO) | (nb <= ZERO)), 0.0, cos)
    diff, worst = float(np.abs(got - reference).max(initial=0.0)), float(cos.min(initial=1.0))
    if worst < MIN_COSINE[fmt]:
        row = int(cos.argmin())
        raise ExportCheckError(f"exported model disagrees with PyTorch on {sentences[row]!r:.80}: cosine "
                               f"{worst:.6f} < {MIN_COSINE[fmt]} (max abs diff {diff:.2e})")
    return diff, worst


def _first_violation(where: str, reference: Any, got: Any, bound: Any, first_row: int = 0) -> str | None:
    """Where ``got`` leaves ``reference ± bound`` (or is not finite): ``where`` (with ``{row}``), the values."""
    import numpy as np

    bad = ~np.isfinite(got) | (np.abs(got - reference) > bound)
    if not bad.any():
        return None
    flat = int(np.flatnonzero(bad)[0])
    index = np.unravel_index(flat, bad.shape)
    place = where.format(row=first_row + int(index[0])) + (f", column {index[1]}" if len(index) > 1 else "")
    rows = int(bad.reshape(bad.shape[0], -1).any(axis=1).sum()) if bad.ndim > 1 else int(bad.sum())
    return (f"{place}: exported {float(got[index]):.6g}, PyTorch {float(reference[index]):.6g} "
            f"(allowed difference {float(np.broadcast_to(bound, bad.shape)[index]):.2g}; {rows} row(s) differ)")


def _storage_bound(name: str, reference: Any, fmt: str, quantized: set[str]) -> Any:
    """The largest difference float16 / int8 storage may make to each value of a tensor (round to nearest)."""
    import numpy as np

    if fmt == "fp16":
        return np.abs(reference) * 2.0**-11 * (1 + 1e-6) + 2.0**-25
    if name in quantized:  # int8 rows: half a step of max|row| / 127, plus float32 rounding
        row_max = np.abs(reference).max(axis=1, keepdims=True)
        return row_max / 127.0 * 0.5 * (1 + 1e-4) + 1e-7 * row_max + 1e-12
    return np.abs(reference) * 1e-6 + 1e-12


def check_tables(reference: Any, exported: Any, fmt: str) -> int:
    """Compare every value of every tensor of two ``ParaNMTModel`` state dicts (float16 / int8 storage).

    Each value must be finite and within the format's rounding of the PyTorch value (float16: half a float16 step;
    int8: half a step of its row's scale; tensors int8 storage keeps in float32: equal). Returns the rows checked.

    Raises:
        ExportCheckError: naming the tensor and row (a corrupted row, a value over float16's range).
    """
    import numpy as np

    from .storage import quantized_keys

    quantized = set(quantized_keys(reference)) if fmt == "int8" else set()
    ours, theirs = reference.state_dict(), exported.state_dict()
    if ours.keys() != theirs.keys():
        raise ExportCheckError(f"exported model has tensors {sorted(theirs)}, PyTorch {sorted(ours)}")
    rows = 0
    for name, tensor in ours.items():
        ref = tensor.detach().float().cpu().numpy()
        got = theirs[name].detach().float().cpu().numpy()
        if ref.shape != got.shape:
            raise ExportCheckError(f"{name}: exported shape {got.shape}, PyTorch {ref.shape}")
        if fmt == "fp16" and np.isfinite(ref).all() and (np.abs(ref) > FLOAT16_MAX).any():
            row = int(np.flatnonzero((np.abs(ref) > FLOAT16_MAX).reshape(len(ref), -1).any(axis=1))[0])
            raise ExportCheckError(f"{name} row {row} holds values beyond float16's range (±{FLOAT16_MAX:g}): "
                                   "they would be stored as inf; export with --format int8 or keep float32")
        for start in range(0, max(len(ref), 1), ROW_CHUNK):
            part = slice(start, start + ROW_CHUNK)
            problem = _first_violation(f"{name} row {{row}}", ref[part], got[part],
                                       _storage_bound(name, ref[part], fmt, quantized), start)
            if problem is not None:
                raise ExportCheckError(problem)
        rows += len(ref) if ref.ndim else 1
    return rows


def check_onnx_rows(encoder: ParaNMTEncoder, onnx_path: str | os.PathLike[str], fmt: str) -> int:
    """Run every token id as a one-token sentence through PyTorch and the ONNX graph; every value must agree.

    A one-token sentence embeds as its table row, so this compares every row of every table as the graph computes
    it: fp32 to float rounding; int8 to half a quantisation step of the table (onnxruntime quantises the table as
    a whole: ``(max - min) / 255``). Returns the rows checked.

    Raises:
        ExportCheckError: naming the token id (a corrupted row, a non-finite value).
    """
    import torch

    from ..utils.imports import require

    ort = require("onnxruntime", "onnx")
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    tables = [c.embedding.weight.detach().float() for c in encoder.model.components]
    largest = max(float(t.abs().max()) for t in tables)
    if fmt == "onnx-int8":
        step = max(float(torch.clamp(t.max(), min=0) - torch.clamp(t.min(), max=0)) for t in tables) / 255.0
        bound = len(tables) * (0.5 * step * (1 + 1e-3)) + 1e-5 * largest
    else:
        bound = len(tables) * 1e-5 * max(largest, 1.0)
    total = sum(c.vocab_size for c in encoder.model.components)
    encoder.model.eval()
    for start in range(0, total, ROW_CHUNK):
        ids = torch.arange(start, min(start + ROW_CHUNK, total), dtype=torch.int64)
        offsets = torch.arange(len(ids), dtype=torch.int64)
        with torch.inference_mode():
            ref = encoder.model(input_ids=ids, offsets=offsets).pooler_output.numpy()
        got = session.run(["embeddings"], {"input_ids": ids.numpy(), "offsets": offsets.numpy()})[0]
        problem = _first_violation("the one-token sentence of token id {row}", ref, got, bound, start)
        if problem is not None:
            raise ExportCheckError(problem)
    return total


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_model` wrote: the exported file or folder, and the check (None when not verified).

    ``max_abs_diff`` / ``min_cosine``: over :data:`VERIFY_SENTENCES`; ``rows_checked``: table rows compared.
    """

    path: Path
    max_abs_diff: float | None = None
    min_cosine: float | None = None
    rows_checked: int | None = None


STATIC_NEEDS = ("--format static writes sentence-transformers' StaticEmbedding (the mean of the rows of a "
                "`tokenizers` tokenizer's tokens), which only a single word, sp or subword averaging model with mean "
                "pooling matches")


def static_format_problem(model_dir: str | os.PathLike[str]) -> str | None:
    """Why ``--format static`` cannot reproduce the model saved in ``model_dir``, or None.

    Read from its ``config.json`` alone, before the model is loaded; the weights' unknown-token rows are checked once
    it is loaded, by :func:`~paranmt_hf.model.st_layout.write_static_embedding`.
    """
    import json

    from ..modeling.kinds_paranmt import ENCODER_KIND_SPECS, renamed_fields, resolve_components

    try:
        config = renamed_fields(json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8")))
        if config.get("components") is not None:
            config["components"] = [renamed_fields(c) for c in config["components"]]
        components = resolve_components(config)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not readable here: the loader reports it
    kinds = [c["kind"] for c in components]
    if len(components) != 1:
        found = f"a {'+'.join(kinds)} combination"
    elif not ENCODER_KIND_SPECS[kinds[0]].averaging:
        found = f"a recurrent {kinds[0]} model"
    elif ENCODER_KIND_SPECS[kinds[0]].tokens == "trigram":
        found = "a trigram model (its character trigrams come from paranmt_hf's own tokenizer)"
    elif config.get("pooling", "mean") != "mean":
        found = f"a model with {config.get('pooling')} pooling"
    elif components[0].get("drop_unknown_tokens"):
        found = "a model that leaves unknown tokens out of the mean"
    elif config.get("max_seq_length") is not None:
        found = f"a model that reads at most {config['max_seq_length']} tokens (max_seq_length)"
    else:
        return None
    return (f"{model_dir} is {found}; {STATIC_NEEDS}: export it with --format fp16 (every loader) or onnx instead")


def export_model(
    encoder: ParaNMTEncoder,
    output: str | os.PathLike[str],
    fmt: str,
    *,
    verify: bool = True,
    inputs: Sequence[str | os.PathLike[str]] = (),
    overwrite: bool = False,
) -> ExportResult:
    """Export ``encoder`` to ``output`` as ``fmt`` (one of :data:`FORMATS`), checked against PyTorch.

    ``onnx`` / ``onnx-int8``: ONNX graphs and tokenizer files (:mod:`paranmt_hf.model.onnx`); ``fp16`` / ``int8``: a
    model directory with float16 or int8 weights; ``static``: a stock ``StaticEmbedding`` model.

    Args:
        encoder: the model to export.
        output: the output folder (written atomically).
        fmt: the export format.
        verify: check every table value and the embeddings of :data:`VERIFY_SENTENCES` before anything is written.
        inputs: files the output must not replace (e.g. the model directory).
        overwrite: replace an existing ``output``.

    Raises:
        ExportCheckError: the exported model does not reproduce the PyTorch model (nothing is written).
    """
    from ..utils.atomic import atomic_output
    from .encoder import ParaNMTEncoder

    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {FORMATS}")
    reference = encoder.encode(VERIFY_SENTENCES) if verify else None
    rows = None
    with atomic_output(output, list(inputs), overwrite, directory=True) as tmp:
        if fmt in ("onnx", "onnx-int8"):
            from .onnx import OnnxEncoder, export_onnx

            path = export_onnx(encoder, tmp, int8=fmt == "onnx-int8")
            if verify:
                rows = check_onnx_rows(encoder, path, fmt)
            got = OnnxEncoder(path).encode(VERIFY_SENTENCES) if verify else None
        elif fmt == "static":
            from sentence_transformers import SentenceTransformer

            from .st_layout import write_static_embedding

            write_static_embedding(encoder.model, encoder.tokenizer, tmp)
            path = Path(tmp)
            got = SentenceTransformer(str(path), device="cpu").encode(VERIFY_SENTENCES) if verify else None
        else:
            encoder.save_pretrained(tmp, weight_dtype="float16" if fmt == "fp16" else "int8")
            path = Path(tmp)
            exported = ParaNMTEncoder.from_pretrained(path) if verify else None
            if exported is not None:
                rows = check_tables(encoder.model, exported.model, fmt)
            got = exported.encode(VERIFY_SENTENCES) if exported is not None else None
        check = None if got is None else compare(reference, got, fmt)
    final = Path(output) / Path(path).relative_to(tmp)
    if check is None:
        return ExportResult(final)
    return ExportResult(final, *check, rows_checked=rows)

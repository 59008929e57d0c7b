"""Smaller weight storage: float16 or int8 files, always loaded back for float32 compute.

- ``float16``: the saved ``model.safetensors`` holds float16 tensors while ``config.json`` keeps ``dtype=float32``, so
  every loader (``ParaNMTEncoder``, ``AutoModel``, ``SentenceTransformer(dir)``, remote code) upcasts on load and
  computes in float32. Half the size; embeddings change by float16 rounding only. The stock-``StaticEmbedding`` copy
  (``static/``) is not written: it would load, and compute, in float16.
- ``int8``: embedding tables become int8 with one float32 scale per row (symmetric, ``scale = max|row| / 127``) in
  ``model_int8.safetensors``; other tensors (LSTM, GRAN gate) stay float32. No ``model.safetensors`` is written, so
  loaders that cannot dequantise fail loudly instead of loading garbage; :func:`load_int8_model` (used by
  ``ParaNMTEncoder.from_pretrained``) dequantises to float32.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where it is used: the torch-free path (``static.py``) reads the constants
    import torch

    from ..modeling.modeling_paranmt import ParaNMTModel

INT8_FILE = "model_int8.safetensors"
SCALE_SUFFIX = ".int8_scale"
DTYPES = ("float32", "float16", "int8")


def quantize_rows(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8: ``(q, scale)`` with ``weight ≈ q * scale[:, None]``."""
    import torch

    scale = weight.abs().amax(dim=1).float() / 127.0
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.clamp(torch.round(weight.float() / scale[:, None]), -127, 127).to(torch.int8)
    return q, scale


def dequantize_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Float32 rows back from :func:`quantize_rows`."""
    return q.float() * scale[:, None]


def quantized_keys(model: ParaNMTModel) -> list[str]:
    """The tensors int8 storage quantises (the embedding tables); the others stay float32."""
    return [f"components.{i}.embedding.weight" for i in range(len(model.components))]


def store_weights(model: ParaNMTModel, directory: str | os.PathLike[str], dtype: str) -> None:
    """Rewrite the weights of a directory that ``save_pretrained`` just wrote in float32 as ``dtype``.

    ``float32`` leaves the directory as it is; ``float16`` rewrites ``model.safetensors`` in half precision and drops
    the ``static/`` copy (a stock ``StaticEmbedding`` would compute in float16); ``int8`` replaces
    ``model.safetensors`` by ``model_int8.safetensors`` (and drops ``static/``). ``config.json`` records the storage.
    """
    from safetensors.torch import save_file

    if dtype not in DTYPES:
        raise ValueError(f"weight dtype must be one of {DTYPES}, got {dtype!r}")
    if dtype == "float32":
        return
    out = Path(directory)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    shutil.rmtree(out / "static", ignore_errors=True)
    if dtype == "float16":
        half = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
        save_file(half, str(out / "model.safetensors"), metadata={"format": "pt"})
    else:
        tensors = dict(state)
        for key in quantized_keys(model):
            tensors[key], tensors[key + SCALE_SUFFIX] = quantize_rows(state[key])
        (out / "model.safetensors").unlink()
        save_file(tensors, str(out / INT8_FILE), metadata={"format": "pt", "paranmt_quantization": "int8-rowwise"})
    _mark(out, dtype)


def _mark(directory: Path, dtype: str) -> None:
    """Record the storage dtype in config.json (compute dtype stays float32)."""
    path = directory / "config.json"
    config = json.loads(path.read_text())
    config["dtype"] = "float32"
    config["paranmt_weight_storage"] = dtype
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def is_int8_dir(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` holds int8 weights saved by :func:`save_quantized`."""
    d = Path(directory)
    return (d / INT8_FILE).is_file() and not (d / "model.safetensors").is_file()


def load_int8_model(directory: str | os.PathLike[str]) -> ParaNMTModel:
    """Load the model of an int8 directory in float32 (embedding rows dequantised)."""
    from safetensors.torch import load_file

    from ..modeling.configuration_paranmt import ParaNMTConfig
    from ..modeling.modeling_paranmt import ParaNMTModel, check_loaded_weights

    d = Path(directory)
    tensors = load_file(str(d / INT8_FILE))
    state = {}
    for key, value in tensors.items():
        if key.endswith(SCALE_SUFFIX):
            continue
        scale = tensors.get(key + SCALE_SUFFIX)
        name = key.replace("encoders.", "components.", 1) if key.startswith("encoders.") else key  # earlier releases
        state[name] = dequantize_rows(value, scale) if scale is not None else value
    model = ParaNMTModel(ParaNMTConfig.from_pretrained(d))
    expected = model.state_dict()
    wrong = [(k, tuple(v.shape), tuple(expected[k].shape)) for k, v in state.items()
             if k in expected and v.shape != expected[k].shape]
    misshapen = {w[0] for w in wrong}
    missing, unexpected = model.load_state_dict({k: v for k, v in state.items() if k not in misshapen}, strict=False)
    missing = [k for k in missing if k not in misshapen]
    check_loaded_weights(str(d / INT8_FILE), {"missing_keys": missing, "unexpected_keys": unexpected,
                                              "mismatched_keys": wrong})
    return model


def storage_bytes(directory: str | os.PathLike[str]) -> int:
    """Size of the weight file(s) of a saved directory (model.safetensors or the int8 file; not static/)."""
    d = Path(directory)
    return sum((d / f).stat().st_size for f in ("model.safetensors", INT8_FILE) if (d / f).is_file())

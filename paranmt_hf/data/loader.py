"""``load_paranmt``: the ParaNMT builder through the library (datasets >= 4 no longer runs dataset scripts)."""

from __future__ import annotations

import os
from typing import Any

from ..utils.imports import require

CONFIGS = ("full", "filtered", "processed-5m", "pairs", "bitext")


def load_paranmt(
    config: str = "full",
    data_files: str | os.PathLike[str] | list[str | os.PathLike[str]] | None = None,
    *,
    streaming: bool = True,
    split: str | None = "train",
    cache_dir: str | os.PathLike[str] | None = None,
    **config_kwargs: Any,
) -> Any:
    """Load ParaNMT-50M (or your own pair corpus) as a ``datasets`` ``IterableDataset`` / ``Dataset``.

    Args:
        config: ``"full"``, ``"filtered"``, ``"processed-5m"``, ``"pairs"`` or ``"bitext"``.
        data_files: local path(s) (plain, .gz or .zip; no ``file://`` URIs) or http(s) URL(s). Default for
            ``full``/``filtered``: the public ParaNMT-50M zip (``PARANMT_50M_URL``).
        streaming: return an ``IterableDataset`` read lazily at constant memory (default) instead of preparing an
            Arrow cache and returning a ``Dataset``.
        split: ``"train"`` (the only split), or None for the ``{split: dataset}`` dict.
        cache_dir: datasets cache directory (non-streaming).
        **config_kwargs: config parameters of :class:`paranmt_hf.dataset_scripts.paranmt.ParaNMTConfig`, e.g.
            ``strict=True``, ``recipe="acl2018"``, ``sim_low=0.7``, ``max_overlap=0.5``, ``tokenizer="whitespace"``.

    Examples:
        >>> ds = load_paranmt("filtered", "para-nmt-50m.zip")                   # doctest: +SKIP
        >>> next(iter(ds))                                                       # doctest: +SKIP
        {'reference': ..., 'paraphrase': ..., 'paraphrase_score': 0.83, 'trigram_overlap': 0.2, ...}
    """
    if config not in CONFIGS:
        raise ValueError(f"unknown config {config!r}; choose one of {CONFIGS}")
    require("datasets", "data")
    from ..dataset_scripts.paranmt import ParaNMT

    if data_files is not None:
        files = data_files if isinstance(data_files, (list, tuple)) else [data_files]
        config_kwargs["paths"] = tuple(os.fspath(f) for f in files)
    if "folds" in config_kwargs:
        config_kwargs["folds"] = tuple(config_kwargs["folds"])
    builder = ParaNMT(config_name=config, cache_dir=None if cache_dir is None else os.fspath(cache_dir),
                      **config_kwargs)
    if streaming:
        return builder.as_streaming_dataset(split=split)
    builder.download_and_prepare()
    return builder.as_dataset(split=split)

"""``load_paranmt``: the ParaNMT builder through the library (datasets >= 4 no longer runs dataset scripts)."""

from __future__ import annotations

import os
from typing import Any

from ..data.configs import ConfigOptions, get_config
from ..utils.imports import require


def file_signature(paths: list[str]) -> tuple[tuple[str, int, str], ...]:
    """``(resolved path, size, sha256 of the content)`` of each local file (URLs are left to datasets' cache).

    Part of the non-streaming cache key: the same file name in another folder, or a file whose content changed, is a
    different corpus and is prepared again, even when its size and modification time were kept (``cp -p``,
    ``rsync -a``). The hash is remembered per version of the file (:mod:`paranmt_hf.utils.content_hash`), so an
    unchanged file is not read again.
    """
    from ..utils.content_hash import file_sha256

    out = []
    for path in paths:
        if "://" in path:
            continue
        real = os.path.realpath(path)
        out.append((real, os.stat(real).st_size, file_sha256(real)))
    return tuple(out)


def _our_error(err: BaseException) -> BaseException | None:
    """The reader's own error (naming file and line) inside a ``datasets`` wrapper, if there is one."""
    from ..data.reader import InputError
    from ..data.records import BadLineError

    seen = 0
    while err is not None and seen < 10:
        if isinstance(err, (InputError, BadLineError, FileNotFoundError)):
            return err
        err = err.__cause__ or err.__context__
        seen += 1
    return None


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
        data_files: local path(s) (plain, .gz or .zip) or http(s) URL(s) (default for ``full``/``filtered``: the zip).
        streaming: read lazily at constant memory (default), else prepare an Arrow cache keyed on the files' content.
        split: ``"train"`` (the only split), or None for the ``{split: dataset}`` dict.
        cache_dir: datasets cache directory (non-streaming).
        **config_kwargs: :class:`paranmt_hf.data.configs.ConfigOptions` fields, e.g. ``filter="acl2018"``.

    Raises:
        ValueError: an unknown option; (non-streaming) the files hold no valid line (the message names them).

    Examples:
        >>> ds = load_paranmt("filtered", "para-nmt-50m.zip")                   # doctest: +SKIP
        >>> next(iter(ds))                                                       # doctest: +SKIP
        {'reference': ..., 'paraphrase': ..., 'paraphrase_score': 0.83, 'trigram_overlap': 0.2, ...}
    """
    get_config(config)
    known = set(ConfigOptions.__dataclass_fields__)
    if unknown := sorted(set(config_kwargs) - known):
        raise ValueError(f"load_paranmt: unknown option(s) {unknown}; the options are ConfigOptions' fields: "
                         f"{', '.join(sorted(known))}")
    require("datasets", "data")
    from .paranmt import ParaNMT

    files: list[str] = []
    if data_files is not None:
        given = data_files if isinstance(data_files, (list, tuple)) else [data_files]
        files = [os.fspath(f) for f in given]
        config_kwargs["paths"] = tuple(files)
    if "folds" in config_kwargs:
        config_kwargs["folds"] = tuple(config_kwargs["folds"])
    if not streaming:
        config_kwargs["signature"] = file_signature(files)
    builder = ParaNMT(config_name=config, cache_dir=None if cache_dir is None else os.fspath(cache_dir),
                      **config_kwargs)
    if streaming:
        return builder.as_streaming_dataset(split=split)
    try:
        builder.download_and_prepare()
    except Exception as err:  # datasets wraps errors in "An error occurred while generating the dataset"
        cause = _our_error(err)
        if cause is None:
            raise
        raise cause from None
    splits = builder.info.splits
    if splits is None or not any(s.num_examples for s in splits.values()):
        from ..data.reader import InputError

        where = ", ".join(files) if files else "the ParaNMT-50M download"
        raise InputError(f"{where}: no valid pair to load for config {config!r} (the file is empty, or every line "
                         f"is bad or filtered out; load_paranmt({config!r}, ..., strict=True) names the first bad "
                         "line)")
    return builder.as_dataset(split=split)

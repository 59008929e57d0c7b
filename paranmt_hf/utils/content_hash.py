"""Content hashes of files, computed once per version of a file.

:func:`file_sha256` hashes a file's whole content. The answer is remembered in the user cache
(``<cache>/content-hashes/``), keyed on the file's identity *and* its status-change time (``ctime``): ``cp -p`` and
``rsync -a`` preserve size and modification time but cannot preserve ``ctime``, and writing a file always updates
it, so a changed file is always hashed again while an unchanged one costs a ``stat``. Used for the training-data
cache key (:func:`paranmt_hf.dataset_scripts.loading.file_signature`), the resume check of a training run and the
model records of evaluation results.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from pathlib import Path

CHUNK = 1 << 20
MEMO_DIR = "content-hashes"


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's content (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _memo_path(path: Path, info: os.stat_result) -> Path | None:
    from .paths import cache_dir

    identity = f"{path}\0{info.st_dev}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}"
    try:
        return cache_dir() / MEMO_DIR / hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()
    except (OSError, RuntimeError):  # no home folder
        return None


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's content, remembered per version of the file (see the module docstring)."""
    real = Path(os.path.realpath(path))
    before = os.stat(real)
    memo = _memo_path(real, before)
    if memo is not None:
        with contextlib.suppress(OSError):
            cached = memo.read_text(encoding="ascii").strip()
            if len(cached) == 64:
                return cached
    digest = sha256_file(real)
    after = os.stat(real)
    unchanged = (before.st_size, before.st_mtime_ns, before.st_ctime_ns) == (
        after.st_size, after.st_mtime_ns, after.st_ctime_ns)
    if memo is not None and unchanged:  # a file written while it was read is not remembered
        with contextlib.suppress(OSError):
            memo.parent.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f".{memo.name}.{uuid.uuid4().hex[:8]}")
            tmp.write_text(digest + "\n", encoding="ascii")
            os.replace(tmp, memo)
    return digest

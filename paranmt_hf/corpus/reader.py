"""Stream raw lines from a plain, gzip or zip file at constant memory.

The compression is detected from the first bytes, not the file name. A zip is read member by member (the members
whose path matches ``member_pattern``, in name order), each decompressed as a stream.
"""

from __future__ import annotations

import fnmatch
import gzip
import os
import zipfile
from collections.abc import Callable, Iterator
from typing import IO, Any

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"

Opener = Callable[..., Any]


def zip_members(archive: zipfile.ZipFile, member_pattern: str | None = None) -> list[str]:
    """The data members of a zip: files, not ``__MACOSX/`` or hidden, matching ``member_pattern`` (a glob)."""
    names = []
    for info in archive.infolist():
        base = info.filename.rsplit("/", 1)[-1]
        if info.is_dir() or info.filename.startswith("__MACOSX/") or base.startswith("."):
            continue
        if member_pattern is None or fnmatch.fnmatch(info.filename, member_pattern) or base == member_pattern:
            names.append(info.filename)
    return sorted(names)


def _peek(handle: IO[bytes], size: int = 4) -> bytes:
    head = handle.read(size)
    handle.seek(0)
    return head


def iter_raw_lines(
    path: str | os.PathLike[str],
    member_pattern: str | None = None,
    opener: Opener = open,
) -> Iterator[tuple[str, int, bytes]]:
    """Yield ``(source, line_number, raw_line)`` for every line of ``path`` (1-based numbers, bytes with the newline).

    Args:
        path: a local path or, with a streaming ``opener`` (datasets' patched ``open``), a URL.
        member_pattern: glob selecting members of a zip archive (default: every file member).
        opener: function opening ``path`` in binary mode.

    Raises:
        FileNotFoundError: if a zip archive has no member matching ``member_pattern``.
    """
    path = os.fspath(path)
    with opener(path, "rb") as handle:
        head = _peek(handle)
        if head.startswith(ZIP_MAGIC):
            with zipfile.ZipFile(handle) as archive:
                members = zip_members(archive, member_pattern)
                if not members:
                    raise FileNotFoundError(
                        f"no member matching {member_pattern!r} in zip {path}; members: "
                        f"{[i.filename for i in archive.infolist()][:20]}"
                    )
                for member in members:
                    with archive.open(member) as stream:
                        yield from _numbered(f"{path}::{member}", stream)
        elif head.startswith(GZIP_MAGIC):
            with gzip.GzipFile(fileobj=handle) as stream:
                yield from _numbered(path, stream)
        else:
            yield from _numbered(path, handle)


def _numbered(source: str, stream: IO[bytes]) -> Iterator[tuple[str, int, bytes]]:
    for number, line in enumerate(stream, start=1):
        yield source, number, line

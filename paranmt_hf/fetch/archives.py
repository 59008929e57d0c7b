"""Read the members of downloaded zip / tar archives by file name, without extracting anything to disk.

Only regular files are listed; a member is addressed by its base name (``test-gold/STS.input.MSRpar.txt`` is
``STS.input.MSRpar.txt``), so the archives' folder names do not matter. Two members with the same base name keep
the first, in archive order. A damaged archive raises :class:`ArchiveError` naming it.

Members are streamed, never read whole unless asked (:meth:`Archive.read`, for small files), and every read is
held to a size limit: a member that declares or delivers more bytes than its limit (a zip bomb: a few hundred KB
that expand to gigabytes) stops with :class:`ArchiveError` after at most the limit, in blocks of 1 MiB.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

MAX_MEMBER_BYTES = 8 << 30
"""Most bytes a streamed member may hold (ParaNMT-5M's text is ~0.7 GB)."""
MAX_COPY_BYTES = 1 << 30
"""Most bytes of a member copied to disk (:meth:`Archive.copy`: evaluation files are a few MB)."""
MAX_READ_BYTES = 256 << 20
"""Most bytes of a member read into memory (:meth:`Archive.read`)."""
BLOCK = 1 << 20


class ArchiveError(ValueError):
    """An archive is damaged, lacks a member it must hold, or a member is larger than its limit."""


class _Limited(io.RawIOBase):
    """A member's stream that raises :class:`ArchiveError` once more than ``limit`` bytes came out of it."""

    def __init__(self, handle: IO[bytes], limit: int, label: str) -> None:
        super().__init__()
        self.handle, self.limit, self.label, self.seen = handle, limit, label, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        data = self.handle.read(min(len(view), self.limit + 1 - self.seen, BLOCK))
        self.seen += len(data)
        if self.seen > self.limit:
            raise ArchiveError(f"{self.label} holds more than {self.limit:,} bytes: refused (a damaged archive or a "
                               "zip bomb)")
        view[: len(data)] = data
        return len(data)


class Archive:
    """A zip or tar(.gz/.bz2/.xz) file whose regular members are read by base name."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            if zipfile.is_zipfile(self.path):
                self._zip: zipfile.ZipFile | None = zipfile.ZipFile(self.path)
                self._tar: tarfile.TarFile | None = None
                names = [i.filename for i in self._zip.infolist() if not i.is_dir()]
            else:
                self._zip, self._tar = None, tarfile.open(self.path)  # noqa: SIM115 - closed in close()
                names = [m.name for m in self._tar.getmembers() if m.isfile()]
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
            raise ArchiveError(f"{self.path}: not a readable zip/tar archive ({err})") from err
        self.members: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        for name in names:
            self.members.setdefault(name.rsplit("/", 1)[-1], name)
        if self._zip is not None:
            self.sizes = {i.filename: i.file_size for i in self._zip.infolist()}
            self._check_crcs()
        elif self._tar is not None:
            self.sizes = {m.name: m.size for m in self._tar.getmembers() if m.isfile()}

    def _check_crcs(self) -> None:
        """Stream every zip member within its declared size through its CRC check (memory: one 1 MiB block).

        Members declaring more than :data:`MAX_MEMBER_BYTES` are not expanded here: opening them is refused.
        """
        assert self._zip is not None
        for info in self._zip.infolist():
            if info.is_dir() or info.file_size > MAX_MEMBER_BYTES:
                continue
            try:
                with self._zip.open(info) as handle:
                    while handle.read(BLOCK):
                        pass
            except (zipfile.BadZipFile, EOFError, OSError, ValueError) as err:
                raise ArchiveError(f"{self.path}: member {info.filename} is corrupt ({err})") from err

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the archive."""
        for handle in (self._zip, self._tar):
            if handle is not None:
                handle.close()

    def has(self, name: str) -> bool:
        """Whether a member with this base name exists."""
        return name in self.members

    @contextlib.contextmanager
    def open(self, name: str, limit: int | None = None) -> Iterator[IO[bytes]]:
        """A binary stream of the member with base name ``name``, held to ``limit`` bytes (:data:`MAX_MEMBER_BYTES`).

        Raises:
            ArchiveError: no such member, it cannot be read, or it declares or delivers more than ``limit`` bytes.
        """
        if name not in self.members:
            raise ArchiveError(f"{self.path} has no member {name!r} (it holds {sorted(self.members)[:12]}...): "
                               "the source's layout changed")
        member = self.members[name]
        limit = MAX_MEMBER_BYTES if limit is None else limit
        label = f"{self.path}: member {member}"
        if self.sizes.get(member, 0) > limit:
            raise ArchiveError(f"{label} declares {self.sizes[member]:,} bytes, more than the {limit:,} allowed: "
                               "refused (a damaged archive or a zip bomb)")
        try:
            if self._zip is not None:
                raw = self._zip.open(member)
            else:
                assert self._tar is not None
                raw = self._tar.extractfile(member)
                if raw is None:
                    raise ArchiveError(f"{self.path}: {member} is not a regular file")
            with raw, io.BufferedReader(_Limited(raw, limit, label), BLOCK) as handle:
                yield handle
        except (zipfile.BadZipFile, tarfile.TarError, EOFError) as err:
            raise ArchiveError(f"{self.path}: cannot read {member} ({err})") from err

    def read(self, name: str, limit: int | None = None) -> bytes:
        """The bytes of member ``name``: at most ``limit`` (:data:`MAX_READ_BYTES`); more raises ArchiveError."""
        with self.open(name, MAX_READ_BYTES if limit is None else limit) as handle:
            return handle.read()

    def copy(self, name: str, target: str | os.PathLike[str], limit: int | None = None) -> None:
        """Stream member ``name`` into file ``target`` (1 MiB blocks, at most ``limit``: :data:`MAX_COPY_BYTES`)."""
        with self.open(name, MAX_COPY_BYTES if limit is None else limit) as handle, open(target, "wb") as out:
            shutil.copyfileobj(handle, out, BLOCK)

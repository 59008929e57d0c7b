"""Read the members of downloaded zip / tar archives by file name, without extracting anything to disk.

Only regular files are listed; a member is addressed by its base name (``test-gold/STS.input.MSRpar.txt`` is
``STS.input.MSRpar.txt``), so the archives' folder names do not matter. Two members with the same base name keep
the first, in archive order. A damaged archive raises :class:`ArchiveError` naming it.
"""

from __future__ import annotations

import contextlib
import os
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


class ArchiveError(ValueError):
    """An archive is damaged, or lacks a member it must hold."""


class Archive:
    """A zip or tar(.gz/.bz2/.xz) file whose regular members are read by base name."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            if zipfile.is_zipfile(self.path):
                self._zip: zipfile.ZipFile | None = zipfile.ZipFile(self.path)
                self._tar: tarfile.TarFile | None = None
                bad = self._zip.testzip()
                if bad is not None:
                    raise ArchiveError(f"{self.path}: member {bad} is corrupt (CRC error)")
                names = [i.filename for i in self._zip.infolist() if not i.is_dir()]
            else:
                self._zip, self._tar = None, tarfile.open(self.path)  # noqa: SIM115 - closed in close()
                names = [m.name for m in self._tar.getmembers() if m.isfile()]
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as err:
            raise ArchiveError(f"{self.path}: not a readable zip/tar archive ({err})") from err
        self.members: dict[str, str] = {}
        for name in names:
            self.members.setdefault(name.rsplit("/", 1)[-1], name)

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
    def open(self, name: str) -> Iterator[IO[bytes]]:
        """A binary stream of the member with base name ``name``.

        Raises:
            ArchiveError: no such member, or it cannot be read.
        """
        if name not in self.members:
            raise ArchiveError(f"{self.path} has no member {name!r} (it holds {sorted(self.members)[:12]}...): "
                               "the source's layout changed")
        member = self.members[name]
        try:
            if self._zip is not None:
                with self._zip.open(member) as handle:
                    yield handle
            else:
                assert self._tar is not None
                handle = self._tar.extractfile(member)
                if handle is None:
                    raise ArchiveError(f"{self.path}: {member} is not a regular file")
                with handle:
                    yield handle
        except (zipfile.BadZipFile, tarfile.TarError, EOFError) as err:
            raise ArchiveError(f"{self.path}: cannot read {member} ({err})") from err

    def read(self, name: str) -> bytes:
        """The bytes of member ``name``."""
        with self.open(name) as handle:
            return handle.read()

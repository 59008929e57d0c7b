"""Stream text lines from plain, gzip or zip files in blocks, at constant memory, optionally one shard of them.

The compression is detected from the first bytes, not the file name; a zip is read member by member (those
matching ``member_pattern``, in name order). Every file must be UTF-8 text (a UTF-8 byte-order mark is skipped):
one starting with a UTF-16/32 byte-order mark or full of NUL bytes, or a truncated or corrupt stream, raises an
:class:`InputError` naming it.

A line longer than ``max_line_bytes`` is never held in memory: its bytes are dropped as they stream past and a
marker line (:data:`LONG_LINE_MARKER`, counted as a bad line) takes its place, so one endless line is read at
constant memory and the lines after it keep their numbers.

Shards (``Shard(index, count)``) split the inputs into ``count`` contiguous byte ranges of the uncompressed text; a
line belongs to the shard holding its first byte, so concatenating the shards' outputs gives the one-shard output.
"""

from __future__ import annotations

import fnmatch
import gzip
import os
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import IO, Any

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
BLOCK_BYTES = 1 << 20
MAX_LINE_BYTES = 1 << 20
"""The default bound on a line's length in bytes (without its newline)."""
LONG_LINE_MARKER = "\x00paranmt-hf: line over "
"""The start of the line that stands for a line over the bound (``<marker><bytes> bytes``; a NUL byte, so no valid
line can look like it)."""

Opener = Callable[..., Any]


class InputError(ValueError):
    """An input file that cannot be read as UTF-8 text lines (the message names the file)."""


def check_input_files(paths: Sequence[str | os.PathLike[str]]) -> None:
    """Refuse, in one sentence, an input that is a folder or not a regular file (before anything is read).

    Raises:
        InputError: an input is a folder, or a device, socket or pipe.
        FileNotFoundError: an input does not exist.
    """
    for path in map(os.fspath, paths):
        if "://" in path:  # a URL: the opener's to check
            continue
        if os.path.isdir(path):
            raise InputError(f"{path} is a folder: give the text files inside it instead (plain, .gz or .zip; e.g. "
                             f"{os.path.join(path, '*.tsv.gz')})")
        if not os.path.exists(path):
            raise FileNotFoundError(f"input file {path} not found")
        if not os.path.isfile(path):
            raise InputError(f"{path} is not a regular file (a device, socket or pipe): give a text file (plain, .gz "
                             "or .zip)")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (0-based) of ``count`` contiguous byte ranges of the inputs."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard index must be in 0..{self.count - 1} and the shard count >= 1, got "
                             f"{self.index} of {self.count}")

    @property
    def whole(self) -> bool:
        """Whether this is the only shard."""
        return self.count == 1

    def byte_range(self, total: int) -> tuple[int, int]:
        """``[start, end)`` of this shard within ``total`` bytes."""
        return self.index * total // self.count, (self.index + 1) * total // self.count

    def suffix(self) -> str:
        """``-00001-of-00004`` (1-based, as the Hub names shards)."""
        return f"-{self.index + 1:05d}-of-{self.count:05d}"


@dataclass
class Block:
    r"""Whole lines of one file: ``data`` ends with ``\\n``; ``first_line`` is the 1-based number of its first line.

    ``offset`` is the position of ``data`` in the uncompressed text of all inputs; ``position`` the bytes of the
    input files read so far (compressed bytes for compressed files), for progress bars; ``extra`` whatever a tool
    attaches to the block for its workers (e.g. a mask of lines to drop).
    """

    source: str
    first_line: int
    data: bytes
    offset: int = 0
    position: int = 0
    extra: Any = None

    @property
    def lines(self) -> int:
        """Number of lines."""
        return self.data.count(b"\n")


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


def check_text_head(source: str, head: bytes) -> int:
    """Number of leading bytes to skip (a UTF-8 byte-order mark); raise :class:`InputError` for UTF-16/32 text."""
    if head.startswith(UTF8_BOM):
        return len(UTF8_BOM)
    if head.startswith(UTF16_BOMS) or head.startswith(b"\x00\x00\xfe\xff"):
        raise InputError(f"{source}: the file is UTF-16/UTF-32 text (byte-order mark {head[:2].hex(' ')}); "
                         "convert it to UTF-8 first, e.g. `iconv -f UTF-16 -t UTF-8 in.tsv > out.tsv`")
    nul = head.count(b"\x00")
    if head and nul * 8 > len(head):
        raise InputError(f"{source}: not UTF-8 text ({nul} NUL bytes in its first {len(head)} bytes: UTF-16 "
                         "without a byte-order mark, or a binary file); convert it to UTF-8 first")
    return 0


def _peek(handle: IO[bytes], size: int = 4) -> bytes:
    head = handle.read(size)
    handle.seek(0)
    return head


class _Stream:
    """One file or zip member: its name, binary stream, uncompressed size (if known) and on-disk progress."""

    def __init__(self, source: str, stream: IO[bytes], size: int | None, position: Callable[[], int]) -> None:
        self.source, self.stream, self.size, self.position = source, stream, size, position


def _streams(path: str, member_pattern: str | None, opener: Opener, stack: ExitStack) -> Iterator[_Stream]:
    handle = stack.enter_context(opener(path, "rb"))
    head = _peek(handle)

    def position() -> int:
        try:
            return handle.tell()
        except (OSError, ValueError, AttributeError):
            return 0

    if head.startswith(ZIP_MAGIC):
        archive = stack.enter_context(zipfile.ZipFile(handle))
        members = zip_members(archive, member_pattern)
        if not members:
            raise FileNotFoundError(f"no member matching {member_pattern!r} in zip {path}; members: "
                                    f"{[i.filename for i in archive.infolist()][:20]}")
        for member in members:
            with archive.open(member) as stream:
                yield _Stream(f"{path}::{member}", stream, archive.getinfo(member).file_size, position)
    elif head.startswith(GZIP_MAGIC):
        yield _Stream(path, stack.enter_context(gzip.GzipFile(fileobj=handle)), None, position)
    else:
        try:
            size = os.fstat(handle.fileno()).st_size
        except (OSError, AttributeError, ValueError):
            size = None
        yield _Stream(path, handle, size, position)


_READ_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile, zipfile.BadZipFile)


def _read(stream: _Stream, size: int, line: int, pending: bytes = b"") -> bytes:
    """Up to ``size`` bytes of the stream.

    ``line`` is the number of the first line of ``pending`` (the bytes read before and not yet passed on). A
    compressed stream is read in its own steps (``read1``): when it turns out truncated or corrupt, the error names
    the last whole line that was read, not the start of the block that failed.
    """
    pieces: list[bytes] = []
    try:
        if not isinstance(stream.stream, gzip.GzipFile | zipfile.ZipExtFile):
            return stream.stream.read(size)
        got = 0
        while got < size:
            piece = stream.stream.read1(size - got)
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
    except _READ_ERRORS as err:
        last = line - 1 + pending.count(b"\n") + sum(p.count(b"\n") for p in pieces)
        raise InputError(f"{stream.source}: truncated or corrupt compressed data after line {last:,} ({err})") \
            from err
    return b"".join(pieces)


def uncompressed_sizes(paths: Sequence[str | os.PathLike[str]], member_pattern: str | None = None,
                       opener: Opener = open) -> list[int]:
    """Uncompressed bytes of each input (gzip files are decompressed once to measure them)."""
    sizes = []
    for path in paths:
        total = 0
        with ExitStack() as stack:
            for stream in _streams(os.fspath(path), member_pattern, opener, stack):
                if stream.size is not None:
                    total += stream.size
                    continue
                lines = 0
                while chunk := _read(stream, BLOCK_BYTES, lines + 1):
                    total += len(chunk)
                    lines += chunk.count(b"\n")
        sizes.append(total)
    return sizes


def input_bytes(paths: Sequence[str | os.PathLike[str]]) -> int | None:
    """Bytes of the input files on disk (None when one is not a local file), the total of :attr:`Block.position`."""
    try:
        return sum(os.path.getsize(p) for p in paths)
    except (OSError, TypeError):
        return None


def iter_blocks(
    paths: Sequence[str | os.PathLike[str]],
    member_pattern: str | None = None,
    opener: Opener = open,
    block_bytes: int = BLOCK_BYTES,
    shard: Shard | None = None,
    max_line_bytes: int | None = MAX_LINE_BYTES,
) -> Iterator[Block]:
    """Blocks of whole lines of ``paths``, in order (only this shard's lines when ``shard`` is given).

    Args:
        paths: local files or, with a streaming ``opener`` (datasets' patched ``open``), URLs.
        member_pattern: glob selecting zip members (default: every file member).
        opener: function opening a path in binary mode.
        block_bytes: about how many bytes each block holds (a block ends at a line end).
        shard: read only the lines of this shard (needs local files whose sizes can be measured).
        max_line_bytes: a longer line is replaced by a marker line (see the module docstring; None: no bound).

    Raises:
        InputError: a file is UTF-16/32 or binary, or its compressed data is truncated or corrupt.
        FileNotFoundError: a zip archive has no member matching ``member_pattern``.
    """
    start, end = 0, None
    if shard is not None and not shard.whole:
        start, end = shard.byte_range(sum(uncompressed_sizes(paths, member_pattern, opener)))
    offset = disk_before = 0
    for path in paths:
        path = os.fspath(path)
        with ExitStack() as stack:
            for stream in _streams(path, member_pattern, opener, stack):
                if end is not None and offset >= end:
                    return
                offset = yield from _stream_blocks(stream, offset, disk_before, block_bytes, start, end,
                                                   max_line_bytes)
        try:
            disk_before += os.path.getsize(path)
        except OSError:
            pass


def long_line_marker(size: int) -> bytes:
    """The marker line that stands for a line of ``size`` bytes over the bound (with its newline)."""
    return f"{LONG_LINE_MARKER}{size} bytes\n".encode()


def _long_line_at(body: bytes, limit: int, pos: int = 0) -> tuple[int, int] | None:
    """``(start, end)`` of the first line of ``body[pos:]`` (which ends with a newline) longer than ``limit`` bytes.

    ``end`` is the position after its newline. Steps of about ``limit`` bytes, each one C-level search.
    """
    while len(body) - pos > limit + 1:
        newline = body.rfind(b"\n", pos, pos + limit + 1)
        if newline < 0:
            return pos, body.index(b"\n", pos + limit + 1) + 1
        pos = newline + 1
    return None


def _pieces(body: bytes, size: int, limit: int | None) -> Iterator[tuple[bytes, int]]:
    """``body`` (whole lines, ``size`` input bytes) as ``(bytes, input size)`` pieces.

    Each line over ``limit`` bytes is a piece of its own, the marker line in its place.
    """
    if limit is None or _long_line_at(body, limit) is None:
        yield body, size
        return
    extra = size - len(body)  # -1 when a newline was added to the stream's last line
    pos = 0
    while (found := _long_line_at(body, limit, pos)) is not None:
        first, after = found
        if first > pos:
            yield body[pos:first], first - pos
        yield long_line_marker(after - first - 1), after - first + (extra if after == len(body) else 0)
        pos = after
    if pos < len(body):
        yield body[pos:], len(body) - pos + extra


def _skip_long_line(stream: _Stream, size: int, block_bytes: int, line: int) -> tuple[int, bytes, bool]:
    """Read past the rest of a line of which ``size`` bytes (no newline) were read, without keeping it.

    Returns the line's input size (its newline included, when it has one), the bytes after its newline and whether
    the stream ended without one.
    """
    while True:
        chunk = _read(stream, block_bytes, line)
        if not chunk:
            return size, b"", True
        newline = chunk.find(b"\n")
        if newline >= 0:
            return size + newline + 1, chunk[newline + 1 :], False
        size += len(chunk)


def _stream_blocks(stream: _Stream, offset: int, disk_before: int, block_bytes: int, start: int,
                   end: int | None, max_line_bytes: int | None = None) -> Iterator[Block]:
    """Blocks of one stream, which starts at global byte ``offset``; returns the offset after it."""
    line = 1
    buffer = _read(stream, block_bytes, line)
    skip = check_text_head(stream.source, buffer[:4096])
    buffer, offset = buffer[skip:], offset + skip

    def emit(body: bytes, size: int, marker: bool = False) -> Iterator[Block]:
        nonlocal line, offset
        for piece, piece_size in [(body, size)] if marker else _pieces(body, size, max_line_bytes):
            block = _owned(stream.source, line, piece, offset, piece_size, start, end)
            if block is not None:
                block.position = disk_before + stream.position()
                yield block
            line += piece.count(b"\n")
            offset += piece_size

    while True:
        cut = buffer.rfind(b"\n") + 1
        if max_line_bytes is not None and len(buffer) - cut > max_line_bytes:
            # the unfinished line at the end of the buffer is over the bound: drop its bytes as they stream past
            if cut:
                yield from emit(buffer[:cut], cut)
                if end is not None and offset >= end:
                    return offset
            size, buffer, ended = _skip_long_line(stream, len(buffer) - cut, block_bytes, line)
            yield from emit(long_line_marker(size - (0 if ended else 1)), size, marker=True)
            if (end is not None and offset >= end) or ended:
                return offset
            continue
        chunk = _read(stream, block_bytes, line, buffer)
        if not chunk:  # end of the stream: the rest, with a newline added to a last line that has none
            cut = len(buffer)
        if cut:
            body, size = buffer[:cut], cut
            if not body.endswith(b"\n"):
                body += b"\n"
            yield from emit(body, size)
            buffer = buffer[cut:]
            if end is not None and offset >= end:
                return offset
        if not chunk:
            return offset
        buffer += chunk


def _owned(source: str, line: int, body: bytes, offset: int, size: int, start: int, end: int | None) -> Block | None:
    """The lines of ``body`` (at global ``offset``, ``size`` input bytes) whose first byte is in ``[start, end)``."""

    def first_line_at(rel: int) -> int:  # index of the first line start at or after rel (len(body): none)
        return 0 if rel <= 0 else (body.find(b"\n", rel - 1) + 1 or len(body))

    lo = first_line_at(start - offset) if start > offset else 0
    hi = first_line_at(end - offset) if end is not None and end < offset + size else len(body)
    if lo >= hi:
        return None
    return Block(source, line + body.count(b"\n", 0, lo), body[lo:hi], offset + lo)


def text_lines(text: str) -> list[str]:
    r"""The lines of ``text`` split at ``\n`` only (a ``\r`` before it is dropped; no empty line after a last ``\n``).

    ``str.splitlines`` also splits at U+2028, U+0085, form feeds and the other Unicode line ends, which may stand
    inside a sentence of a data file: a line-aligned file would then get more lines than its partner.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_text_lines(path: str | os.PathLike[str]) -> list[str]:
    r"""The lines of a UTF-8 text file, split at ``\n`` only (:func:`text_lines`)."""
    with open(path, encoding="utf-8", newline="") as handle:
        return text_lines(handle.read())


def iter_raw_lines(
    path: str | os.PathLike[str],
    member_pattern: str | None = None,
    opener: Opener = open,
) -> Iterator[tuple[str, int, bytes]]:
    """Yield ``(source, line_number, raw_line)`` for every line of ``path`` (1-based numbers, bytes with the newline).

    Raises:
        FileNotFoundError: if a zip archive has no member matching ``member_pattern``.
        InputError: see :func:`iter_blocks`.
    """
    for block in iter_blocks([path], member_pattern, opener):
        lines = block.data.split(b"\n")
        lines.pop()
        for number, raw in enumerate(lines, start=block.first_line):
            yield block.source, number, raw + b"\n"

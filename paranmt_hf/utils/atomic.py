"""Outputs that are written atomically, one writer at a time, and never replace an input or a result without consent.

The rules every command keeps (docs/reliability.md):

- an output is written under a temporary name in its own folder and renamed into place (``os.replace``) when
  complete: a killed run leaves the old file or the new one, never a partial file under the final name;
- one writer at a time: a writer holds a lock (``.paranmt-lock-<name>`` next to the output) from its existence check
  to its rename; a second writer is refused (:class:`OutputBusyError`, naming the holder);
- an output never replaces one of the run's inputs (symlinks and hard links included), even with ``overwrite``; an
  existing output is replaced only with ``overwrite``, and keeps its mode and group;
- the next writer of an output (holding its lock) removes the temporaries of a killed writer.

    check_output("out.tsv.gz", inputs=["in.tsv.gz"])                # fail early, before any work
    with atomic_output("out.tsv.gz", inputs=["in.tsv.gz"]) as tmp:   # tmp keeps the suffix (.tsv.gz)
        write_pairs(rows, tmp)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import logging
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from filelock import lock_descriptor

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

TEMP_PREFIX = ".paranmt-tmp-"
"""Temporary outputs start with this (hidden, in the output's own folder, so the final rename is atomic)."""
RECORD_WAIT = 60.0
"""Seconds :func:`atomic_write_text` / :func:`atomic_write_json` wait for another writer of the same record."""
MODEL_FOLDER_TOP_SUFFIXES = (".json", ".spm", ".txt", ".model", ".safetensors", ".bin", ".pt", ".onnx", ".msgpack",
                             ".tiktoken", ".vocab")
"""Top-level files of a folder input that a loader may read (any model's configuration, tokenizer or weights)."""


class OutputExistsError(FileExistsError):
    """The output already exists and ``overwrite`` was not given."""


class OutputKindError(OutputExistsError):
    """The output path holds a folder where a file goes, or a file where a folder goes.

    ``overwrite`` never changes a path's kind: replacing a folder tree by one file would delete everything in it.
    """


class OutputBusyError(OutputExistsError):
    """Another process is writing the same output right now."""


class OutputIsInputError(ValueError):
    """The output is one of the inputs (writing it would destroy the input)."""


class UnsafeNameError(ValueError):
    """A name that becomes a path (a config, a revision, a model name) would leave the folder it names an entry of."""


def path_name(name: str, what: str) -> str:
    """``name`` if it names one entry of a folder (not empty, ``.``, ``..``, absolute, nor with a slash or NUL).

    Raises:
        UnsafeNameError: it does not: written as a path, it would land outside its output folder.
    """
    if not name or name.strip() in (".", "..") or any(c in name for c in "/\\\x00") or os.path.isabs(name):
        raise UnsafeNameError(f"{what} {name!r} cannot be a folder name inside the output (it would be written "
                              "elsewhere): use letters, digits, '-', '_' or '.', without '/' or '..'")
    return name


# ------------------------------------------------------------------------------------------- inputs and outputs
def _input_files(src: Path) -> Iterator[Path]:
    """``src`` and, for a folder (a model a command loads), the files a loader reads from it.

    Results next to a model (``embeddings.npy``, an ``export`` folder) are not among them: replaceable with overwrite.
    """
    from .content_hash import model_files

    yield src
    if src.is_dir():
        yield from model_files(src)
        yield from (p for p in src.iterdir() if p.is_file() and p.suffix in MODEL_FOLDER_TOP_SUFFIXES)


def _is_input(out: Path, src: Path) -> bool:
    with contextlib.suppress(OSError):
        if out.exists() and src.exists() and os.path.samefile(out, src):
            return True
    return out.resolve() == src.resolve() or (out.is_dir() and src.resolve().is_relative_to(out.resolve()))


def check_output(
    output: PathLike, inputs: Iterable[PathLike] = (), overwrite: bool = False, directory: bool | None = None
) -> Path:
    """Refuse an output that is (or contains) an input, or that exists without ``overwrite``; return it as a Path.

    ``directory``: whether the output is a folder (``None``: not checked); an existing path of the other kind is
    refused even with ``overwrite``.

    Raises:
        OutputIsInputError: ``output`` is one of ``inputs``, a file a folder input's loader reads, or holds one.
        OutputKindError: ``output`` is a folder and a file goes there, or the reverse.
        OutputExistsError: ``output`` exists and ``overwrite`` is false.
    """
    out = Path(output)
    for item in inputs:
        if item is None or "://" in str(item):
            continue
        for src in _input_files(Path(item)):
            if _is_input(out, src):
                named = src if src == Path(item) else f"{src} (a file of the input folder {item})"
                raise OutputIsInputError(f"output {out} is the input {named}: writing it would destroy the input; "
                                         "choose another output path")
    if directory is not None and out.exists() and out.is_dir() != directory:
        found, written = ("folder", "file") if out.is_dir() else ("file", "folder")
        raise OutputKindError(f"output {out} is a {found} and this writes a {written}: --overwrite (overwrite=True) "
                              f"replaces a {found} only with a {found}; choose another path")
    if (out.exists() or out.is_symlink()) and not overwrite:
        kind = "directory" if out.is_dir() else "file"
        raise OutputExistsError(f"output {kind} {out} already exists: pass --overwrite (overwrite=True) to replace "
                                "it, or choose another path")
    return out


def local_paths(*items: Any) -> list[str]:
    """The local files and folders among ``items`` (models a command loads), to pass as inputs to protect."""
    return [os.fspath(item) for item in items
            if isinstance(item, (str, os.PathLike)) and "://" not in str(item) and os.path.exists(item)]


# ------------------------------------------------------------------------------------------------------ locks
# Ours, not filelock.FileLock: FileLock keeps its lock file after release (by design), which would leave a
# ``.lock`` next to every output (in model folders that get uploaded); this lock removes it while still held and a
# waiter re-checks that it locked the file now at the path (the usual flock + unlink pattern, filelock's primitive).
LOCK_PREFIX = ".paranmt-lock-"
"""The lock file of output ``x`` is ``.paranmt-lock-x`` next to it (removed when the writer is done)."""
_thread = threading.local()  # .depth: the lock files this thread holds, how deep (nested writes share the lock)
_lock_fds: set[int] = set()  # every lock file held, closed in a forked child


def _drop_inherited_locks() -> None:
    """In a forked child (a pool's manager): close the inherited lock files, so it never outlives its parent's lock."""
    for fd in list(_lock_fds):
        with contextlib.suppress(OSError):
            os.close(fd)
    _lock_fds.clear()
    _thread.__dict__.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {info['pid']} on {info['host']} since {info['since']}: {info['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def _acquire(path: Path, output: Path, wait: float) -> int:
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # another user's lock file: locking needs read access only
            fd = os.open(path, os.O_RDONLY)
        if not lock_descriptor(fd, blocking=False):
            os.close(fd)
            if time.monotonic() >= deadline:
                raise OutputBusyError(f"{output} is being written by another process ({_holder(path)}): wait for it "
                                      "to finish, or choose another output")
            time.sleep(0.05)
            continue
        with contextlib.suppress(FileNotFoundError):  # the previous holder unlinked it: lock the file there now
            if os.path.samestat(os.stat(path), os.fstat(fd)):
                info = {"pid": os.getpid(), "host": socket.gethostname(), "command": " ".join(sys.argv)[:300],
                        "since": _dt.datetime.now().replace(microsecond=0).isoformat()}
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
                return fd
        os.close(fd)


@contextlib.contextmanager
def output_lock(output: PathLike, wait: float = 0.0) -> Iterator[Path]:
    """Hold the lock of ``output`` (its folder is created if needed); yields the lock file's path.

    The kernel releases the lock of a killed process, so a dead run never leaves a stale lock. The same thread may
    take the lock of one output again (nested writes).

    Args:
        output: the file or folder to be written.
        wait: seconds to wait for another writer to finish (0: refuse at once).

    Raises:
        OutputBusyError: another process (or thread) holds the lock; the message names it.
    """
    target = Path(output)
    target.parent.mkdir(parents=True, exist_ok=True)
    path = target.parent.resolve() / f"{LOCK_PREFIX}{target.name}"
    depth = _thread.__dict__.setdefault("depth", {})
    if path in depth:
        depth[path] += 1
        try:
            yield path
        finally:
            depth[path] -= 1
        return
    fd = _acquire(path, target, wait)
    depth[path] = 1
    _lock_fds.add(fd)
    try:
        yield path
    finally:
        depth.pop(path, None)
        _lock_fds.discard(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still locked: a waiter then finds another file at the path and retries
        os.close(fd)


# ------------------------------------------------------------------------------------------- temporary paths
def temp_sibling(path: PathLike, directory: bool = False) -> Path:
    """A fresh temporary path next to ``path`` keeping its suffixes (``.paranmt-tmp-<12 hex>-x.tsv.gz``).

    With ``directory``, the folder is created.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f"{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-{target.name}"
    if directory:
        tmp.mkdir()
    return tmp


def attempt_temp(path: PathLike) -> Path:
    """A temporary name next to ``path`` that no other process or attempt uses: ``.<name>.<pid>-<12 hex>.tmp``.

    A task run again while an orphan of a killed run still writes never writes into the orphan's file.
    """
    target = Path(path)
    return target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp")


def replace_with_text(path: PathLike, text: str) -> Path:
    """Replace ``path`` by ``text`` (UTF-8): a temporary file in its folder, then ``os.replace``.

    No lock: two writers each write their own temporary and the last rename wins (``path`` holds one writer's text).
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        _usual_permissions(Path(tmp))  # mkstemp's files are private
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _stale_temp_pattern(name: str) -> re.Pattern[str]:
    """Temporary names of output ``name``: ``.paranmt-tmp-[old-]<12 hex>-name`` (and ``name-<8>``, mkdtemp's)."""
    escaped, prefix = re.escape(name), re.escape(TEMP_PREFIX)
    return re.compile(rf"^{prefix}(?:(old-)?[0-9a-f]{{12}}-{escaped}|{escaped}-[a-z0-9_]{{8}})$")


def _set_aside_copies(target: Path) -> list[Path]:
    """Copies of folder ``target`` that :func:`replace_path` set aside (``.paranmt-tmp-old-…``), by name."""
    if not target.parent.is_dir():
        return []
    pattern = _stale_temp_pattern(target.name)
    return sorted(p for p in target.parent.iterdir() if (m := pattern.match(p.name)) is not None and m.group(1))


def remove_stale_temps(output: PathLike) -> list[Path]:
    """Remove the temporaries that killed writers of ``output`` left next to it; returns what was removed.

    Call it holding the output's lock. A folder set aside by a killed swap is put back when ``output`` is missing.
    """
    target = Path(output)
    if not target.parent.is_dir():
        return []
    if not (target.exists() or target.is_symlink()) and (aside := _set_aside_copies(target)):
        os.replace(aside[0], target)
        logger.warning("%s: put back the previous copy, which a killed run had set aside as %s", target, aside[0])
    pattern = _stale_temp_pattern(target.name)
    removed = sorted(p for p in target.parent.iterdir() if pattern.match(p.name))
    for entry in removed:
        _remove(entry)
    return removed


def remove_temps_in(folder: PathLike) -> list[Path]:
    """Remove every temporary entry directly inside ``folder`` (one that a run owns, holding its lock)."""
    base = Path(folder)
    found = [entry for entry in base.iterdir() if entry.name.startswith(TEMP_PREFIX)] if base.is_dir() else []
    for entry in found:
        _remove(entry)
    return found


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------------- permissions
def _umask() -> int:
    """The umask, read from ``/proc`` where possible (setting it to read it is not thread-safe)."""
    with contextlib.suppress(OSError, ValueError, StopIteration), open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1], 8) for line in f if line.startswith("Umask:"))
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _usual_permissions(path: Path) -> None:
    """Give ``path`` and all below it the modes ``open`` / ``mkdir`` give under the umask.

    Some writers make private files (safetensors ``0600``, mkstemp); outputs are readable where the umask allows.
    """
    mask = _umask()
    for entry in [path, *path.rglob("*")] if path.is_dir() and not path.is_symlink() else [path]:
        with contextlib.suppress(OSError):
            info = entry.lstat()
            if stat.S_ISDIR(info.st_mode):
                mode = (0o777 & ~mask) | (info.st_mode & stat.S_ISGID)
            elif stat.S_ISLNK(info.st_mode):
                continue
            else:
                mode = (0o777 if info.st_mode & 0o111 else 0o666) & ~mask
            if stat.S_IMODE(info.st_mode) != mode:
                os.chmod(entry, mode)


def _keep_permissions(new: Path, old: Path) -> None:
    """Give ``new`` the permission bits and group of ``old`` (the output it replaces), where allowed."""
    with contextlib.suppress(OSError):
        before = os.stat(old)
        if os.stat(new).st_gid != before.st_gid:
            with contextlib.suppress(OSError):
                os.chown(new, -1, before.st_gid)
        os.chmod(new, stat.S_IMODE(before.st_mode))


# ------------------------------------------------------------------------------------------------ the final rename
_renameat2: Any = None  # libc's renameat2 once looked up; False: not available


def _exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``: ``os`` has no binding).

    A folder cannot be renamed over a non-empty one; the swap means a reader never finds the folder missing (a CI
    race did). Returns False, having changed nothing, where the system or the filesystem cannot swap.

    Raises:
        OSError: the swap was possible in principle but failed (e.g. a path vanished, no permission).
    """
    global _renameat2
    import ctypes

    if _renameat2 is None:
        _renameat2 = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
                _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if _renameat2 is False:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if _renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(first), None, os.fspath(second))


def replace_path(source: Path, target: Path, overwrite: bool = True) -> None:
    """Move the finished ``source`` onto ``target``: a file in one rename, a folder in one swap (:func:`_exchange`).

    Where a folder cannot be swapped, the old one is renamed aside first and deleted only once the new one is in
    place (a failed second rename puts it back; a run killed between the two leaves it aside, put back by the next
    writer or reader: :func:`recover_set_aside`). The new output gets the usual permissions, or those of the output
    it replaces.

    Raises:
        OutputExistsError: ``overwrite`` is false and ``target`` appeared meanwhile (nothing is replaced).
    """
    appeared = OutputExistsError(f"{target} appeared while this run was writing it (another process?): it was not "
                                 "replaced; pass --overwrite to replace it, or choose another path")
    exists = target.exists() or target.is_symlink()
    _usual_permissions(source)
    if exists and not overwrite:
        raise appeared
    if exists:
        _keep_permissions(source, target)
    if not overwrite and not source.is_dir():
        try:  # a hard link never replaces a file that appeared after the check above
            os.link(source, target)
        except FileExistsError:
            raise appeared from None
        except OSError:  # a filesystem without hard links
            os.replace(source, target)
        else:
            source.unlink()
    elif target.is_dir() and not target.is_symlink():
        if source.is_dir() and _exchange(source, target):  # the new folder in place, the old one at ``source``
            _remove(source)
            return
        aside = target.parent / f"{TEMP_PREFIX}old-{uuid.uuid4().hex[:12]}-{target.name}"
        os.replace(target, aside)
        try:
            os.replace(source, target)
        except BaseException:
            os.replace(aside, target)
            raise
        _remove(aside)
    else:
        os.replace(source, target)


def recover_set_aside(output: PathLike) -> bool:
    """For readers: put back folder ``output`` that a run killed mid-swap left set aside (:func:`replace_path`).

    Done only while holding the output's lock (a live writer between its two renames holds it and is left to
    finish). Returns whether ``output`` was put back.
    """
    target = Path(output)
    if target.exists() or target.is_symlink() or not _set_aside_copies(target):
        return False
    try:
        with output_lock(target):
            if target.exists() or target.is_symlink() or not (aside := _set_aside_copies(target)):
                return False
            os.replace(aside[0], target)
    except OSError:  # OutputBusyError (a live writer) or a folder this reader may not write
        return False
    logger.warning("%s: put back the previous copy, which a killed run had set aside as %s", target, aside[0])
    return True


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # a filesystem without hard links
        shutil.copy2(source, target)


def carry_over(old: Path, new: Path, keep: Callable[[str], bool]) -> list[str]:
    """Hard-link the entries of folder ``old`` that ``new`` lacks and ``keep(name)`` accepts into ``new``."""
    carried = []
    for entry in sorted(old.iterdir()) if old.is_dir() and not old.is_symlink() else []:
        destination = new / entry.name
        if entry.name.startswith((TEMP_PREFIX, LOCK_PREFIX)) or destination.exists() or destination.is_symlink():
            continue
        if keep(entry.name):
            if entry.is_symlink():
                os.symlink(os.readlink(entry), destination)
            elif entry.is_dir():
                shutil.copytree(entry, destination, symlinks=True, copy_function=_link_or_copy)
            else:
                _link_or_copy(entry, destination)
            carried.append(entry.name)
    return carried


@contextlib.contextmanager
def atomic_output(
    output: PathLike,
    inputs: Iterable[PathLike] = (),
    overwrite: bool = False,
    directory: bool = False,
    keep: Callable[[str], bool] | None = None,
    wait: float = 0.0,
) -> Iterator[Path]:
    """Yield a temporary path to write ``output`` to; rename it into place when the block succeeds.

    Holds the output's lock (:func:`output_lock`) for the whole block, runs :func:`check_output` and removes the
    temporaries of killed writers. If the block raises, the temporary is removed and ``output`` is untouched.

    Args:
        output: final file or directory.
        inputs: the run's inputs, which the output may never replace.
        overwrite: allow replacing an existing ``output`` (one that appears while the block runs is refused
            without it).
        directory: the output is a directory (the temporary path is created empty).
        keep: for a directory replacing another: entries of the old one that the new one lacks and ``keep(name)``
            accepts are carried over (hard links, before the swap), e.g. a training run's ``checkpoints/``.
        wait: seconds to wait for another process writing ``output`` (0: :class:`OutputBusyError` at once).
    """
    inputs = list(inputs)
    with output_lock(output, wait=wait):
        target = check_output(output, inputs, overwrite, directory=directory)
        remove_stale_temps(target)
        tmp = temp_sibling(target, directory=directory)
        try:
            yield tmp
            if not directory and not tmp.exists():
                raise FileNotFoundError(f"nothing was written to the temporary output for {target}")
            if directory and keep is not None:
                carry_over(target, tmp, keep)
            replace_path(tmp, target, overwrite=overwrite)
        except BaseException:
            _remove(tmp)
            raise


def atomic_write_text(path: PathLike, text: str, overwrite: bool = True, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (temporary file, fsync, rename); replaces an existing file by default.

    Two writers of the same file take turns (the second waits up to :data:`RECORD_WAIT` seconds): the last one wins.
    """
    with atomic_output(path, overwrite=overwrite, wait=RECORD_WAIT) as tmp:
        with open(tmp, "w", encoding=encoding, newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    return Path(path)


def atomic_write_json(path: PathLike, value: Any, overwrite: bool = True, **dump_kwargs: Any) -> Path:
    """Write ``value`` as JSON to ``path`` atomically (two writers never leave a torn file: the last one wins)."""
    dump_kwargs.setdefault("indent", 2)
    return atomic_write_text(path, json.dumps(value, **dump_kwargs) + "\n", overwrite=overwrite)

"""Outputs that are written atomically, one writer at a time, and never replace an input or a result without consent.

The rules every command keeps (README, "Reliability"):

- an output is written under a temporary name in its own folder and renamed into place only when complete, so a
  killed run leaves either the old file or the new one, never a partial file under the final name;
- one writer at a time: a writer holds a lock on its output (``fcntl.flock`` on a hidden ``.paranmt-lock-<name>``
  file next to it) from its existence check to its final rename; a second writer of the same output is refused
  (:class:`OutputBusyError`, naming the process that holds it) instead of both reporting success; and the final
  rename of a writer without ``overwrite`` refuses an output that appeared meanwhile (a writer that took no lock);
- an output never replaces one of the run's inputs (compared as files on disk: symlinks, ``./x`` vs ``x``,
  hard links; a model's files are inputs of the commands that load it), even with ``overwrite``;
- an existing output is replaced only with ``overwrite=True`` (the CLI's ``--overwrite``);
- outputs are created with the usual permissions (``0666`` / ``0777`` less the umask), and a replaced output keeps
  the permission bits and group of the one it replaces (a group-shared folder stays shared);
- temporary files of a killed writer are removed by the next writer of the same output (which holds the lock, so
  they cannot be another writer's).

```python
from paranmt_hf.utils.atomic import atomic_output, check_output

check_output("out.tsv.gz", inputs=["in.tsv.gz"], overwrite=False)   # fail early, before any work
with atomic_output("out.tsv.gz", inputs=["in.tsv.gz"]) as tmp:       # tmp keeps the suffix (.tsv.gz)
    write_pairs(rows, tmp)
```

A long job that writes several things into one place (a training run into its folder) holds
:func:`output_lock` on it for the whole run; nested writes of the same process into the same output are allowed.
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
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locks (the final rename still refuses a new output)
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

TEMP_PREFIX = ".paranmt-tmp-"
"""Temporary outputs start with this (hidden, in the output's own folder, so the final rename is atomic)."""
LOCK_PREFIX = ".paranmt-lock-"
"""The lock file of output ``x`` is ``.paranmt-lock-x`` next to it (removed when the writer is done)."""
RECORD_WAIT = 60.0
"""Seconds :func:`atomic_write_text` / :func:`atomic_write_json` wait for another writer of the same record."""


class OutputExistsError(FileExistsError):
    """The output already exists and ``overwrite`` was not given."""


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


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _contains(directory: Path, path: Path) -> bool:
    """Whether ``path`` lies inside ``directory`` (both resolved)."""
    try:
        path.resolve().relative_to(directory.resolve())
    except ValueError:
        return False
    return True


MODEL_FOLDER_TOP_SUFFIXES = (".json", ".spm", ".txt", ".model", ".safetensors", ".bin", ".pt", ".onnx", ".msgpack",
                             ".tiktoken", ".vocab")
"""Files at the top of a folder input that a loader may read (configurations, tokenizers, weights of any model:
a translation model's ``source.spm``, ``vocab.json``, ``generation_config.json`` included)."""


def _input_files(src: Path) -> Iterator[Path]:
    """``src`` and, for a folder (a model a command loads), the files a loader reads from it.

    Those are :func:`~paranmt_hf.utils.content_hash.model_files` (weights, configuration, tokenizer, ``static/`` and
    the sentence-transformers module folders) and every top-level file with a suffix of
    :data:`MODEL_FOLDER_TOP_SUFFIXES`; results written next to a model (``embeddings.npy``, an ``export`` subfolder,
    evaluation results) are not among them and stay replaceable with ``--overwrite``.
    """
    from .content_hash import model_files

    yield src
    if src.is_dir():
        yield from model_files(src)
        yield from (p for p in src.iterdir() if p.is_file() and p.suffix in MODEL_FOLDER_TOP_SUFFIXES)


def check_output(output: PathLike, inputs: Iterable[PathLike] = (), overwrite: bool = False) -> Path:
    """Refuse an output that is an input, or that exists without ``overwrite``; return it as a ``Path``.

    An output directory that contains an input counts as the input too (replacing the directory would delete it).
    An input that is a folder (a model folder a command loads) protects the files a loader reads from it
    (:func:`_input_files`): no output may be one of them (compared as files on disk), the folder itself, or a folder
    that contains it.

    Raises:
        OutputIsInputError: ``output`` is (or contains) one of ``inputs``.
        OutputExistsError: ``output`` exists and ``overwrite`` is false.
    """
    out = Path(output)
    for item in inputs:
        if item is None or "://" in str(item):
            continue
        for src in _input_files(Path(item)):
            if _same_file(out, src) or out.resolve() == src.resolve() or (out.is_dir() and _contains(out, src)):
                named = src if src == Path(item) else f"{src} (a file of the input folder {item})"
                raise OutputIsInputError(f"output {out} is the input {named}: writing it would destroy the input; "
                                         "choose another output path")
    if out.exists() or out.is_symlink():
        if not overwrite:
            kind = "directory" if out.is_dir() else "file"
            raise OutputExistsError(f"output {kind} {out} already exists: pass --overwrite (overwrite=True) to "
                                    "replace it, or choose another path")
    return out


def local_paths(*items: Any) -> list[str]:
    """The local files and folders among ``items`` (models a command loads), to pass as inputs to protect.

    Hub ids, None and objects (a model already loaded) are left out.
    """
    return [os.fspath(item) for item in items
            if isinstance(item, (str, os.PathLike)) and "://" not in str(item) and os.path.exists(item)]


# ------------------------------------------------------------------------------------------------------ locks
_held: dict[tuple[str, int], int] = {}
_held_guard = threading.Lock()
_lock_fds: set[int] = set()


def _drop_inherited_locks() -> None:
    """In a forked child: close the lock files inherited from the parent.

    A lock belongs to the process that took it: a child that outlives it (a pool's manager) must not keep it.
    """
    for fd in list(_lock_fds):
        with contextlib.suppress(OSError):
            os.close(fd)
    _lock_fds.clear()
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_inherited_locks)


def lock_path(output: PathLike) -> Path:
    """The lock file of ``output``: ``.paranmt-lock-<name>`` in its (resolved) folder."""
    target = Path(output)
    return target.parent.resolve() / f"{LOCK_PREFIX}{target.name}"


def _holder(path: Path) -> str:
    """Who holds a lock, as its lock file says (pid, host, since, command)."""
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
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise OutputBusyError(f"{output} is being written by another process ({_holder(path)}): wait for it "
                                      "to finish, or choose another output") from None
            time.sleep(0.05)
            continue
        try:  # the previous holder removes the file when done: lock the file that is at the path now
            current = os.stat(path)
        except FileNotFoundError:
            os.close(fd)
            continue
        if current.st_ino != os.fstat(fd).st_ino or current.st_dev != os.fstat(fd).st_dev:
            os.close(fd)
            continue
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": " ".join(sys.argv)[:300],
                "since": _dt.datetime.now().replace(microsecond=0).isoformat()}
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
        return fd


@contextlib.contextmanager
def output_lock(output: PathLike, wait: float = 0.0) -> Iterator[Path]:
    """Hold the lock of ``output`` (another process writing it is refused); yields the lock file's path.

    The lock is ``fcntl.flock`` on ``.paranmt-lock-<name>`` next to ``output`` (works across processes and, on
    filesystems that support it, machines); the kernel releases it when the process dies, so a killed run never
    leaves a stale lock. The same thread may take the lock of one output again (nested writes).

    Args:
        output: the file or folder to be written (its folder is created if needed).
        wait: seconds to wait for another writer to finish (0: refuse at once).

    Raises:
        OutputBusyError: another process holds the lock (the message names it).
    """
    target = Path(output)
    target.parent.mkdir(parents=True, exist_ok=True)
    path = lock_path(target)
    key = (str(path), threading.get_ident())
    with _held_guard:
        nested = key in _held
        if nested:
            _held[key] += 1
    if nested or fcntl is None:
        try:
            yield path
        finally:
            with _held_guard:
                if nested:
                    _held[key] -= 1
        return
    fd = _acquire(path, target, wait)
    with _held_guard:
        _held[key] = 1
        _lock_fds.add(fd)
    try:
        yield path
    finally:
        with _held_guard:
            _held.pop(key, None)
            _lock_fds.discard(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still locked: a waiting process then sees another inode and retries
        os.close(fd)


# ------------------------------------------------------------------------------------------- temporary paths
def temp_sibling(path: PathLike, directory: bool = False) -> Path:
    """A fresh temporary path next to ``path`` keeping its suffixes (``x.tsv.gz`` -> ``.paranmt-tmp-…-x.tsv.gz``).

    With ``directory``, the folder is created (mode ``0777`` less the umask, like ``mkdir``).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f"{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-{target.name}"
    if directory:
        tmp.mkdir(mode=0o777)
    return tmp


ATTEMPT_TEMP_SUFFIX = ".tmp"
"""Per-attempt temporary names (:func:`attempt_temp`) end with this."""


def attempt_temp(path: PathLike) -> Path:
    """A temporary name next to ``path`` that no other process or attempt uses: ``.<name>.<pid>-<12 hex>.tmp``.

    For the files a task of a run writes and renames into place (parts, records, caches): a second writer of the
    same file (a task run again while an orphan of a killed run still writes) never writes into this one's file.
    """
    target = Path(path)
    return target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:12]}{ATTEMPT_TEMP_SUFFIX}")


def replace_with_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` under a per-attempt temporary name (:func:`attempt_temp`), then rename it.

    No lock is taken: two writers each write their own file and the last rename wins, so ``path`` always holds one
    writer's whole bytes. For small records of a run's work folder.
    """
    target = Path(path)
    tmp = attempt_temp(target)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return target


def replace_with_text(path: PathLike, text: str) -> Path:
    """:func:`replace_with_bytes` of UTF-8 text."""
    return replace_with_bytes(path, text.encode("utf-8"))


def _stale_temp_pattern(name: str) -> re.Pattern[str]:
    """Temporary names of output ``name``: ``.paranmt-tmp-[old-]<12 hex>-name`` (and ``name-<8>`` of mkdtemp)."""
    escaped = re.escape(name)
    prefix = re.escape(TEMP_PREFIX)
    return re.compile(rf"^{prefix}(?:(old-)?[0-9a-f]{{12}}-{escaped}|{escaped}-[a-z0-9_]{{8}})$")


def remove_stale_temps(output: PathLike) -> list[Path]:
    """Remove the temporary copies of ``output`` that killed writers left next to it; returns what was removed.

    Call it only while holding :func:`output_lock` of ``output`` (then no live writer owns them). A folder that a
    killed run had set aside while replacing it (``.paranmt-tmp-old-…``) is put back when ``output`` is missing.
    """
    target = Path(output)
    if not target.parent.is_dir():
        return []
    pattern = _stale_temp_pattern(target.name)
    removed = []
    for entry in sorted(target.parent.iterdir(), key=lambda p: p.name):
        match = pattern.match(entry.name)
        if not match:
            continue
        if match.group(1) and not (target.exists() or target.is_symlink()):
            os.replace(entry, target)
            logger.warning("%s: put back the previous copy, which a killed run had set aside as %s", target, entry)
            continue
        _remove(entry)
        removed.append(entry)
    if removed:
        logger.info("removed %d temporary file(s) of %s left by a killed run", len(removed), target)
    return removed


def remove_temps_in(folder: PathLike) -> list[Path]:
    """Remove every temporary entry (``.paranmt-tmp-*``) directly inside ``folder``.

    For a folder that one run owns while it holds :func:`output_lock` on it (a training run's output folder).
    """
    base = Path(folder)
    if not base.is_dir():
        return []
    found = [entry for entry in base.iterdir() if entry.name.startswith(TEMP_PREFIX)]
    for entry in found:
        _remove(entry)
    return found


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def current_umask() -> int:
    """The process's umask (read from ``/proc`` where possible: setting it to read it is not thread-safe)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def usual_permissions(path: Path) -> None:
    """Give ``path`` (and everything below a folder) the modes ``open`` / ``mkdir`` give under the umask.

    Some writers create private files whatever the umask (safetensors writes ``0600``); outputs are meant to be read
    by the group and others where the umask allows it, like any file the user creates.
    """
    mask = current_umask()
    entries = [path, *path.rglob("*")] if path.is_dir() and not path.is_symlink() else [path]
    for entry in entries:
        with contextlib.suppress(OSError):
            info = entry.lstat()
            if stat.S_ISLNK(info.st_mode):
                continue
            if stat.S_ISDIR(info.st_mode):
                mode = (0o777 & ~mask) | (info.st_mode & stat.S_ISGID)
            else:
                mode = (0o777 if info.st_mode & 0o111 else 0o666) & ~mask
            if stat.S_IMODE(info.st_mode) != mode:
                os.chmod(entry, mode)


def keep_permissions(new: Path, old: Path) -> None:
    """Give ``new`` the permission bits and group of ``old`` (the output it replaces), where allowed."""
    try:
        before = os.stat(old)
    except OSError:
        return
    with contextlib.suppress(OSError):
        if os.stat(new).st_gid != before.st_gid:
            os.chown(new, -1, before.st_gid)
    with contextlib.suppress(OSError):
        os.chmod(new, stat.S_IMODE(before.st_mode))


_RENAME_EXCHANGE = 2  # renameat2(2) flag: swap the two paths atomically
_AT_FDCWD = -100
_renameat2: Any = None  # libc's renameat2 once looked up; False: not available


def _exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux ``renameat2`` with ``RENAME_EXCHANGE``).

    Returns False, having changed nothing, where the system or the filesystem cannot swap.

    Raises:
        OSError: the swap was possible in principle but failed (e.g. a path vanished, no permission).
    """
    global _renameat2
    if _renameat2 is None:
        _renameat2 = False
        if sys.platform.startswith("linux"):
            import ctypes

            with contextlib.suppress(OSError, AttributeError):
                function = ctypes.CDLL(None, use_errno=True).renameat2
                function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
                function.restype = ctypes.c_int
                _renameat2 = function
    if _renameat2 is False:
        return False
    import ctypes

    if _renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):  # this kernel or filesystem cannot
        return False
    raise OSError(code, os.strerror(code), os.fspath(first), None, os.fspath(second))


def replace_path(source: Path, target: Path, overwrite: bool = True) -> None:
    """Move the finished ``source`` onto ``target`` (a file: one atomic rename; a directory: one atomic swap).

    A directory cannot be renamed over a non-empty one. On Linux the new and the old directory trade places in one
    step (``renameat2`` with ``RENAME_EXCHANGE``), so a reader finds the old folder or the new one, never none, and
    the old one (now under the temporary name) is deleted afterwards; a process killed before that leaves it as a
    temporary that the next writer removes. Where the system or the filesystem cannot swap, an existing ``target``
    directory is first renamed aside and deleted only after the new one is in place: a failed second rename puts it
    back at once, and a process killed between the two renames leaves it under a temporary name, put back by the
    next writer (:func:`remove_stale_temps`) or reader (:func:`recover_set_aside`), never deleted and never a
    mixture of old and new files (a reader may find no folder for that moment). The new output gets the usual
    permissions (:func:`usual_permissions`); one that replaces another keeps its permission bits and group
    (:func:`keep_permissions`).

    Raises:
        OutputExistsError: ``overwrite`` is false and ``target`` appeared meanwhile (nothing is replaced).
    """
    exists = target.exists() or target.is_symlink()
    usual_permissions(source)
    if exists and not overwrite:
        raise OutputExistsError(f"{target} appeared while this run was writing it (another process?): it was not "
                                "replaced; pass --overwrite to replace it, or choose another path")
    if exists:
        keep_permissions(source, target)
    if not overwrite and not source.is_dir():
        try:  # a hard link never replaces a file that appeared after the check above
            os.link(source, target)
        except FileExistsError:
            raise OutputExistsError(f"{target} appeared while this run was writing it (another process?): it was "
                                    "not replaced; pass --overwrite to replace it, or choose another path") from None
        except OSError:  # a filesystem without hard links
            os.replace(source, target)
        else:
            source.unlink()
        return
    if target.is_dir() and not target.is_symlink():
        if source.is_dir() and _exchange(source, target):  # the new folder in place, the old one at ``source``
            _remove(source)
            return
        aside = target.parent / f"{TEMP_PREFIX}old-{uuid.uuid4().hex[:12]}-{target.name}"
        os.replace(target, aside)  # killed from here on: the next writer or reader puts it back
        try:
            os.replace(source, target)
        except BaseException:
            os.replace(aside, target)
            raise
        _remove(aside)  # only once the new folder is in place
    else:
        os.replace(source, target)


def _set_aside_copies(target: Path) -> list[Path]:
    """The copies of folder ``target`` that :func:`replace_path` set aside (``.paranmt-tmp-old-…-<name>``), by name."""
    if not target.parent.is_dir():
        return []
    pattern = _stale_temp_pattern(target.name)
    return sorted(entry for entry in target.parent.iterdir()
                  if (match := pattern.match(entry.name)) is not None and match.group(1))


def recover_set_aside(output: PathLike) -> bool:
    """For readers: put back folder ``output`` when a run replacing it died between the two renames of the swap.

    Such a run leaves ``output`` missing and its previous copy set aside next to it (:func:`replace_path`). The copy
    is renamed back only while holding the output's lock: a writer that is between its two renames right now holds
    it, and is left to finish. Returns whether ``output`` was put back (False: nothing set aside, a live writer,
    or no permission to rename).
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


def link_tree(source: Path, target: Path) -> None:
    """Recreate ``source`` (file, symlink or folder tree) at ``target`` with hard links (copies where links fail).

    Costs O(files), not O(bytes): carrying a large checkpoint folder over into a new directory is instant.
    """
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    elif source.is_dir():
        target.mkdir()
        for child in source.iterdir():
            link_tree(child, target / child.name)
    else:
        try:
            os.link(source, target)
        except OSError:  # a filesystem without hard links
            shutil.copy2(source, target)


def carry_over(old: Path, new: Path, keep: Callable[[str], bool]) -> list[str]:
    """Hard-link the entries of folder ``old`` that ``new`` lacks and ``keep(name)`` accepts into ``new``."""
    carried = []
    if not (old.is_dir() and not old.is_symlink()):
        return carried
    for entry in sorted(old.iterdir()):
        destination = new / entry.name
        if entry.name.startswith((TEMP_PREFIX, LOCK_PREFIX)) or destination.exists() or destination.is_symlink():
            continue
        if keep(entry.name):
            link_tree(entry, destination)
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

    The lock of ``output`` (:func:`output_lock`) is held for the whole block; then the checks of
    :func:`check_output` run and temporary copies left by killed writers are removed. If the block raises (or the
    process dies), the temporary output is removed (or left under its hidden temporary name, for the next writer to
    remove) and ``output`` is untouched.

    Args:
        output: final file or directory.
        inputs: the run's inputs, which the output may never replace.
        overwrite: allow replacing an existing ``output``. Without it, an output that appears while the block runs
            is not replaced either (:class:`OutputExistsError` at the rename).
        directory: the output is a directory (the temporary path is created empty).
        keep: for a directory replacing an existing one: entries of the old directory that the new one lacks and
            ``keep(name)`` accepts are carried over (hard links, before the swap, so a crash at any point leaves
            them in place), e.g. a training run's ``checkpoints/`` next to the model files being replaced.
        wait: seconds to wait for another process writing ``output`` (0: refuse at once, :class:`OutputBusyError`).
    """
    inputs = list(inputs)
    with output_lock(output, wait=wait):
        target = check_output(output, inputs, overwrite)
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
    """Write ``text`` to ``path`` atomically (temp file, fsync, rename). Replaces an existing file by default.

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

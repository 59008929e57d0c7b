"""Outputs that are written atomically and never replace an input or an existing result without consent.

The rule every command keeps (README, "Reliability"):

- an output is written under a temporary name in its own folder and renamed into place only when complete, so a
  killed run leaves either the old file or the new one, never a partial file under the final name;
- an output never replaces one of the run's inputs (compared as files on disk: symlinks, ``./x`` vs ``x``,
  hard links), even with ``overwrite``;
- an existing output is replaced only with ``overwrite=True`` (the CLI's ``--overwrite``).

```python
from paranmt_hf.utils.atomic import atomic_output, check_output

check_output("out.tsv.gz", inputs=["in.tsv.gz"], overwrite=False)   # fail early, before any work
with atomic_output("out.tsv.gz", inputs=["in.tsv.gz"]) as tmp:       # tmp keeps the suffix (.tsv.gz)
    write_pairs(rows, tmp)
```
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

PathLike = str | os.PathLike[str]

TEMP_PREFIX = ".paranmt-tmp-"
"""Temporary outputs start with this (hidden, in the output's own folder, so the final rename is atomic)."""


class OutputExistsError(FileExistsError):
    """The output already exists and ``overwrite`` was not given."""


class OutputIsInputError(ValueError):
    """The output is one of the inputs (writing it would destroy the input)."""


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


def check_output(output: PathLike, inputs: Iterable[PathLike] = (), overwrite: bool = False) -> Path:
    """Refuse an output that is an input, or that exists without ``overwrite``; return it as a ``Path``.

    An output directory that contains an input counts as the input too (replacing the directory would delete it).

    Raises:
        OutputIsInputError: ``output`` is (or contains) one of ``inputs``.
        OutputExistsError: ``output`` exists and ``overwrite`` is false.
    """
    out = Path(output)
    for item in inputs:
        if item is None or "://" in str(item):
            continue
        src = Path(item)
        if _same_file(out, src) or out.resolve() == src.resolve() or (out.is_dir() and _contains(out, src)):
            raise OutputIsInputError(f"output {out} is the input {src}: writing it would destroy the input; "
                                     "choose another output path")
    if out.exists() or out.is_symlink():
        if not overwrite:
            kind = "directory" if out.is_dir() else "file"
            raise OutputExistsError(f"output {kind} {out} already exists: pass --overwrite (overwrite=True) to "
                                    "replace it, or choose another path")
    return out


def temp_sibling(path: PathLike, directory: bool = False) -> Path:
    """A fresh temporary path next to ``path`` keeping its suffixes (``x.tsv.gz`` -> ``.paranmt-tmp-…-x.tsv.gz``)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if directory:
        return Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{target.name}-", dir=target.parent))
    return target.parent / f"{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-{target.name}"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def replace_path(source: Path, target: Path) -> None:
    """Move the finished ``source`` onto ``target`` (a file: one atomic rename; a directory: two renames).

    A directory cannot be renamed over a non-empty one, so an existing ``target`` directory is first renamed aside
    and deleted after the new one is in place: a crash in between leaves the old directory under a temporary name,
    never a mixture of old and new files.
    """
    if target.is_dir() and not target.is_symlink():
        aside = target.parent / f"{TEMP_PREFIX}old-{uuid.uuid4().hex[:12]}-{target.name}"
        os.replace(target, aside)
        os.replace(source, target)
        _remove(aside)
    else:
        os.replace(source, target)


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
        if entry.name.startswith(TEMP_PREFIX) or destination.exists() or destination.is_symlink():
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
) -> Iterator[Path]:
    """Yield a temporary path to write ``output`` to; rename it into place when the block succeeds.

    The checks of :func:`check_output` run first. If the block raises (or the process dies), the temporary output
    is removed (or left under its hidden temporary name) and ``output`` is untouched.

    Args:
        output: final file or directory.
        inputs: the run's inputs, which the output may never replace.
        overwrite: allow replacing an existing ``output``.
        directory: the output is a directory (the temporary path is created empty).
        keep: for a directory replacing an existing one: entries of the old directory that the new one lacks and
            ``keep(name)`` accepts are carried over (hard links, before the swap, so a crash at any point leaves
            them in place), e.g. a training run's ``checkpoints/`` next to the model files being replaced.
    """
    target = check_output(output, inputs, overwrite)
    tmp = temp_sibling(target, directory=directory)
    try:
        yield tmp
        if not directory and not tmp.exists():
            raise FileNotFoundError(f"nothing was written to the temporary output for {target}")
        if directory and keep is not None:
            carry_over(target, tmp, keep)
        replace_path(tmp, target)
    except BaseException:
        _remove(tmp)
        raise


def atomic_write_text(path: PathLike, text: str, overwrite: bool = True, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (temp file, fsync, rename). Replaces an existing file by default."""
    with atomic_output(path, overwrite=overwrite) as tmp:
        with open(tmp, "w", encoding=encoding, newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    return Path(path)


def atomic_write_json(path: PathLike, value: Any, overwrite: bool = True, **dump_kwargs: Any) -> Path:
    """Write ``value`` as JSON to ``path`` atomically (two writers never leave a torn file: the last one wins)."""
    dump_kwargs.setdefault("indent", 2)
    return atomic_write_text(path, json.dumps(value, **dump_kwargs) + "\n", overwrite=overwrite)

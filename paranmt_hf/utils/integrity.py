"""Find the damaged file of a model or checkpoint folder, so that a failed load can name it in one sentence.

:func:`find_damaged_file` checks, without loading anything: JSON files parse; safetensors files have a readable
header whose tensors cover the file exactly (a truncated copy is caught); torch's zip files (``*.pt``, ``*.pth``,
``*.bin``) pass their CRC check. It is called when a load fails (or before resuming from a checkpoint), never on
the fast path of a load that works.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path

from .content_hash import NOT_MODEL_FOLDERS

TORCH_SUFFIXES = (".pt", ".pth", ".bin")


class DamagedFileError(ValueError):
    """A model or checkpoint file cannot be read (truncated, overwritten, not what its name says)."""


def safetensors_problem(path: Path) -> str | None:
    """Why a safetensors file is damaged (None when its header is readable and covers the file)."""
    size = path.stat().st_size
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                return f"{size} bytes: too short for a safetensors header"
            (length,) = struct.unpack("<Q", head)
            if length > size - 8:
                return f"its header claims {length} bytes, the file has {size}"
            header = json.loads(handle.read(length))
    except (ValueError, UnicodeDecodeError) as err:
        return f"unreadable safetensors header ({err})"
    ends = [entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__"]
    expected = 8 + length + max(ends, default=0)
    if expected != size:
        return f"the tensors need {expected} bytes, the file has {size} (truncated or padded)"
    return None


def torch_file_problem(path: Path) -> str | None:
    """Why a ``torch.save`` file is damaged: a zip that is truncated or fails its CRC check, or no torch file."""
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic == b"PK\x03\x04":
        if not zipfile.is_zipfile(path):
            return "a truncated zip archive (no central directory)"
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
        return None if bad is None else f"member {bad} fails its CRC check"
    if not magic.startswith(b"\x80"):  # neither torch's zip format nor its legacy pickle format
        return "empty file" if not magic else "not a torch file"
    return None


def file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is damaged, by its kind (JSON, safetensors, torch zip); None when it looks whole."""
    p = Path(path)
    try:
        if p.suffix == ".json":
            json.loads(p.read_text(encoding="utf-8"))
        elif p.suffix == ".safetensors":
            return safetensors_problem(p)
        elif p.suffix in TORCH_SUFFIXES:
            return torch_file_problem(p)
    except (ValueError, UnicodeDecodeError) as err:
        return f"not valid {'JSON' if p.suffix == '.json' else 'data'} ({err})"
    except (zipfile.BadZipFile, EOFError, OSError) as err:
        return f"cannot be read ({err})"
    return None



def find_damaged_file(directory: str | os.PathLike[str], recursive: bool = True) -> tuple[Path, str] | None:
    """The first damaged file of a folder and why, or None (hidden entries and :data:`NOT_MODEL_FOLDERS` skipped)."""
    base = Path(directory)
    if not base.is_dir():
        return None
    entries = sorted(p for p in base.iterdir() if not p.name.startswith("."))
    for path in (p for p in entries if p.is_file()):
        problem = file_problem(path)
        if problem is not None:
            return path, problem
    if recursive:
        for path in (p for p in entries if p.is_dir() and p.name not in NOT_MODEL_FOLDERS):
            found = find_damaged_file(path)
            if found is not None:
                return found
    return None


def damaged_file_error(directory: str | os.PathLike[str], cause: BaseException) -> DamagedFileError | None:
    """A one-sentence :class:`DamagedFileError` naming the damaged file of ``directory`` (None if none is)."""
    found = find_damaged_file(directory)
    if found is None:
        return None
    path, problem = found
    detail = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    return DamagedFileError(f"{path} is damaged: {problem}. Save, copy or download that model again (loading "
                            f"failed with: {detail})")


def check_model_path(name_or_path: str | os.PathLike[str]) -> None:
    """Raise ``FileNotFoundError`` for a local model path that does not exist (instead of asking the Hub for it).

    A folder that a run replacing it left set aside when it was killed between its two renames is put back first
    (:func:`paranmt_hf.utils.atomic.recover_set_aside`).

    Raises:
        FileNotFoundError: ``name_or_path`` looks local (:func:`looks_local`) and is not a folder.
    """
    from .atomic import recover_set_aside
    from .paths import looks_local

    if looks_local(name_or_path) and not Path(name_or_path).expanduser().is_dir() \
            and not recover_set_aside(Path(name_or_path).expanduser()):
        raise FileNotFoundError(f"model directory {name_or_path} not found (a local path: the Hub was not asked)")

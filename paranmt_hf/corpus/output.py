"""Outputs of the corpus tools: atomic files fed block by block, shard names, shard manifests and their merge.

A tool writes its output under a temporary name (:func:`paranmt_hf.utils.atomic.atomic_output`) and renames it
into place when the run completes, so a killed run leaves nothing under the final name. Gzip outputs (``.gz``)
are written as one gzip member per block, compressed in the worker processes (concatenated members are one valid
gzip file).

A sharded run (``--num-shards N --shard-index i``, or ``torchrun``'s ``RANK``/``WORLD_SIZE``) writes
``<stem>-0000i-of-0000N<suffixes>`` next to the requested output, plus ``<that name>.json``: the shard's manifest
(command, options, inputs, counts). :func:`merge_shards` checks that the N manifests describe the same run and
joins the shards into the requested output.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ..data.reader import Shard
from ..utils.atomic import atomic_output, atomic_write_json, check_output

MANIFEST_SUFFIX = ".json"


def is_gzip_name(path: str | os.PathLike[str]) -> bool:
    """Whether an output is gzip'd (its name ends with ``.gz``)."""
    return os.fspath(path).endswith(".gz")


def compress_block(data: bytes) -> bytes:
    """One gzip member (level 6, no timestamp, so equal input gives equal bytes)."""
    return gzip.compress(data, compresslevel=6, mtime=0) if data else b""


def shard_from_args(num_shards: int | None, shard_index: int | None) -> Shard:
    """The shard to process: ``--num-shards/--shard-index``, else torchrun's ``RANK``/``WORLD_SIZE``, else all."""
    if num_shards is not None or shard_index is not None:
        if num_shards is None or shard_index is None:
            raise ValueError("give both --num-shards and --shard-index")
        return Shard(shard_index, num_shards)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        return Shard(int(os.environ.get("RANK", "0")), world)
    return Shard()


def shard_path(output: str | os.PathLike[str], shard: Shard) -> Path:
    """``corpus.tsv.gz`` -> ``corpus-00002-of-00004.tsv.gz`` for shard 1 of 4 (the output itself when unsharded)."""
    path = Path(output)
    if shard.whole:
        return path
    name = path.name
    stem, dot, suffixes = name.partition(".") if not name.startswith(".") else (name, "", "")
    return path.with_name(f"{stem}{shard.suffix()}{dot}{suffixes}")


def manifest_path(output: str | os.PathLike[str]) -> Path:
    """The manifest next to a shard output."""
    path = Path(output)
    return path.with_name(path.name + MANIFEST_SUFFIX)


def git_commit() -> str | None:
    """The commit of the paranmt_hf source tree (None outside a git checkout)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                             text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def input_signature(paths: Sequence[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """Resolved path, size and modification time of each input (what a merge compares)."""
    out = []
    for path in paths:
        stat = os.stat(path)
        out.append({"path": os.path.realpath(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
    return out


def write_manifest(output: Path, command: str, options: dict[str, Any], inputs: Sequence[str | os.PathLike[str]],
                   shard: Shard, summary: dict[str, Any]) -> Path:
    """Write a shard's manifest next to its output."""
    value = {"command": command, "options": options, "inputs": input_signature(inputs),
             "shard": {"index": shard.index, "count": shard.count}, "output": output.name, "summary": summary,
             "git_commit": git_commit()}
    return atomic_write_json(manifest_path(output), value, overwrite=True)


@contextmanager
def block_output(output: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]],
                 overwrite: bool) -> Iterator[IO[bytes]]:
    """A binary handle to write an output's blocks to; the file appears under its name only when the block ends."""
    with atomic_output(output, inputs=inputs, overwrite=overwrite) as tmp, open(tmp, "wb") as handle:
        yield handle
        if is_gzip_name(output) and handle.tell() == 0:
            handle.write(gzip.compress(b"", mtime=0))  # an empty but valid gzip file


def find_shards(output: str | os.PathLike[str]) -> list[tuple[Path, dict[str, Any]]]:
    """The shard outputs of ``output`` and their manifests, in shard order; checks they make one complete run."""
    target = Path(output)
    stem, dot, suffixes = target.name.partition(".")
    found = sorted(target.parent.glob(f"{stem}-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]{dot}{suffixes}"
                                      f"{MANIFEST_SUFFIX}"))
    if not found:
        raise FileNotFoundError(f"no shard manifest {stem}-NNNNN-of-NNNNN{dot}{suffixes}{MANIFEST_SUFFIX} next to "
                                f"{target}: run the command with --num-shards/--shard-index first")
    manifests = [(p, json.loads(p.read_text(encoding="utf-8"))) for p in found]
    count = manifests[0][1]["shard"]["count"]
    first = manifests[0][1]
    for path, manifest in manifests:
        for key in ("command", "options", "inputs"):
            if manifest[key] != first[key]:
                raise ValueError(f"{path} records another run than {found[0]} ({key} differ): merge shards of one "
                                 "run only")
        if manifest["shard"]["count"] != count:
            raise ValueError(f"{path} is a shard of {manifest['shard']['count']}, not {count}")
    indices = sorted(m["shard"]["index"] for _, m in manifests)
    if indices != list(range(count)):
        missing = sorted(set(range(count)) - set(indices))
        raise FileNotFoundError(f"shards {[i + 1 for i in missing]} of {count} of {target} are missing")
    out = []
    for path, manifest in sorted(manifests, key=lambda pm: pm[1]["shard"]["index"]):
        shard_output = path.with_name(manifest["output"])
        if not shard_output.exists():
            raise FileNotFoundError(f"{shard_output} (listed by {path}) is missing")
        out.append((shard_output, manifest))
    return out


def merge_shards(output: str | os.PathLike[str], overwrite: bool = False,
                 merge_folders: Callable[..., dict[str, Any]] | None = None) -> dict[str, Any]:
    """Join the shard files of ``output`` (in shard order) into ``output``; returns the summed counts.

    TSV outputs are concatenated byte for byte (gzip members concatenate into one gzip file), so the merged file
    equals the output of a one-machine run. Folder outputs (``corpus export``) are merged by ``merge_folders``
    (:func:`paranmt_hf.corpus.export.merge_exports`), called with ``(output, shards, overwrite)``.
    """
    shards = find_shards(output)
    check_output(output, inputs=[p for p, _ in shards], overwrite=overwrite)
    if shards[0][0].is_dir():
        if merge_folders is None:
            raise ValueError(f"the shards of {output} are folders: merge them with their command's merge function")
        return merge_folders(output, shards, overwrite)
    with atomic_output(output, inputs=[p for p, _ in shards], overwrite=overwrite) as tmp, open(tmp, "wb") as out:
        for path, _ in shards:
            with open(path, "rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 22)
    return sum_counts([m for _, m in shards])


def sum_counts(manifests: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Totals of the shards' summaries."""
    lines, counts, bad = 0, {}, {}
    for manifest in manifests:
        summary = manifest["summary"]
        lines += summary["lines"]
        for key, value in summary["counts"].items():
            counts[key] = counts.get(key, 0) + value
        for key, value in summary["bad_lines"]["by_reason"].items():
            bad[key] = bad.get(key, 0) + value
    return {"shards": len(manifests), "lines": lines, "counts": counts, "bad_lines": bad}

"""Provenance of a result: the command, git commit, software and machine load that produced it.

Every script under ``benchmarks/`` stores this next to its numbers, so that a reader knows which code made them and
whether they predate a later change::

    from paranmt_hf.utils.provenance import provenance

    record = {"provenance": provenance(), "numbers": ...}   # command = this process's command line

Shell scripts get the same record as JSON from ``python -m paranmt_hf.utils.provenance [--command "..."]``.
A script keeps its run under its own key of its folder's one JSON, the other keys untouched::

    update_record("benchmarks/speed/speed.json", "all_loaders", record)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

PACKAGES = ("paranmt_hf", "torch", "transformers", "sentence-transformers", "tokenizers", "numpy")
"""Distributions whose versions every record holds (more can be asked for with ``packages=``)."""

OUTPUT_PATTERNS = ("benchmarks/**/*.json", "benchmarks/**/*.md", "results/**/*.json", "results/**/*.jsonl",
                   "results/**/*.md", "results/**/*.png", "results/**/*.log")
"""Result outputs: files a run rewrites while it runs, so their changes do not make the code "dirty"."""

REPO_ROOT = Path(__file__).resolve().parents[2]


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def git_state(root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The checkout's commit and whether tracked code differs from it.

    Args:
        root: a folder inside the git checkout (default: the one holding this package).

    Returns:
        ``{"commit": sha or None, "dirty": bool or None, "dirty_files": [...]}``: ``dirty`` ignores result outputs
        (:data:`OUTPUT_PATTERNS`) but counts untracked files that git does not ignore (a new script); ``commit``
        is ``None`` outside a git checkout (an installed package); ``dirty_files`` lists at most 20 paths.
    """
    where = Path(root) if root is not None else REPO_ROOT
    commit = _git(["rev-parse", "HEAD"], where)
    if commit is None:
        return {"commit": None, "dirty": None, "dirty_files": []}
    excludes = [f":(exclude,glob){pattern}" for pattern in OUTPUT_PATTERNS]
    status = _git(["status", "--porcelain", "--untracked-files=normal", "--", ".", *excludes], where) or ""
    files = [line[3:] for line in status.splitlines() if line.strip()]
    return {"commit": commit.strip(), "dirty": bool(files), "dirty_files": files[:20]}


SOURCE_URL_VAR = "PARANMT_HF_SOURCE_URL"
"""Environment variable naming where this project's code is published (a git URL), for model cards and
``model_meta.json``."""


def source_url() -> str | None:
    """Where the code of this project is: what model cards install and ``model_meta.json`` names as training code.

    ``$PARANMT_HF_SOURCE_URL``, else the installed package's ``Project-URL: Source`` or ``Home-page`` metadata, else
    the ``origin`` remote of the git checkout holding this package (as an ``https://`` URL), else ``None`` (unknown:
    the package is not on PyPI and has no public address of its own yet).
    """
    if os.environ.get(SOURCE_URL_VAR):
        return os.environ[SOURCE_URL_VAR]
    try:
        from importlib.metadata import metadata

        meta = metadata("paranmt-hf")
        urls = [u.split(",", 1)[1].strip() for u in meta.get_all("Project-URL") or []
                if u.lower().startswith("source") and "," in u]
        if urls or meta.get("Home-page"):
            return (urls or [meta["Home-page"]])[0]
    except PackageNotFoundError:
        pass
    remote = (_git(["remote", "get-url", "origin"], REPO_ROOT) or "").strip()
    if remote.startswith("git@") and ":" in remote:  # git@github.com:org/repo.git -> https://github.com/org/repo.git
        host, _, path = remote[len("git@"):].partition(":")
        remote = f"https://{host}/{path}"
    return remote if remote.startswith(("https://", "http://")) else None


def package_versions(packages: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed versions (``None``: not installed), read from package metadata without importing anything."""
    out: dict[str, str | None] = {}
    for name in packages:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def cpu_name() -> str:
    """The CPU model (``/proc/cpuinfo``'s model name where there is one)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def command_line(argv: Sequence[str] | None = None) -> str:
    """``argv`` (default: this process's) as a shell command, the interpreter shown as ``python``."""
    args = list(sys.argv if argv is None else argv)
    if argv is None and args and args[0].endswith(".py"):
        args = ["python", *args]
    return shlex.join(args)


def provenance(
    command: str | Sequence[str] | None = None,
    packages: Iterable[str] = PACKAGES,
    root: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """What produced a result: command, git state, date, software, machine and its load.

    Args:
        command: the command that produced the result (a string, or an argv list quoted as a shell command);
            default: this process's command line.
        packages: distributions to record the versions of (default :data:`PACKAGES`).
        root: a folder inside the git checkout (default: the one holding paranmt_hf).
    """
    git = git_state(root)
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None and hasattr(torch, "get_num_threads") else None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count()
    return {
        "command": command if isinstance(command, str) else command_line(command),
        "cwd": os.getcwd(),
        "git_commit": git["commit"],
        "git_dirty": git["dirty"],
        "git_dirty_files": git["dirty_files"],
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "packages": package_versions(packages),
        "platform": platform.platform(),
        "cpu": cpu_name(),
        "cores": cores,
        "torch_threads": threads,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def update_record(path: str | os.PathLike[str], key: str, value: Any, indent: int = 1) -> dict[str, Any]:
    """Set ``key`` of the JSON object in ``path`` to ``value``, keeping its other keys; returns the object written.

    The read, the update and the atomic write (:func:`~paranmt_hf.utils.atomic.atomic_write_json`) happen under the
    file's lock (``.paranmt-lock-<name>``, waiting up to :data:`~paranmt_hf.utils.atomic.RECORD_WAIT` seconds for
    another writer), so two runs recording at the same time never lose one another's key. A missing file is created.

    Raises:
        SystemExit: ``path`` exists but holds no readable JSON object (the message names it, and it is left as it
            is): a benchmark stops with that one sentence instead of a traceback or overwriting the other records.
    """
    from .atomic import RECORD_WAIT, atomic_write_json, output_lock

    target = Path(path)
    with output_lock(target, wait=RECORD_WAIT):
        recorded: Any = {}
        if target.exists():
            try:
                recorded = json.loads(target.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:  # ValueError: JSONDecodeError and UnicodeDecodeError
                raise SystemExit(f"cannot record {key!r} in {target}: the file is not readable JSON ({err}); fix or "
                                 "remove it and run again (it was left unchanged)") from None
            if not isinstance(recorded, dict):
                raise SystemExit(f"cannot record {key!r} in {target}: the file holds a JSON "
                                 f"{type(recorded).__name__}, not an object of records; fix or remove it and run "
                                 "again (it was left unchanged)")
        recorded[key] = value
        atomic_write_json(target, recorded, indent=indent)
    return recorded


def describe(record: dict[str, Any]) -> str:
    """One markdown line for a README header: command, date, load, software (the commit stays in the JSON)."""
    dirty = " (from a checkout with uncommitted code changes)" if record.get("git_dirty") else ""
    versions = ", ".join(f"{k} {v}" for k, v in record.get("packages", {}).items() if v)
    load = " ".join(f"{x:.2f}" for x in record.get("load_average", []))
    return (f"Command: `{record.get('command')}`{dirty} · {record.get('date')} · "
            f"{record.get('cpu')}, {record.get('cores')} cores, load average {load} · {versions}.")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m paranmt_hf.utils.provenance``: print the record as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--command", default=None, help="the command to record (default: this one)")
    parser.add_argument("--packages", nargs="*", default=list(PACKAGES), help="distributions to record")
    args = parser.parse_args(argv)
    print(json.dumps(provenance(args.command, args.packages), indent=2))  # noqa: T201 - the command's output
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

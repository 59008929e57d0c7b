"""Every committed result under results/ says what produced it: command + git commit, or a README note naming it.

A result JSON passes when it holds, at any depth, a record with ``command`` and ``git_commit``
(``paranmt_hf.utils.provenance.provenance()`` or the older flat fields). An older result that cannot cheaply be
re-run passes when its folder's README names the file and the commit it came from. Lines of a ``.jsonl`` need a
provenance record each, or ``committed_in`` (runs recorded before provenance existed). mteb-layout files
(``mteb_results/``) are excluded: their folder's summary carries the provenance.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "results"
COMMIT = re.compile(r"\b[0-9a-f]{7,40}\b")
FULL_SHA = re.compile(r"[0-9a-f]{40}")
GIT_COMMIT = re.compile(r"[0-9a-f]{7,40}([+-].*)?")
"""A recorded ``git_commit``: a SHA, optionally marked dirty (``+dirty``, ``-dirty``, ``+uncommitted changes``)."""


def _command(value: dict) -> bool:
    return isinstance(value.get("command"), str) and bool(value["command"].strip())


def _git_commit(value: Any) -> bool:
    return isinstance(value, dict) and GIT_COMMIT.fullmatch(str(value.get("git_commit"))) is not None


def has_provenance(value: Any) -> bool:
    """Whether ``value`` holds a dict with a ``command`` and a ``git_commit`` SHA (or a full-SHA ``commit``), at
    any depth (``git_commit`` None, as outside a git checkout, does not count)."""
    if isinstance(value, dict):
        if _command(value) and (_git_commit(value) or FULL_SHA.fullmatch(str(value.get("commit", "")))):
            return True
        if _command(value) and any(_git_commit(v) for v in value.values()):
            return True  # {"command": ..., "environment": {"git_commit": ...}}
        return any(has_provenance(v) for v in value.values())
    if isinstance(value, list):
        return any(has_provenance(v) for v in value)
    return False


def readme_names_commit(path: Path) -> bool:
    """Whether the folder's README names ``path`` and a commit on the same paragraph."""
    readme = path.parent / "README.md"
    if not readme.is_file():
        return False
    paragraphs = re.split(r"\n\s*\n|\n- ", readme.read_text(encoding="utf-8"))
    return any(path.name in p and COMMIT.search(p) for p in paragraphs)


def result_files() -> list[Path]:
    """The result JSON / JSONL files (not in hidden caches or mteb_results/)."""
    return sorted(p for p in RESULTS.rglob("*.json*") if p.suffix in (".json", ".jsonl")
                  and not any(part.startswith(".") or part == "mteb_results" for part in p.relative_to(RESULTS).parts))


def test_every_benchmark_folder_has_results() -> None:
    folders = {p.parent for p in RESULTS.rglob("*.py")} | {p.parent for p in RESULTS.rglob("*.sh")}
    with_results = {folder for folder in folders for p in result_files() if p.is_relative_to(folder)}
    assert folders and folders == with_results, sorted(str(f) for f in folders - with_results)


@pytest.mark.parametrize("path", result_files(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_result_records_what_produced_it(path: Path) -> None:
    if path.suffix == ".jsonl":
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            run = json.loads(line)
            assert has_provenance(run) or "commit" in run.get("committed_in", {}), f"{path}:{number}"
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    assert has_provenance(data) or readme_names_commit(path), (
        f"{path} records no command + git commit (paranmt_hf.utils.provenance) and its README does not say which "
        "commit it comes from"
    )


def test_checker_rejects_a_bare_result(tmp_path: Path) -> None:
    bare = tmp_path / "numbers.json"
    bare.write_text('{"seconds": 1.0, "environment": {"python": "3.11"}}')
    assert not has_provenance(json.loads(bare.read_text()))
    assert not readme_names_commit(bare)
    (tmp_path / "README.md").write_text("`numbers.json`: measured at commit `abc1234` on 2026-11-22.\n")
    assert readme_names_commit(bare)
    assert has_provenance({"models": {"m": {"provenance": {"command": "python x.py", "git_commit": "abc1234"}}}})
    assert has_provenance({"command": "python x.py", "environment": {"git_commit": "abc1234+uncommitted changes"}})
    assert not has_provenance({"command": "python x.py", "git_commit": None})  # outside a git checkout
    assert not has_provenance({"command": "python x.py", "git_commit": "unknown"})
    assert not has_provenance({"command": "", "git_commit": "abc1234"})
    assert has_provenance({"command": "python x.py", "commit": "9fb2e8d6eb35ad1ca2d2b7a8d8ef8e9128e201b1"})
    assert not has_provenance({"command": "python x.py", "commit": "see README"})

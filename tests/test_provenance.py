"""Provenance records of results: commit, dirty flag (result outputs excepted), command, versions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from paranmt_hf.utils.provenance import command_line, describe, git_state, provenance


def _git(repo: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(cmd, cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "results" / "topic").mkdir(parents=True)
    (tmp_path / "results" / "topic" / "out.json").write_text("{}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "init")
    return tmp_path


def test_clean_checkout_records_its_commit(repo: Path) -> None:
    record = provenance(["python", "run.py", "--flag", "a b"], root=repo)
    assert record["git_commit"] == _git(repo, "rev-parse", "HEAD")
    assert record["git_dirty"] is False
    assert record["command"] == "python run.py --flag 'a b'"
    assert record["packages"]["torch"] is not None and "nonexistent-pkg" not in record["packages"]
    assert len(record["load_average"]) == 3 and record["cores"] >= 1
    json.dumps(record)  # serialisable as it is


def test_changed_code_is_dirty_but_result_outputs_are_not(repo: Path) -> None:
    (repo / "results" / "topic" / "out.json").write_text('{"new": 1}\n')
    (repo / "results" / "topic" / "plot.png").write_bytes(b"png")
    assert git_state(repo)["dirty"] is False
    (repo / "code.py").write_text("x = 2\n")
    state = git_state(repo)
    assert state["dirty"] is True and state["dirty_files"] == ["code.py"]
    assert "uncommitted" in describe(provenance("cmd", root=repo))


def test_new_untracked_script_is_dirty(repo: Path) -> None:
    (repo / "results" / "topic" / "new_script.py").write_text("print(1)\n")
    assert git_state(repo)["dirty"] is True


def test_outside_a_checkout(tmp_path: Path) -> None:
    assert git_state(tmp_path) == {"commit": None, "dirty": None, "dirty_files": []}


def test_module_prints_json() -> None:
    out = subprocess.run([sys.executable, "-m", "paranmt_hf.utils.provenance", "--command", "bash x.sh"],
                         check=True, capture_output=True, text=True).stdout
    assert json.loads(out)["command"] == "bash x.sh"
    assert command_line(["python", "a.py"]) == "python a.py"

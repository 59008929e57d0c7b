"""Provenance records of results: commit, dirty flag (result outputs excepted), command, versions."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from paranmt_hf.utils.provenance import command_line, describe, git_state, provenance, update_record


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


def test_update_record_creates_the_file_and_keeps_the_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "folder" / "bench.json"
    assert update_record(path, "first", {"seconds": 1.5}) == {"first": {"seconds": 1.5}}
    assert path.read_text(encoding="utf-8") == json.dumps({"first": {"seconds": 1.5}}, indent=1) + "\n"
    update_record(path, "second", [1, 2])
    update_record(path, "first", "again")  # a key recorded again keeps its place
    assert path.read_text(encoding="utf-8") == json.dumps({"first": "again", "second": [1, 2]}, indent=1) + "\n"
    update_record(path, "third", "é", indent=2)
    assert path.read_text(encoding="utf-8") == json.dumps({"first": "again", "second": [1, 2], "third": "é"},
                                                          indent=2) + "\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["bench.json"]  # no lock or temporary left


def test_concurrent_update_records_lose_no_key(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    start, errors = threading.Barrier(2), []

    def record(name: str) -> None:
        try:
            start.wait()
            for i in range(25):
                update_record(path, f"{name}{i}", i)
        except BaseException as err:  # SystemExit included: reported below, not lost in the thread
            errors.append(err)

    threads = [threading.Thread(target=record, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert set(json.loads(path.read_text(encoding="utf-8"))) == {f"{name}{i}" for name in "ab" for i in range(25)}


@pytest.mark.parametrize("text", ["{\"kept\": 1,", "[1, 2]", ""], ids=["torn", "a list", "empty"])
def test_update_record_refuses_a_file_that_holds_no_json_object(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bench.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as raised:
        update_record(path, "new", 1)
    message = str(raised.value.code)
    assert str(path) in message and "left unchanged" in message and "\n" not in message
    assert path.read_text(encoding="utf-8") == text  # not overwritten


def test_a_script_stops_on_a_torn_record_with_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text("{\"kept\": 1,", encoding="utf-8")
    code = "import sys; from paranmt_hf.utils.provenance import update_record; update_record(sys.argv[1], 'k', 1)"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    [line] = out.stderr.strip().splitlines()
    assert line.startswith(f"cannot record 'k' in {path}: the file is not readable JSON (") and "line 1" in line
    assert line.endswith("fix or remove it and run again (it was left unchanged)")

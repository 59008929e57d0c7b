"""The shape of ``benchmarks/``, and the habits that keep README and docs true.

- every folder answers one question: a README with its table, at least one script, at most one JSON;
- every record in a JSON says what produced it (command, date, git commit, package versions, machine);
- every script answers ``--help`` against the library as it is now (their internals are not tested here);
- a module without a ``__main__`` block is imported by a script beside it;
- README and docs name no commit hash (provenance lives in the JSON) and link no ``results/`` folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
FOLDERS = sorted(p for p in BENCHMARKS.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
SCRIPTS = sorted(BENCHMARKS.rglob("*.py"))
PROVENANCE = {"a command": ("command",), "a date": ("date",), "a git commit": ("git_commit", "commit"),
              "package versions": ("packages", "paranmt_hf", "torch", "python"),
              "a machine": ("cpu", "machine", "platform")}
"""What every record must hold, at any depth: each entry names the keys that can carry it."""
COMMIT = re.compile(r"(?<![\w/.#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
"""A git commit hash: 7-40 hex digits with at least one letter and one digit, standing alone."""
PROSE = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(BENCHMARKS.rglob("README.md"))]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _keys(value: Any, found: set[str]) -> set[str]:
    """Every key of ``value`` (at any depth) whose value is not empty."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if inner not in (None, "", [], {}):
                found.add(key)
            _keys(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _keys(inner, found)
    return found


def missing_provenance(record: Any) -> list[str]:
    """What ``record`` does not say about how it was produced (empty: it says all of it)."""
    keys = _keys(record, set())
    return [what for what, names in PROVENANCE.items() if not keys.intersection(names)]


def records(path: Path) -> dict[str, Any]:
    """The records of a benchmark JSON: each top-level entry (those under ``recorded`` one by one)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = {k: v for k, v in data.items() if k != "recorded"}
    out.update({f"recorded.{k}": v for k, v in data.get("recorded", {}).items() if isinstance(v, (dict, list))})
    return out


def commit_hashes(text: str) -> list[str]:
    """The git commit hashes named in ``text``."""
    return COMMIT.findall(text)


def test_the_folders_are_found() -> None:
    assert {"speed", "memory", "quality"} <= {f.name for f in FOLDERS}
    assert BENCHMARKS / "speed" / "benchmark.py" in SCRIPTS


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_a_folder_holds_a_readme_table_scripts_and_at_most_one_json(folder: Path) -> None:
    readme = folder / "README.md"
    assert readme.is_file(), f"{_name(folder)} has no README.md"
    assert re.search(r"^\|.*\|\n\|[-:| ]+\|$", readme.read_text(encoding="utf-8"), re.M), f"{_name(readme)}: no table"
    assert list(folder.glob("*.py")), f"{_name(folder)} has no script"
    jsons = sorted(p.name for p in folder.rglob("*.json*"))
    assert len(jsons) <= 1, f"{_name(folder)} holds {jsons}: one JSON per folder, the runs as its keys"


@pytest.mark.parametrize("path", sorted(BENCHMARKS.glob("*/*.json")), ids=_name)
def test_every_record_says_what_produced_it(path: Path) -> None:
    found = records(path)
    assert found, f"{_name(path)} holds no record"
    bad = {key: missing for key, record in found.items() if (missing := missing_provenance(record))}
    assert not bad, f"{_name(path)}: records without their provenance: {bad}"


def test_the_provenance_check_rejects_a_bare_record() -> None:
    assert missing_provenance({"seconds": 1.0}) == list(PROVENANCE)
    assert missing_provenance({"provenance": {"command": "python x.py", "date": "2026-11-28", "git_commit": "abc",
                                              "packages": {"torch": "2"}, "cpu": "EPYC"}, "seconds": 1.0}) == []
    assert missing_provenance({"command": "python x.py", "git_commit": None, "date": "d", "python": "3", "cpu": "c"}) \
        == ["a git commit"]


def test_helper_modules_are_imported_by_a_script_beside_them() -> None:
    for module in (p for p in SCRIPTS if 'if __name__ == "__main__":' not in p.read_text(encoding="utf-8")):
        users = [p for p in module.parent.glob("*.py") if p != module
                 and re.search(rf"^\s*from {module.stem} import|^\s*import {module.stem}\b",
                               p.read_text(encoding="utf-8"), re.M)]
        assert users, f"{_name(module)} has no __main__ block and no script beside it imports it"


HELP_RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, os, runpy, sys

    root, scripts = sys.argv[1], sys.argv[2:]
    base_path = list(sys.path)
    out = {}
    for script in scripts:
        for name, module in list(sys.modules.items()):  # sibling modules of the previous script (models, loaders)
            if (getattr(module, "__file__", None) or "").startswith(root):
                del sys.modules[name]
        sys.path[:] = [os.path.dirname(script), *base_path]
        sys.argv = [script, "--help"]
        text = io.StringIO()
        try:
            with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                runpy.run_path(script, run_name="__main__")
            code = "returned without printing help"
        except SystemExit as exit:
            code = exit.code
        except BaseException as err:
            code = f"{type(err).__name__}: {err}"
        out[script] = [code, text.getvalue()[:4000]]
    print("ANSWERS " + json.dumps(out))
    """
)


def help_answers(scripts: list[Path], cwd: Path) -> dict[str, str | int | None]:
    """Each script's (``folder/name.py``) exit status for ``--help`` ("no usage line" when it printed none), all in
    one fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", HELP_RUNNER, str(BENCHMARKS), *map(str, scripts)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=cwd)
    assert proc.returncode == 0 and "ANSWERS " in proc.stdout, proc.stderr[-4000:]
    answers = json.loads(proc.stdout.split("ANSWERS ", 1)[1])
    return {"/".join(Path(s).parts[-2:]): (code if code != 0 or "usage:" in text else "no usage line")
            for s, (code, text) in answers.items()}


@pytest.mark.slow  # one interpreter imports every script's dependencies: ~15 s idle, ~30 s on a busy machine
def test_every_script_answers_help(tmp_path: Path) -> None:
    scripts = [p for p in SCRIPTS if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8")]
    answers = help_answers(scripts, tmp_path)
    assert len(answers) == len(scripts)
    assert not {name: code for name, code in answers.items() if code != 0}
    assert list(tmp_path.iterdir()) == []  # --help wrote nothing


def test_the_help_check_catches_a_script_that_no_longer_imports(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text('from paranmt_hf import NoSuchName\nif __name__ == "__main__":\n    pass\n')
    silent = tmp_path / "silent.py"
    silent.write_text('if __name__ == "__main__":\n    print("no parser")\n')
    answers = {Path(k).name: v for k, v in help_answers([broken, silent], tmp_path).items()}
    assert "ImportError" in str(answers["broken.py"]) and answers["silent.py"] == "returned without printing help"


@pytest.mark.parametrize("path", PROSE, ids=_name)
def test_prose_names_no_commit_hash_and_no_results_folder(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not commit_hashes(text), f"{_name(path)} names commits {commit_hashes(text)}: provenance lives in the JSON"
    assert not re.search(r"(?<![\w/])results/(?!<)", text.replace("mteb_results/", "")), (
        f"{_name(path)} points at results/: the benchmarks are under benchmarks/")


def test_the_hash_check_finds_hashes_and_spares_words_and_numbers() -> None:
    assert commit_hashes("measured at commit 53930c8, then at `a8d081310b98`") == ["53930c8", "a8d081310b98"]
    assert commit_hashes("decade, 1234567 sentences, facade, sha256 deadbeefcafe, #abc1234, v1.2.3") == []

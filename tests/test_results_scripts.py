"""The scripts under ``results/`` run against the library as it is now, so that they cannot rot unnoticed.

- every ``paranmt_hf`` import in every script (at any depth, inside functions too) names something that exists;
- every script with a ``__main__`` block answers ``--help`` (all in one fresh interpreter: a few seconds in all);
  the others are helper modules that a script beside them imports;
- every shell script's ``paranmt-hf`` and ``python results/...`` command lines parse with today's command line: each
  runs with stand-in ``paranmt-hf`` and ``python`` executables that only record their arguments;
- the provenance of a result comes from ``paranmt_hf.utils.provenance``: no script asks git for the commit itself,
  and every script except the renderers of recorded outputs uses the helper.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from paranmt_hf.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
SCRIPTS = sorted(RESULTS.rglob("*.py"))
SOURCED = {m for p in RESULTS.rglob("*.sh") for m in re.findall(r"^source .*/([\w.-]+\.sh)", p.read_text(), re.M)}
SHELL = sorted(p for p in RESULTS.rglob("*.sh") if p.name not in SOURCED)
"""The shell scripts a user runs (not those they source)."""
RENDER_ONLY = {
    "bitext/make_table.py": "renders runs.jsonl (each run carries its provenance)",
    "peers/make_table.py": "renders summary.json and the mteb results (run_peers.py records the provenance)",
    "recipes/make_table.py": "renders explore.jsonl and the pipeline runs (each carries its provenance)",
    "recipes/pipeline_table.py": "renders the pipeline runs, each with its provenance (a module of make_table.py)",
    "teacher/make_table.py": "renders runs.jsonl and init_variants.jsonl (each run names its commit)",
    "speed/loaders.py": "the timed encoders (a module of benchmark.py, which records the provenance)",
    "speed/models.py": "builds the benchmark models into a cache folder (no result)",
    "speed/report.py": "writes the report a script gives it (benchmark.py and light/measure.py record the provenance)",
    "make_paranmt/one_best.py": "writes an intermediate pair file into the work folder (no result; summarize.py "
                                "records the run)",
}
"""Scripts that record no provenance themselves, and why."""


def _name(path: Path) -> str:
    return path.relative_to(RESULTS).as_posix()


def _has_main(path: Path) -> bool:
    return "if __name__ == \"__main__\":" in path.read_text(encoding="utf-8")


def library_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """``(line, module, name)`` of every ``paranmt_hf`` import in ``path`` (``name`` None for ``import module``)."""
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "paranmt_hf":
            out += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "paranmt_hf"]
    return out


def missing_names(imports: list[tuple[int, str, str | None]]) -> list[str]:
    """The imports that do not resolve against the installed library (an absent extra: the test skips)."""
    missing = []
    for line, module, name in imports:
        try:
            found = importlib.import_module(module)
        except ImportError as err:
            absent = err.name or getattr(err.__cause__, "name", None)  # require() names the extra, from the cause
            if absent and absent.split(".")[0] != "paranmt_hf":
                pytest.importorskip(absent)  # an optional extra is not installed
            missing.append(f"line {line}: {module} ({err})")
            continue
        if name is not None and not hasattr(found, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"line {line}: {module}.{name}")
    return missing


def test_the_globs_find_the_scripts() -> None:
    assert RESULTS / "recipes" / "explore.py" in SCRIPTS and RESULTS / "recipes" / "ablation.sh" in SHELL
    assert RESULTS / "recipes" / "pipeline_jobs.sh" not in SHELL  # sourced by the others


@pytest.mark.parametrize("script", SCRIPTS, ids=_name)
def test_script_imports_the_current_api(script: Path) -> None:
    assert not missing_names(library_imports(script)), f"{_name(script)} imports what paranmt_hf no longer has"


def test_the_import_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    script = tmp_path / "old.py"
    script.write_text("def main():\n    from paranmt_hf import ParaNMTSentenceEncoder\n"
                      "    from paranmt_hf.model.storage import save_quantized, storage_bytes\n"
                      "    import paranmt_hf.st\n")
    assert missing_names(library_imports(script)) == [
        "line 2: paranmt_hf.ParaNMTSentenceEncoder", "line 3: paranmt_hf.model.storage.save_quantized",
        "line 4: paranmt_hf.st (No module named 'paranmt_hf.st')"]


@pytest.mark.parametrize("script", SCRIPTS, ids=_name)
def test_provenance_comes_from_the_library(script: Path) -> None:
    text = script.read_text(encoding="utf-8")
    assert "rev-parse" not in text, f"{_name(script)} asks git for the commit: use paranmt_hf.utils.provenance"
    if _name(script) in RENDER_ONLY:
        return
    assert "paranmt_hf.utils.provenance" in text, (
        f"{_name(script)} records no provenance (paranmt_hf.utils.provenance); a script that only renders "
        "recorded outputs belongs in RENDER_ONLY, with the reason")


def test_helper_modules_are_imported_by_a_script_beside_them() -> None:
    for module in (p for p in SCRIPTS if not _has_main(p)):
        users = [p for p in module.parent.glob("*.py") if p != module
                 and re.search(rf"^\s*from {module.stem} import|^\s*import {module.stem}\b",
                               p.read_text(encoding="utf-8"), re.M)]
        assert users, f"{_name(module)} has no __main__ block and no script beside it imports it"


HELP_RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, os, runpy, sys

    results, scripts = sys.argv[1], sys.argv[2:]
    base_path = list(sys.path)
    out = {}
    for script in scripts:
        for name, module in list(sys.modules.items()):  # sibling modules of the previous script (models, explore...)
            if (getattr(module, "__file__", None) or "").startswith(results):
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
        out[script] = [code, text.getvalue()[:4000]]  # the head: where "usage:" is
    print("RESULTS " + json.dumps(out))
    """
)


@pytest.mark.slow  # one interpreter imports every script's dependencies: ~15 s idle, ~30 s on a busy machine
def test_every_script_answers_help(tmp_path: Path) -> None:
    scripts = [p for p in SCRIPTS if _has_main(p)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", HELP_RUNNER, str(RESULTS), *map(str, scripts)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0 and "RESULTS " in proc.stdout, proc.stderr[-4000:]
    answers = json.loads(proc.stdout.split("RESULTS ", 1)[1])
    bad = {_name(Path(s)): code if code != 0 else "no usage line" for s, (code, text) in answers.items()
           if code != 0 or "usage:" not in text}
    assert not bad, bad
    assert list(tmp_path.iterdir()) == []  # --help wrote nothing


# ---- shell scripts ------------------------------------------------------------------------------------------------

RECORDER = """#!/bin/sh
n=$(ls "$CALLS" | wc -l)
f=$(mktemp "$CALLS/$(printf %06d "$n").XXXXXX")
printf '%s\\0' "$(basename "$0")" "$@" > "$f"
"""
"""A stand-in program: records its arguments in a file named after how many calls came before (sorting the names
gives the order of a script's calls; file times tie within the clock's resolution)."""


def recorded_calls(script: Path, tmp_path: Path) -> list[list[str]]:
    """Run ``script`` with stand-in ``paranmt-hf`` / ``python`` that only record their arguments; the calls."""
    bin_dir, calls, data = tmp_path / "bin", tmp_path / "calls", tmp_path / "data"
    for folder in (bin_dir, calls, data):
        folder.mkdir(exist_ok=True)
    for name in ("paranmt-hf", "python"):
        (bin_dir / name).write_text(RECORDER)
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "CALLS": str(calls),
           "PARANMT_HF_DATA": str(data), "WORK": str(tmp_path / "work"), "OUT": str(tmp_path / "out")}
    before = _checkout_files()
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, f"{_name(script)}: {proc.stderr[-2000:]}"
    assert _checkout_files() == before, f"{_name(script)} wrote into the checkout: {_checkout_files() - before}"
    return [f.read_bytes().decode().split("\0")[:-1] for f in sorted(calls.iterdir())]


def _checkout_files() -> set[Path]:
    """The files of the checkout's output folders (runs/, outputs/): a script run in a test must write elsewhere."""
    return {p for folder in ("runs", "outputs") for p in (ROOT / folder).rglob("*") if p.is_file()}


def _parse(argv: list[str]) -> str | None:
    """Why ``paranmt-hf ARGV`` does not parse (argparse's message), or None."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            build_parser().parse_args(argv)
    except SystemExit:
        return (err.getvalue().strip().splitlines() or ["exit"])[-1]
    return None


def check_call(call: list[str]) -> str | None:
    """Why a recorded call would fail before doing anything (a flag today's command line lacks), or None."""
    program, *args = call
    if program == "paranmt-hf":
        problem = _parse(args)
        return f"paranmt-hf {shlex.join(args)}: {problem}" if problem else None
    script = ROOT / args[0]
    if not script.is_file():
        return f"python {args[0]}: no such script"
    if script.name == "run_pipeline.py":  # GROUP NAME [options] -- TRAIN_FLAGS: the train flags go to paranmt-hf
        flags = args[args.index("--") + 1 :] if "--" in args else []
        problem = _parse(["train", *flags, "--output", "model"])
        return f"run_pipeline.py -- {shlex.join(flags)}: {problem}" if problem else None
    return None


@pytest.mark.parametrize("script", SHELL, ids=_name)
def test_shell_script_commands_parse(script: Path, tmp_path: Path) -> None:
    calls = recorded_calls(script, tmp_path)
    assert any(c[0] == "paranmt-hf" or "run_pipeline.py" in " ".join(c) for c in calls), calls
    problems = [p for p in map(check_call, calls) if p]
    assert not problems, problems


def test_the_shell_check_finds_a_flag_the_cli_lacks(tmp_path: Path) -> None:
    script = tmp_path / "old.sh"
    script.write_text('paranmt-hf train --train a.tsv --output m --no-such-flag 3\n'
                      'python results/recipes/run_pipeline.py g n -- --recipe best --colour red\n'
                      'python results/nowhere.py\n')
    problems = [p for p in map(check_call, recorded_calls(script, tmp_path)) if p]
    assert len(problems) == 3 and "--no-such-flag" in problems[0] and "--colour" in problems[1], problems
    assert "no such script" in problems[2]

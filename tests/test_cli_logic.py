"""The command line parses and calls the API, nothing else (docs/CONTRIBUTING.md, "CLI").

Read with ``ast`` from ``paranmt_hf/cli/*.py``: a command module imports argparse, a few standard modules that format
and report, and the library; it never opens a file; it raises only for the command line's own mistakes (outside an
``except`` block that rewords the API's error); and each function stays small. A check or a reading step put into
``cli/`` breaks one of these, and a Python user of the API would not get it: it belongs in the library.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[1] / "paranmt_hf" / "cli"
MODULES = sorted(CLI.glob("*.py"))

ALLOWED_IMPORTS = {
    "__future__", "argparse", "sys", "os", "json", "typing", "collections.abc", "pathlib", "functools", "textwrap",
    "difflib", "importlib", "logging", "signal", "threading", "contextlib", "dataclasses",
}
"""Standard modules a command may use: parsing, printing, reporting, the process's signals."""
LIBRARY_SWITCHES = {"progress.py": {"huggingface_hub.utils", "transformers.utils"}}
"""progress.py turns the libraries' own progress bars off (``--no-progress``): it reaches their switches."""
COMMAND_ERRORS = {"UsageError", "ArgumentTypeError", "SystemExit"}
"""What a command may raise on its own: a mistake of its command line."""
FILE_METHODS = {"read_text", "write_text", "read_bytes", "write_bytes", "walk", "listdir", "scandir", "glob", "rglob",
                "iterdir", "unlink", "rmtree", "mkdir", "copyfile", "copytree"}
"""Calls that read, write or list files (with the builtin ``open``): the API does that, atomically and checked."""
MAX_LINES = 45
"""A command handler (a function of the parsed ``args``) longer than this does more than parse and call."""
MAX_BRANCHES = 8
"""A function with more branches than this holds more than argument handling."""


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _in_except(tree: ast.AST) -> set[int]:
    """Ids of the nodes inside an ``except`` block."""
    inside: set[int] = set()
    for handler in (n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)):
        inside |= {id(n) for n in ast.walk(handler)}
    return inside


def _name(node: ast.AST | None) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def import_problems(path: Path) -> list[str]:
    """Absolute imports of ``path`` outside the allowed standard modules (relative imports reach the library)."""
    allowed = ALLOWED_IMPORTS | LIBRARY_SWITCHES.get(path.name, set())
    found = []
    for node in ast.walk(_tree(path)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        found += [f"{path.name}:{node.lineno} imports {name}" for name in names if name not in allowed]
    return found


def file_problems(path: Path) -> list[str]:
    """Calls of ``path`` that read, write or list files."""
    tree = _tree(path)
    return [f"{path.name}:{node.lineno} calls {_name(node)}()" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _name(node) in FILE_METHODS] + \
        [f"{path.name}:{node.lineno} uses open" for node in ast.walk(tree)
         if isinstance(node, ast.Name) and node.id == "open"]


def raise_problems(path: Path) -> list[str]:
    """``raise`` statements of ``path`` that are checks of their own (not a command-line mistake, not a rewording)."""
    tree = _tree(path)
    rewording = _in_except(tree)
    return [f"{path.name}:{node.lineno} raises {_name(node.exc)}" for node in ast.walk(tree)
            if isinstance(node, ast.Raise) and node.exc is not None and id(node) not in rewording
            and _name(node.exc) not in COMMAND_ERRORS]


def size_problems(path: Path) -> list[str]:
    """Handlers of ``path`` longer than :data:`MAX_LINES`, functions with more than :data:`MAX_BRANCHES` branches.

    A parser builder (no ``args`` parameter) may be long: a list of ``add_argument`` calls.
    """
    found = []
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.FunctionDef):
            continue
        lines = node.end_lineno - node.lineno + 1
        handler = "args" in [a.arg for a in node.args.args]
        branches = sum(isinstance(n, (ast.If, ast.IfExp, ast.For, ast.While, ast.Try, ast.comprehension))
                       for n in ast.walk(node))
        if (handler and lines > MAX_LINES) or branches > MAX_BRANCHES:
            found.append(f"{path.name}:{node.lineno} {node.name}: {lines} lines, {branches} branches")
    return found


@pytest.mark.parametrize("rule", [import_problems, file_problems, raise_problems, size_problems])
def test_cli_modules_only_parse_and_call_the_api(rule) -> None:
    assert MODULES and CLI.is_dir()
    problems = [p for path in MODULES for p in rule(path)]
    assert not problems, f"logic in paranmt_hf/cli/ (move it into the library): {problems}"


@pytest.mark.parametrize(("source", "rule"), [
    ("import gzip\n", import_problems),
    ("def read(path):\n    with open(path) as f:\n        return f.read()\n", file_problems),
    ("def check(n):\n    if n < 1:\n        raise ValueError('n must be positive')\n", raise_problems),
    ("def run(args):\n" + "".join(f"    if args.x == {i}:\n        print({i})\n" for i in range(9)), size_problems),
])
def test_each_rule_catches_what_it_forbids(tmp_path: Path, source: str, rule) -> None:
    path = tmp_path / "command.py"
    path.write_text(source, encoding="utf-8")
    assert rule(path)


def test_a_reworded_api_error_and_a_usage_error_are_allowed(tmp_path: Path) -> None:
    path = tmp_path / "command.py"
    path.write_text("def run(args):\n    if not args.x:\n        raise UsageError('give --x')\n    try:\n"
                    "        api(args.x)\n    except KeyError as err:\n        raise SystemExit(str(err)) from err\n"
                    "    except ValueError as err:\n        raise ValueError(f'--x: {err}') from err\n",
                    encoding="utf-8")
    assert raise_problems(path) == []


def test_running_settings_are_checked_by_the_api() -> None:
    # what `corpus ... --partition p` without --executor slurm refused in the CLI only
    from paranmt_hf.corpus.errors import InvalidOptionError, command_line_wording
    from paranmt_hf.corpus.pipeline.cluster import cluster_settings

    with pytest.raises(InvalidOptionError, match=r"cluster=\{'partition': ...\} is a Slurm setting: add "
                                                 r"RunOptions\(executor='slurm'\)$"):  # Python's words, no flag
        cluster_settings("local", {"partition": "gpu", "cpus_per_task": 2})
    with command_line_wording(), pytest.raises(InvalidOptionError,  # the command line's: flags only
                                               match="^--partition is a Slurm setting: add --executor slurm$"):
        cluster_settings("local", {"partition": "gpu", "cpus_per_task": 2})
    with command_line_wording(), pytest.raises(InvalidOptionError, match="--sbatch-arg is a Slurm setting"):
        cluster_settings("ray", {"sbatch_args": ["constraint=a100"]})
    assert cluster_settings("ray", {"cpus_per_task": 2, "time": None}) == {"cpus_per_task": 2}
    assert cluster_settings("slurm", {"partition": "gpu", "sbatch_args": ["constraint=a100", "exclusive"]}) == {
        "partition": "gpu", "sbatch_args": {"constraint": "a100", "exclusive": ""}}


def test_run_options_check_their_cluster_settings() -> None:
    # a Python user's RunOptions get the CLI's checks: Slurm settings on a local run are refused, not ignored
    from paranmt_hf.corpus.errors import InvalidOptionError
    from paranmt_hf.corpus.pipeline.runner import RunOptions

    with pytest.raises(InvalidOptionError, match="cluster={'partition': ...} is a Slurm setting"):
        RunOptions(cluster={"partition": "gpu"})
    run = RunOptions(executor="slurm", cluster={"partition": "gpu", "time": None, "sbatch_args": "constraint=a100"})
    assert run.cluster == {"partition": "gpu", "sbatch_args": {"constraint": "a100"}}  # one item as a string too
    assert RunOptions(executor="ray", cluster={"time": 3600}).cluster == {"time": 3600}  # Ray reads time as well
    with pytest.raises(InvalidOptionError, match="cluster={'time': ...} is a Slurm setting"):
        RunOptions(cluster={"time": 3600})


def test_torchrun_ranks_become_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    from paranmt_hf.corpus.pipeline.cluster import torchrun_tasks

    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert torchrun_tasks(None, None, 0) == (None, None, 0)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    assert torchrun_tasks(None, None, 0) == (4, 1, 3)
    assert torchrun_tasks(8, None, 0) == (8, None, 0)  # a task count given: as given

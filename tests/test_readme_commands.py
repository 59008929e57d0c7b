"""Every command block of README.md runs, and every command of the docs pages parses, so no example can rot.

The README's bash and python blocks run in order, as a new user types them, in one temporary folder (offline,
``HF_HUB_OFFLINE=1``), against a small copy of the training data: ``$PARANMT_HF_DATA`` (which the blocks read)
points at a folder whose ``train/`` files hold the first few hundred pairs of the real ones and whose ``eval/`` is the
real evaluation data. The few commands that cannot run in the suite are listed in :data:`NOT_RUN` with the reason;
each is still checked (the script exists and ``bash -n`` accepts it, the extras exist, the ``paranmt-hf`` command
line parses with today's flags). In the docs pages (``docs/*.md``) every ``paranmt-hf`` command line must parse with
today's flags and every python block must compile and import only names that exist.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import gzip
import importlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from paranmt_hf.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))

NOT_RUN = {
    "bash scripts/main.sh": "the main job itself (11 minutes on 2 cores; it trains on the whole data)",
    "bash scripts/test.sh": "the test suite itself",
    "bash scripts/install.sh && source .venv/bin/activate": "installs the environment this suite runs in",
    'pip install -e ".[all]"': "installs into the environment this suite runs in",
    "paranmt-hf corpus make $PARANMT_HF_DATA/train/bitext/tatoeba-en-de.tsv.gz -o my-paranmt/ --model "
    "Helsinki-NLP/opus-mt-de-en --scorer my-model": "downloads a translation model from the Hub "
    "(tests/test_corpus_make.py runs `corpus make` on a translation model built in code)",
}
"""README commands the suite does not run (exact text, comments removed) -> why; each is checked otherwise."""

TRAIN_PAIRS = 200
"""Pairs kept of each training file in the small data copy."""


def code_blocks(path: Path) -> list[tuple[str, str, int]]:
    """The fenced blocks of a Markdown file: (language, text, line of the opening fence)."""
    blocks, lines = [], path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if fence:
            indent, start, body = len(fence.group(1)), i + 1, []
            i += 1
            while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
                body.append(lines[i][indent:])
                i += 1
            blocks.append((fence.group(2), "\n".join(body) + "\n", start))
        i += 1
    return blocks


def commands(bash: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments and blank lines removed."""
    out, current = [], ""
    for line in bash.splitlines():
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        text = _strip_comment(current).strip()
        if text:
            out.append(re.sub(r"\s+", " ", text))
        current = ""
    return out


def _strip_comment(line: str) -> str:
    """``line`` without its trailing ``# comment`` (a ``#`` outside quotes, after a blank)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _expand(word: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)(?::-[^}]*)?\}?", lambda m: env.get(m.group(1), "DATA"), word)


def parse_problem(command: str, env: dict[str, str] | None = None) -> str | None:
    """Why ``command`` would fail before doing anything: a ``paranmt-hf`` flag or value today's command line
    rejects, a script that does not exist or that ``bash -n`` rejects, an unknown extra; None when it parses."""
    problems = []
    for words in _simple_commands(command, env or {}):
        if isinstance(words, str):
            return f"{command}: {words}"
        part = shlex.join(words)
        while words and re.match(r"^\w+=", words[0]):  # VAR=value before a command
            words = words[1:]
        check = CHECKS.get(words[0]) if words else None
        problem = check(words) if check else None
        if problem:
            problems.append(f"{part}: {problem}")
    return "; ".join(problems) or None


def _simple_commands(command: str, env: dict[str, str]) -> list[list[str]] | list[str]:
    """The words of each simple command of ``command`` (split at ``&&``, ``||``, ``;``, ``|``), variables expanded;
    ``[message]`` when it does not tokenise."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as err:
        return [str(err)]
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in ("&&", "||", ";", "|"):
            out.append([])
        else:
            out[-1].append(_expand(token, env))
    return [words for words in out if words]


def _cli_problem(words: list[str]) -> str | None:
    """argparse's complaint about ``paranmt-hf ARGS`` (``torchrun ... -m paranmt_hf.cli.main ARGS`` too)."""
    args = words[words.index("paranmt_hf.cli.main") + 1:] if "paranmt_hf.cli.main" in words else words[1:]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(args)
    except SystemExit as stop:
        if stop.code:
            return (err.getvalue().strip().splitlines() or ["exit"])[-1]
    return None


def _script_problem(words: list[str]) -> str | None:
    script = ROOT / words[1]
    if not script.is_file():
        return "no such script"
    if subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode:
        return f"bash -n rejects {words[1]}"
    return None


def _pip_problem(words: list[str]) -> str | None:
    named = {e for word in words for group in re.findall(r"\[([\w,-]+)\]", word) for e in group.split(",")}
    unknown = named - set(_extras())
    return f"unknown extra(s) {sorted(unknown)}" if unknown else None


CHECKS = {"paranmt-hf": _cli_problem, "torchrun": _cli_problem, "bash": _script_problem, "pip": _pip_problem}
"""How a command that is not run is checked, by program."""


def _extras() -> list[str]:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg")
    return list(config["options.extras_require"])


def import_problems(code: str) -> list[str]:
    """Names a python block imports that do not exist (the block must also compile)."""
    tree = ast.parse(code)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            try:
                module = importlib.import_module(node.module)
            except ImportError as err:
                problems.append(f"from {node.module}: {err}")
                continue
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        problems.append(f"from {node.module} import {alias.name}: no such name")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                try:
                    importlib.import_module(alias.name)
                except ImportError as err:
                    problems.append(f"import {alias.name}: {err}")
    return problems


# ---- the checks that need no run ----------------------------------------------------------------------------------


def test_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    first = [c for lang, body, _ in code_blocks(README) if lang == "bash" for c in commands(body)][:2]
    assert first == ["bash scripts/main.sh", "bash scripts/test.sh"]
    commit = r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"
    for lab_note in (commit, r"load average", r"\bissue \d+", r"not reached", r"\btarget"):
        assert not re.search(lab_note, text, flags=re.I), lab_note
    for page in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / page).is_file(), page


def test_every_command_not_run_is_in_the_readme_and_parses() -> None:
    readme = [c for lang, body, _ in code_blocks(README) if lang == "bash" for c in commands(body)]
    for command in NOT_RUN:
        assert command in readme, f"NOT_RUN lists a command the README no longer has: {command}"
        assert parse_problem(command, {"PARANMT_HF_DATA": "data"}) is None, parse_problem(command)


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_every_documented_command_parses(page: Path) -> None:
    problems = []
    for lang, body, line in code_blocks(page):
        if lang == "bash":
            problems += [f"{page.name}:{line}: {p}" for p in map(parse_problem, commands(body)) if p]
        elif lang == "python":
            try:
                problems += [f"{page.name}:{line}: {p}" for p in import_problems(body)]
            except SyntaxError as err:
                problems.append(f"{page.name}:{line}: {err}")
    assert not problems, problems


def test_the_parse_check_finds_a_flag_the_cli_lacks() -> None:
    assert parse_problem("paranmt-hf train --output m") is None
    assert "--no-such-flag" in parse_problem("paranmt-hf train --output m --no-such-flag 3")
    assert "no such script" in parse_problem("bash scripts/nowhere.sh")
    assert "unknown extra" in parse_problem('pip install -e ".[nope]"')
    assert import_problems("from paranmt_hf import NoSuchThing") != []


# ---- the README, run ----------------------------------------------------------------------------------------------


def _small_data(folder: Path, real: Path) -> Path:
    """``folder`` with ``train/`` cut to :data:`TRAIN_PAIRS` pairs per file and the real ``eval/``."""
    (folder / "train" / "bitext").mkdir(parents=True)
    for source in [*(real / "train").glob("*.tsv.gz"), *(real / "train" / "bitext").glob("*.tsv.gz")]:
        with gzip.open(source, "rt", encoding="utf-8") as lines:
            head = [line for _, line in zip(range(TRAIN_PAIRS), lines, strict=False)]
        target = folder / source.relative_to(real)
        with gzip.open(target, "wt", encoding="utf-8") as out:
            out.writelines(head)
    (folder / "eval").symlink_to(real / "eval")
    return folder


@pytest.mark.data
@pytest.mark.slow  # trains two small models and runs every README command: about 2 minutes
def test_readme_blocks_run_in_order(data_dir: Path, tmp_path: Path) -> None:
    data = _small_data(tmp_path / "data", data_dir)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PARANMT_HF_DATA": str(data), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran, here, shell_cwd = set(), work, tmp_path / "cwd"
    for lang, body, line in code_blocks(README):
        if lang == "bash":
            script = []
            for command in commands(body):
                if command in NOT_RUN:
                    ran.add(command)
                    continue
                script.append(command)
            if not script:
                continue
            # one shell session, as a reader's: a block's `cd` holds for the blocks after it
            argv = ["bash", "-euo", "pipefail", "-c", "\n".join([*script, f"pwd > {shlex.quote(str(shell_cwd))}"])]
        elif lang == "python":
            argv = [sys.executable, "-c", body]
        else:
            continue
        done = subprocess.run(argv, cwd=here, env=env, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"README.md:{line} ({lang}) exited {done.returncode}:\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, f"README.md:{line}:\n{done.stderr[-3000:]}"
        if lang == "bash":
            here = Path(shell_cwd.read_text().strip())
    assert ran == set(NOT_RUN)
    assert (here / "my-model" / "config.json").is_file() and (here / "my-model-hub" / "README.md").is_file()
    # everything the examples wrote is in one folder that git ignores: nothing lands in the checkout's own tree
    assert [p.name for p in work.iterdir()] == ["runs"] and here == work / "runs" / "quickstart"
    ignored = subprocess.run(["git", "check-ignore", "-q", "runs/quickstart/my-model/config.json"], cwd=ROOT)
    assert ignored.returncode == 0, "runs/ must be in .gitignore"

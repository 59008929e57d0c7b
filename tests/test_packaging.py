"""Packaging: every sub-package is installed, the console script exists, import is light and opens no network."""

from __future__ import annotations

import ast
import configparser
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPED = {
    "paranmt_hf.modeling": "modeling",
    "paranmt_hf.dataset_scripts": "dataset_scripts",
    "paranmt_hf.hub_cards": "hub_cards",
}


def _listed_packages() -> set[str]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return {p.strip() for p in cfg["options"]["packages"].split("\n") if p.strip()}


def test_every_subpackage_is_listed_in_setup_cfg():
    found = {"paranmt_hf"} | set(MAPPED)
    for init in (ROOT / "paranmt_hf").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        found.add(".".join(rel.parts))
    for package, folder in MAPPED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join((package, *rel.parts)))
    assert found == _listed_packages()


def test_console_script_runs():
    proc = subprocess.run(["paranmt-hf", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "build-tokenizer" in proc.stdout


def test_import_is_fast_and_opens_no_network():
    script = textwrap.dedent("""
        import socket, sys, time
        def refuse(*a, **k):
            raise AssertionError("network access during import")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        before = set(sys.modules)
        import paranmt_hf
        loaded = {m.split(".")[0] for m in set(sys.modules) - before}
        print(sorted(m for m in loaded if m not in sys.stdlib_module_names))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    # fast: it imports paranmt_hf's own package and the standard library alone (a module count, not wall time,
    # which a loaded machine stretches); numpy, tokenizers, torch and transformers come with what uses them
    assert proc.stdout.strip() == "['paranmt_hf']", proc.stdout


REMOTE_CODE_IMPORTS = {"torch", "transformers", "tokenizers", "numpy"}
"""What a remote-code file may import besides the standard library and its siblings."""


GUARDED_IMPORTS = {"input_module_paranmt.py": "sentence_transformers", "featurization_paranmt.py": "paranmt_hf.model"}
"""The one optional import each of two remote-code files may make, inside ``try: ... except ImportError:``: the input
module derives from sentence-transformers' ``InputModule``, the featuriser takes paranmt_hf's batched ids."""


def _guarded(tree: ast.AST) -> set[int]:
    """Line numbers of the imports inside a ``try`` whose handlers catch ``ImportError``."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                                             for h in node.handlers):
            lines |= {n.lineno for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import,
                                                                                              ast.ImportFrom))}
    return lines


def remote_code_violations(path: Path) -> list[str]:
    """Imports of a remote-code file outside the standard library, :data:`REMOTE_CODE_IMPORTS` and its siblings, at
    any depth (function-local and guarded imports too), but for the one guarded import of :data:`GUARDED_IMPORTS`."""
    allowed = set(sys.stdlib_module_names) | REMOTE_CODE_IMPORTS
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded, optional = _guarded(tree), GUARDED_IMPORTS.get(path.name)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        bad += [f"{path.name}:{node.lineno}: {name}" for name in names if name.split(".")[0] not in allowed
                and not (optional and node.lineno in guarded and (name + ".").startswith(optional + "."))]
    return bad


def test_remote_code_files_import_only_torch_transformers_and_siblings(tmp_path):
    assert [v for p in sorted((ROOT / "modeling").glob("*.py")) for v in remote_code_violations(p)] == []
    # the check reads imports at any depth: a function-local import of the library is caught
    bad = tmp_path / "modeling_x.py"
    bad.write_text("import json\n\n\ndef f():\n    if True:\n        from paranmt_hf.model import build\n")
    assert remote_code_violations(bad) == ["modeling_x.py:6: paranmt_hf.model"]
    # the featuriser's optional import of paranmt_hf's ids is allowed inside its guard only
    guarded = tmp_path / "featurization_paranmt.py"
    guarded.write_text("try:\n    from paranmt_hf.model.token_ids import f\nexcept ImportError:\n    f = None\n"
                       "from paranmt_hf.model.token_ids import g\n")
    assert remote_code_violations(guarded) == ["featurization_paranmt.py:5: paranmt_hf.model.token_ids"]


def test_contributing_guide_and_modeling_docstring_list_every_remote_code_file():
    """docs/CONTRIBUTING.md and modeling/__init__.py name each file of modeling/ (they once listed three of seven)."""
    import paranmt_hf.modeling

    files = sorted(p.name for p in (ROOT / "modeling").glob("*.py") if p.name != "__init__.py")
    assert len(files) >= 7
    guide = (ROOT / "docs" / "CONTRIBUTING.md").read_text(encoding="utf-8")
    docstring = paranmt_hf.modeling.__doc__ or ""
    assert [f for f in files if f"`{f}`" not in guide] == []
    assert [f for f in files if f"``{f}``" not in docstring] == []
    cards = sorted(p.name for p in (ROOT / "hub_cards").iterdir() if p.suffix != ".py" and p.is_file())
    assert cards and [c for c in cards if f"`{c}`" not in guide] == []


def test_the_suite_runs_at_the_transformers_floor():
    """The oldest transformers that setup.cfg allows is the one the suite runs with (scripts/constraints.txt pins it),
    so every loader test, the "paranmt_hf not installed" ones included, tests the floor."""
    import configparser
    import re
    from importlib.metadata import version

    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg")
    (floor,) = re.findall(r"^transformers>=([\d.]+)$", config["options.extras_require"]["torch"], flags=re.M)
    (pinned,) = re.findall(r"^transformers==([\d.]+)$", (ROOT / "scripts" / "constraints.txt").read_text(), flags=re.M)
    assert [int(x) for x in pinned.split(".")][:len(floor.split("."))] == [int(x) for x in floor.split(".")]
    assert version("transformers") == pinned


def test_install_script_leaves_byte_compiling_to_first_import():
    """pip byte-compiles every module of every package it installs (torch's thousands), about half the install's
    time; the install script's package installs skip it (``--no-compile``) and Python compiles what it imports."""
    import shlex

    installs = [shlex.split(line) for line in (ROOT / "scripts" / "install.sh").read_text().splitlines()
                if "python -m pip install" in line and "--upgrade pip" not in line]
    assert installs
    assert [words for words in installs if "--no-compile" not in words] == []

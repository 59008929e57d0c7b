"""Import layering (issue 16, "import circle"): the low-level modules do not depend on the high-level encoder.

``ParaNMTEncoder`` (paranmt_hf/encoder.py) uses the int8 loader (export/quantize.py), the multiprocessing runner
(parallel.py) and the sentence-transformers writer (st/layout.py); those take a model, a tokenizer or a callable and
never import the encoder back (type hints only, under ``TYPE_CHECKING``). And building a ``ParaNMTEncoder`` leaves
its model's train/eval mode alone, so that training code does not have to save and restore it.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paranmt_hf import ParaNMTEncoder, build_encoder

LOW_LEVEL = ("paranmt_hf.model.storage", "paranmt_hf.model.parallel", "paranmt_hf.model.st_layout")
ENCODER = "paranmt_hf.model.encoder"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that runs (at module level or inside functions), skipping ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def encoder_imports(module: str, encoder: str = ENCODER) -> list[str]:
    """The run-time imports in ``module``'s source that reach the ``encoder`` module or its ``ParaNMTEncoder``."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text(encoding="utf-8")
    package = module if spec.submodule_search_locations is not None else module.rpartition(".")[0]
    forbidden = {encoder, f"{encoder.rpartition('.')[0]}.ParaNMTEncoder"}
    bad = []
    for node in _runtime_imports(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            origin = node.module if node.level == 0 else ".".join(p for p in (base, node.module) if p)
            targets = [origin, *(f"{origin}.{alias.name}" for alias in node.names)]
        if any(t in forbidden or t.startswith(encoder + ".") for t in targets):
            bad.append(f"line {node.lineno}: {ast.unparse(node)}")
    return bad


@pytest.mark.parametrize("module", LOW_LEVEL)
def test_low_level_module_never_imports_the_encoder(module):
    """No import of the encoder in the source, not even inside a function (only ``if TYPE_CHECKING:``)."""
    assert encoder_imports(module) == []


@pytest.mark.parametrize("module", LOW_LEVEL)
def test_importing_a_low_level_module_leaves_the_encoder_unloaded(module):
    """In a fresh interpreter, importing the module does not load ``paranmt_hf.model.encoder``."""
    code = f"import importlib, sys; importlib.import_module({module!r}); print({ENCODER!r} in sys.modules)"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "False"


def test_the_checker_sees_an_encoder_import(tmp_path, monkeypatch):
    """The source check finds the imports that would bring the circle back (relative, absolute, inside functions)."""
    package = tmp_path / "paranmt_hf_probe" / "export"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..encoder import ParaNMTEncoder\n"  # line 3: type hints only, allowed
        "def f():\n    from ..encoder import ParaNMTEncoder\n"  # line 5
        "import paranmt_hf_probe.encoder\n"  # line 6
        "from paranmt_hf_probe import ParaNMTEncoder\n"  # line 7
        "from .. import encoder\n"  # line 8
        "from ..other import thing\n"  # line 9: allowed
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = encoder_imports("paranmt_hf_probe.export.mod", encoder="paranmt_hf_probe.encoder")
    assert [line.split(":")[0] for line in found] == ["line 5", "line 6", "line 7", "line 8"]


@pytest.mark.parametrize("mode", [True, False])
def test_encoder_keeps_the_model_training_mode(mode):
    """``ParaNMTEncoder(model, tokenizer)`` and ``encode`` leave the model in the mode it was in."""
    built = build_encoder("word", ["a man plays a guitar .", "a dog runs ."], embedding_dim=4)
    model = built.model.train(mode)
    encoder = ParaNMTEncoder(model, built.tokenizer)
    assert all(m.training is mode for m in model.modules())
    encoder.encode(["a man runs"])
    assert all(m.training is mode for m in model.modules())

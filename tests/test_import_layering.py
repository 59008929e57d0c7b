"""Import layering: sub-packages only import those below them in the data flow, no modules import each other, and
the low-level model modules do not depend on the high-level encoder.

The order is docs/CONTRIBUTING.md's map (:data:`PACKAGE_ORDER`); every import counts, at any depth, type hints
included.
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
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from paranmt_hf import ParaNMTEncoder, build_encoder

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_ORDER = ("utils", "metrics", "modeling", "data", "fetch", "model", "corpus", "dataset_scripts", "losses",
                 "training", "evaluation", "paraphrase_generator", "hub", "cli")
"""paranmt_hf's sub-packages from the bottom of the data flow to the top (the package root is above them all)."""
TOP_LEVEL = {"modeling": "paranmt_hf.modeling", "dataset_scripts": "paranmt_hf.dataset_scripts",
             "hub_cards": "paranmt_hf.hub_cards"}


def module_imports(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the paranmt_hf modules it imports (every import statement at any depth; ``from X import name``
    counts as X, or as X.name when that is a module)."""
    files = {}
    for folder in ("paranmt_hf", *TOP_LEVEL):
        for path in (root / folder).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[0] in TOP_LEVEL:
                parts = ["paranmt_hf", *parts]
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            files[name] = (path, is_package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in files.items():
        package = name if is_package else name.rpartition(".")[0]
        found = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        optional = _optional_imports(tree) if name.startswith("paranmt_hf.modeling.") else set()
        for node in ast.walk(tree):
            if node in optional:
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                origin = node.module if node.level == 0 else ".".join(p for p in (base, node.module) if p)
                targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in files else origin
                           for alias in node.names]
            else:
                continue
            found |= {t for t in targets if t in files and t != name}
        graph[name] = found
    return graph


def _optional_imports(tree: ast.AST) -> set[ast.AST]:
    """Imports inside ``try: ... except ImportError:``. In ``modeling/`` (remote code, which runs where paranmt_hf
    may be absent) they are not dependencies: the featuriser takes paranmt_hf's batched ids only where paranmt_hf is
    installed (tests/test_packaging.py allows that one optional import and no other)."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                                             for h in node.handlers):
            found |= {n for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return found


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in PACKAGE_ORDER) else None


def order_violations(graph: dict[str, set[str]], place: Callable[[str], str | None], order: Sequence[str],
                     prefix: str, name: str) -> list[str]:
    """Imports from a place (``place(module)``: a package or room; None: not checked) to one above it in ``order``."""
    bad = []
    for module, targets in graph.items():
        source = place(module)
        for target in targets:
            dest = place(target)
            if source is None or dest is None or source == dest:
                continue
            if source not in order or dest not in order:
                bad.append(f"{module} -> {target}: {name}")
            elif order.index(dest) > order.index(source):
                bad.append(f"{module} -> {target}: {prefix}{source}/ imports {prefix}{dest}/, which stands above it")
    return bad


def layering_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a sub-package to one above it in :data:`PACKAGE_ORDER` (unknown sub-packages are violations)."""
    return order_violations(graph, _package, PACKAGE_ORDER, "", "sub-package not in PACKAGE_ORDER")


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Modules that import each other, directly or through others (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_sub_packages_import_only_those_below_them():
    assert layering_violations(module_imports()) == []


def test_no_modules_import_each_other():
    assert circles(module_imports()) == []


def test_the_layering_checks_catch_a_back_import_and_a_circle():
    graph = {"paranmt_hf.data.reader": {"paranmt_hf.corpus.selection.filters"},
             "paranmt_hf.corpus.selection.filters": set(),
             "paranmt_hf.model.a": {"paranmt_hf.model.b"}, "paranmt_hf.model.b": {"paranmt_hf.model.a"}}
    assert layering_violations(graph) == [
        "paranmt_hf.data.reader -> paranmt_hf.corpus.selection.filters: data/ imports corpus/, which stands above it"]
    assert circles(graph) == [["paranmt_hf.model.a", "paranmt_hf.model.b"]]


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


CORPUS_ROOMS = ("errors", "text", "measures", "pipeline", "annotate", "selection", "translation", "output", "make")
"""The rooms of ``paranmt_hf/corpus/`` from the bottom of its pipeline to the top (docs/CONTRIBUTING.md's map)."""


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["paranmt_hf", "corpus"] else None


def corpus_room_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a room of ``corpus/`` to a room above it (or to a module outside every room)."""
    return order_violations(graph, _room, CORPUS_ROOMS, "corpus/", "not a room of CORPUS_ROOMS")


def test_corpus_rooms_import_only_rooms_below_them():
    assert corpus_room_violations(module_imports()) == []
    graph = {"paranmt_hf.corpus.measures.columns": {"paranmt_hf.corpus.pipeline.runner"}}
    assert corpus_room_violations(graph) == [
        "paranmt_hf.corpus.measures.columns -> paranmt_hf.corpus.pipeline.runner: corpus/measures/ imports "
        "corpus/pipeline/, which stands above it"]


def test_test_helpers_are_not_in_the_wheel():
    """The synthetic corpora and translation models that tests build live in tests/, not in the package."""
    assert not list((ROOT / "paranmt_hf").rglob("synthetic*.py"))

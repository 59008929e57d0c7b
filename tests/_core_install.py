"""A core install for a script that a test runs in a fresh interpreter: torch, transformers and
sentence-transformers cannot be imported (tests/test_core_install_cli.py, tests/test_static_encoder.py)."""
from __future__ import annotations

WITHOUT_TORCH = """\
import importlib.abc
import sys

class Block(importlib.abc.MetaPathFinder):  # a core install: torch and transformers absent
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("torch", "transformers", "sentence_transformers"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Block())
"""
"""The first lines of such a script (``python -c WITHOUT_TORCH + code``): importing torch raises as when absent."""

"""Register the ParaNMT classes with transformers' Auto classes, without importing transformers.

``import paranmt_hf`` must stay fast (transformers and torch take seconds to import), yet after it
``AutoConfig/AutoModel/AutoTokenizer.from_pretrained(dir)`` must know ``model_type="paranmt"``. So the documented
``AutoConfig.register`` / ``AutoModel.register`` / ``AutoTokenizer.register`` calls run when transformers' auto
modules are imported: at once for those already imported, otherwise from a post-import hook on ``sys.meta_path``
that runs right after the module has executed. Nothing else of transformers, and nothing of sentence-transformers,
is touched: ``SentenceTransformer(dir)`` loads a ParaNMT folder by sentence-transformers' own rules
(``trust_remote_code=True``, see docs/loading.md).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType


def _register_config(module: ModuleType) -> None:
    from ..modeling.configuration_paranmt import ParaNMTConfig

    module.AutoConfig.register(ParaNMTConfig.model_type, ParaNMTConfig, exist_ok=True)


def _register_model(module: ModuleType) -> None:
    from ..modeling.configuration_paranmt import ParaNMTConfig
    from ..modeling.modeling_paranmt import ParaNMTModel

    module.AutoModel.register(ParaNMTConfig, ParaNMTModel, exist_ok=True)


def _register_tokenizer(module: ModuleType) -> None:
    from ..modeling.configuration_paranmt import ParaNMTConfig
    from ..modeling.tokenization_paranmt import ParaNMTTokenizer

    module.AutoTokenizer.register(ParaNMTConfig, tokenizer_class=ParaNMTTokenizer, exist_ok=True)


HOOKS: dict[str, Callable[[ModuleType], None]] = {
    "transformers.models.auto.configuration_auto": _register_config,
    "transformers.models.auto.modeling_auto": _register_model,
    "transformers.models.auto.tokenization_auto": _register_tokenizer,
}


class _HookedLoader(importlib.abc.Loader):
    """Runs the wrapped loader, then the registration hook of the module."""

    def __init__(self, loader: importlib.abc.Loader, hook: Callable[[ModuleType], None]) -> None:
        self.loader = loader
        self.hook = hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.hook(module)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of the hooked transformers modules."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        hook = HOOKS.get(fullname)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _HookedLoader(spec.loader, hook)
                return spec
        return None


def install() -> None:
    """Register now with the auto modules already imported, and hook the others (idempotent)."""
    for name, hook in HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])
    if not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImportFinder())

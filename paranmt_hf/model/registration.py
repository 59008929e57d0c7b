"""Register the ParaNMT classes with transformers' Auto classes and sentence-transformers, without importing them.

``import paranmt_hf`` must stay fast (transformers and torch take seconds to import), yet after it
``AutoConfig/AutoModel/AutoTokenizer.from_pretrained(dir)`` must know ``model_type="paranmt"``, and
``SentenceTransformer(dir)`` must resolve the input module named in a saved directory's ``modules.json``
(``input_module_paranmt.ParaNMTInputModule``) to the installed class, so that no code from the directory runs and no
``trust_remote_code`` flag is needed. So the registration runs when those modules are imported: at once for those
already imported, otherwise from a post-import hook on ``sys.meta_path`` that runs right after the module has
executed.

sentence-transformers (6.x) looks a ``modules.json`` type up in the model class's ``_module_classes`` mapping before
importing anything (``BaseModel._load_module_class_from_ref``); paranmt_hf adds its refs there, lazily (the mapping
imports the class on first lookup). Where that attribute does not exist, ``trust_remote_code=True`` is needed.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any


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


ST_MODULE_CLASSES = {
    # what ``modules.json`` of a saved directory names -> where the installed class lives
    "input_module_paranmt.ParaNMTInputModule": "paranmt_hf.modeling.input_module_paranmt:ParaNMTInputModule",
    # written by ``SentenceTransformer.save`` when the module is the installed class
    "paranmt_hf.modeling.input_module_paranmt.ParaNMTInputModule":
        "paranmt_hf.modeling.input_module_paranmt:ParaNMTInputModule",
    # the training module's name in earlier releases
    "paranmt_hf.st.sentence_encoder.ParaNMTSentenceEncoder":
        "paranmt_hf.modeling.input_module_paranmt:ParaNMTInputModule",
}


class _LazyModuleClasses(Mapping):
    """sentence-transformers' ``_module_classes`` plus paranmt_hf's refs, imported on first lookup."""

    def __init__(self, base: Mapping[str, Any], lazy: Mapping[str, str]) -> None:
        self._base = dict(base)
        self._lazy = dict(lazy)

    def __getitem__(self, key: str) -> Any:
        if key in self._base:
            return self._base[key]
        target = self._lazy[key]
        module, _, name = target.partition(":")
        value = getattr(importlib.import_module(module), name)
        self._base[key] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter({**self._lazy, **self._base})

    def __len__(self) -> int:
        return len({**self._lazy, **self._base})


PORTABLE_REF = "input_module_paranmt.ParaNMTInputModule"
"""The ``modules.json`` type that loads with or without paranmt_hf (the shipped remote-code file)."""
INSTALLED_REF = "paranmt_hf.modeling.input_module_paranmt.ParaNMTInputModule"
"""What ``SentenceTransformer.save`` writes for the installed class: it would need paranmt_hf to load."""


def make_portable(path: str | os.PathLike[str]) -> bool:
    """Rewrite a saved folder's ``modules.json`` to name the shipped input module instead of the installed one.

    ``SentenceTransformer(dir).save(out)`` after ``import paranmt_hf`` names the installed class
    (:data:`INSTALLED_REF`), which only an environment with paranmt_hf can import; the folder also holds the
    remote-code file ``input_module_paranmt.py`` (the module's ``save`` copies it), so :data:`PORTABLE_REF` loads
    everywhere: through paranmt_hf's registration when it is installed, with ``trust_remote_code=True`` without it.
    Returns whether the file changed.
    """
    modules_json = Path(path) / "modules.json"
    try:
        entries = json.loads(modules_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(entries, list):
        return False
    if not any(isinstance(e, dict) and e.get("type") == INSTALLED_REF for e in entries):
        return False
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == INSTALLED_REF:
            entry["type"] = PORTABLE_REF
    from ..utils.atomic import atomic_write_text

    # a temporary of its own (two processes saving one folder each replace the file whole) and the file's permissions
    atomic_write_text(modules_json, json.dumps(entries, indent=2))
    return True


def _portable_save(save: Callable[..., Any]) -> Callable[..., Any]:
    """``BaseModel.save`` followed by :func:`make_portable` on the folder it wrote."""

    @functools.wraps(save)
    def portable_save(self: Any, path: str, *args: Any, **kwargs: Any) -> Any:
        result = save(self, path, *args, **kwargs)
        make_portable(path)
        return result

    portable_save.paranmt_portable = True  # type: ignore[attr-defined]
    return portable_save


def _with_paranmt_classes(load: Callable[..., Any]) -> classmethod:
    """``BaseModel._load_with_module_classes`` whose ``module_classes`` also resolve paranmt_hf's refs.

    The trainer reloads a checkpoint with the classes of the model in memory (``paranmt_hf...ParaNMTInputModule``),
    while the checkpoint's ``modules.json`` names the portable :data:`PORTABLE_REF`.
    """

    @functools.wraps(load)
    def load_with_classes(cls: Any, model_name_or_path: str, module_classes: Mapping[str, Any], **kwargs: Any) -> Any:
        return load(cls, model_name_or_path, _LazyModuleClasses(module_classes, ST_MODULE_CLASSES), **kwargs)

    load_with_classes.paranmt_registered = True  # type: ignore[attr-defined]
    return classmethod(load_with_classes)


def _register_sentence_transformers(module: ModuleType) -> None:
    base = getattr(module, "BaseModel", None)
    if base is None:
        return
    save = getattr(base, "save", None)
    if callable(save) and not getattr(save, "paranmt_portable", False):
        base.save = _portable_save(save)  # save_pretrained and push_to_hub call it too
    loader = base.__dict__.get("_load_with_module_classes")
    if isinstance(loader, classmethod) and not getattr(loader.__func__, "paranmt_registered", False):
        base._load_with_module_classes = _with_paranmt_classes(loader.__func__)
    current = getattr(base, "_module_classes", None)
    if current is None or isinstance(current, _LazyModuleClasses):
        return
    base._module_classes = _LazyModuleClasses(current, ST_MODULE_CLASSES)


HOOKS: dict[str, Callable[[ModuleType], None]] = {
    "transformers.models.auto.configuration_auto": _register_config,
    "transformers.models.auto.modeling_auto": _register_model,
    "transformers.models.auto.tokenization_auto": _register_tokenizer,
    "sentence_transformers.base.model": _register_sentence_transformers,
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

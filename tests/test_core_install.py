"""An install with only the ``torch`` extra (``pip install "paranmt_hf[torch]"``) builds, saves and loads models.

(The core alone, without torch, embeds with ``StaticEncoder``: ``tests/test_static_encoder.py``.)

The check runs in a fresh interpreter where every distribution of setup.cfg's extras, and everything those pull in
that the core does not, is hidden by a meta-path blocker: ``import scipy`` raises ``ModuleNotFoundError`` and
``importlib.util.find_spec("scipy")`` is ``None``, as when it is not installed (transformers' probes for optional
packages then answer as they would there).
"""

from __future__ import annotations

import configparser
import importlib.metadata as metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _requirements(lines: str) -> list[str]:
    names = []
    for line in lines.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("%"):
            names.append(canonicalize_name(Requirement(line).name))
    return names


def _closure(names: list[str]) -> set[str]:
    """``names`` and every installed distribution they require (without extras), transitively."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    return seen


def optional_modules() -> list[str]:
    """Top-level modules of the distributions that only setup.cfg's extras bring (not the core's requirements, nor
    the torch extra's)."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "setup.cfg")
    core = _closure(_requirements(cfg["options"]["install_requires"])
                    + _requirements(cfg["options.extras_require"]["torch"]))
    extras = [name for value in cfg["options.extras_require"].values() for name in _requirements(value)]
    optional = _closure(extras) - core
    modules = {module for module, dists in metadata.packages_distributions().items()
               if module.isidentifier() and {canonicalize_name(d) for d in dists} <= optional}
    return sorted(modules)


CORE_ONLY = textwrap.dedent(
    """
    import importlib.util, json, sys

    BLOCKED = frozenset(json.loads(sys.argv[1]))

    class Hide:
        '''Wraps a meta-path finder: blocked top-level packages are not found (as if not installed).'''

        def __init__(self, inner):
            self.inner = inner

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                return None
            return self.inner.find_spec(name, path, target)

        def __getattr__(self, attr):
            return getattr(self.inner, attr)

    sys.meta_path[:] = [Hide(finder) for finder in sys.meta_path]

    import numpy as np

    from paranmt_hf import ParaNMTEncoder, build_encoder

    corpus = ["a man plays the guitar .", "someone is playing a guitar .", "two dogs run in the snow ."] * 3
    texts = ["a man plays guitar .", "dogs in the snow", "unseen words here"]
    out = {}
    for kind in ("word", "trigram"):
        encoder = build_encoder(kind, corpus, embedding_dim=8)
        directory = sys.argv[2] + "/" + kind
        encoder.save_pretrained(directory)
        loaded = ParaNMTEncoder.from_pretrained(directory)
        out[kind] = {"diff": float(np.abs(loaded.encode(texts) - encoder.encode(texts)).max()),
                     "shape": list(loaded.encode(texts).shape)}
    probe = "sentence_transformers"
    try:
        __import__(probe)
        out["blocker"] = "importable"
    except ModuleNotFoundError:
        out["blocker"] = "blocked" if importlib.util.find_spec(probe) is None else "found"
    print("RESULT " + json.dumps(out))
    """
)


def test_core_install_builds_saves_and_loads(tmp_path: Path) -> None:
    blocked = optional_modules()
    assert {"sentence_transformers", "datasets", "scipy", "mteb", "onnx", "onnxruntime", "sentencepiece",
            "accelerate", "pyarrow", "matplotlib"} <= set(blocked)
    assert not {"torch", "transformers", "tokenizers", "numpy", "safetensors", "huggingface_hub"} & set(blocked)
    script = tmp_path / "core_only.py"
    script.write_text(CORE_ONLY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, str(script), json.dumps(blocked), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert result.pop("blocker") == "blocked"  # the blocker works: sentence-transformers is not found
    assert result == {kind: {"diff": 0.0, "shape": [3, 8]} for kind in ("word", "trigram")}
    for kind in ("word", "trigram"):  # the sentence-transformers layout is written without sentence-transformers
        assert (tmp_path / kind / "modules.json").is_file() and (tmp_path / kind / "model.safetensors").is_file()

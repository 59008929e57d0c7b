"""Check that a folder is a complete, pickle-free Hub repository of a ParaNMT model (every loader's files)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ST_FILES = ("modules.json", "paranmt_st_config.json", "config_sentence_transformers.json")
"""The sentence-transformers files at the root of a model folder."""
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".joblib")
"""Files that may hold pickles (arbitrary code on load): never published."""


def _read_json(path: Path, problems: list[str]) -> Any:
    if not path.is_file():
        problems.append(f"missing {path.name}")
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        problems.append(f"{path.name} is not valid JSON: {err}")
        return None


def _check_auto_map(folder: Path, auto_map: dict[str, Any], problems: list[str]) -> None:
    for cls, ref in auto_map.items():
        for name in ref if isinstance(ref, list) else [ref]:
            if name and not (folder / f"{name.split('--')[-1].rsplit('.', 1)[0]}.py").is_file():
                problems.append(f"auto_map {cls} -> {name}: its remote-code file is missing")


def _check_sentence_transformers(folder: Path, problems: list[str]) -> None:
    modules = _read_json(folder / "modules.json", problems)
    for name in ST_FILES[1:]:
        if not (folder / name).is_file():
            problems.append(f"missing {name} (sentence-transformers)")
    for module in modules or []:
        if module.get("path") and not (folder / module["path"]).is_dir():
            problems.append(f"modules.json names the missing folder {module['path']!r}")
        ref = str(module.get("type", ""))
        if "." in ref and not ref.startswith("sentence_transformers."):
            code = folder / module.get("path", "") / f"{ref.rsplit('.', 1)[0]}.py"
            if not code.is_file():
                problems.append(f"modules.json names {ref!r}, whose file {code.name} is missing")
    static = folder / "static"
    if static.is_dir():
        for name in ("modules.json", "model.safetensors", "tokenizer.json"):
            if not (static / name).is_file():
                problems.append(f"missing static/{name} (StaticEmbedding copy)")


def check_hub_folder(
    folder: str | os.PathLike[str], require_st: bool = False, require_eval: bool = False
) -> list[str]:
    """Every problem that keeps ``folder`` from being a complete Hub model repository (empty list: none).

    Args:
        folder: the folder to check.
        require_st: the sentence-transformers files must be there.
        require_eval: evaluation JSON must be there (under ``results/``).
    """
    from ..modeling.tokenization_paranmt import VOCAB_FILES_NAMES

    root = Path(folder)
    problems: list[str] = []
    config = _read_json(root / "config.json", problems)
    if config is not None:
        if config.get("model_type") != "paranmt":
            problems.append(f"config.json model_type is {config.get('model_type')!r}, not 'paranmt'")
        auto_map = config.get("auto_map") or {}
        if not {"AutoConfig", "AutoModel"} <= set(auto_map):
            problems.append("config.json has no auto_map for AutoConfig and AutoModel (remote code)")
        _check_auto_map(root, auto_map, problems)
    index = root / "model.safetensors.index.json"
    if index.is_file():
        shards = set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values())
        problems += [f"missing weight shard {s}" for s in sorted(shards) if not (root / s).is_file()]
    elif not (root / "model.safetensors").is_file():
        problems.append("missing model.safetensors")
    tokenizer_config = _read_json(root / "tokenizer_config.json", problems)
    if tokenizer_config is not None:
        tok_map = tokenizer_config.get("auto_map") or {}
        _check_auto_map(root, tok_map, problems)
        needed = VOCAB_FILES_NAMES["vocab_file"] if "AutoTokenizer" in tok_map else "tokenizer.json"
        if not (root / needed).is_file():
            problems.append(f"missing {needed} (tokenizer)")
    if require_st or (root / "modules.json").is_file():
        _check_sentence_transformers(root, problems)
    if not (root / "README.md").is_file():
        problems.append("missing README.md (model card)")
    if require_eval and not any((root / "results").rglob("*.json")):
        problems.append("missing the evaluation JSON under results/")
    pickled = [str(p.relative_to(root)) for p in root.rglob("*") if p.suffix in PICKLE_SUFFIXES]
    if pickled:
        problems.append(f"pickle-based files are not allowed: {pickled}")
    return problems

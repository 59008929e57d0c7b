"""Content hashes of files, computed once per version of a file.

:func:`file_sha256` hashes a file's whole content. The answer is remembered in the user cache
(``<cache>/content-hashes/``), keyed on the file's identity *and* its status-change time (``ctime``): ``cp -p`` and
``rsync -a`` preserve size and modification time but cannot preserve ``ctime``, and writing a file always updates
it, so a changed file is always hashed again while an unchanged one costs a ``stat``. Used for the training-data
cache key (:func:`paranmt_hf.dataset_scripts.loading.file_signature`), the resume check of a training run and the
model records of evaluation results.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from pathlib import Path

CHUNK = 1 << 20
MEMO_DIR = "content-hashes"


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's content (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _memo_path(path: Path, info: os.stat_result) -> Path | None:
    from .paths import cache_dir

    identity = f"{path}\0{info.st_dev}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}"
    try:
        return cache_dir() / MEMO_DIR / hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()
    except (OSError, RuntimeError):  # no home folder
        return None


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's content, remembered per version of the file (see the module docstring)."""
    real = Path(os.path.realpath(path))
    before = os.stat(real)
    memo = _memo_path(real, before)
    if memo is not None:
        with contextlib.suppress(OSError):
            cached = memo.read_text(encoding="ascii").strip()
            if len(cached) == 64:
                return cached
    digest = sha256_file(real)
    after = os.stat(real)
    unchanged = (before.st_size, before.st_mtime_ns, before.st_ctime_ns) == (
        after.st_size, after.st_mtime_ns, after.st_ctime_ns)
    if memo is not None and unchanged:  # a file written while it was read is not remembered
        with contextlib.suppress(OSError):
            memo.parent.mkdir(parents=True, exist_ok=True)
            tmp = memo.with_name(f".{memo.name}.{uuid.uuid4().hex[:8]}")
            tmp.write_text(digest + "\n", encoding="ascii")
            os.replace(tmp, memo)
    return digest


MODEL_FILE_SUFFIXES = (".safetensors", ".bin", ".pt", ".onnx", ".model")
"""Weight and tokenizer-model files, in any subfolder of a model folder (``static/``, sentence-transformers')."""
MODEL_FILE_NAMES = ("config.json", "tokenizer.json", "tokenizer_config.json", "paranmt_tokenizer.json",
                    "special_tokens_map.json", "added_tokens.json", "modules.json", "vocab.txt",
                    "sentence_bert_config.json", "config_sentence_transformers.json", "paranmt_st_config.json")
"""Configuration and tokenizer files that decide what a model computes."""
NOT_MODEL_FOLDERS = ("checkpoints", "initial-model", "results")
"""Subfolders of a model folder that are not the model (a training run's, evaluation results), skipped when a
damaged file is looked for (:mod:`paranmt_hf.utils.integrity`)."""


def _module_folders(base: Path) -> set[str]:
    """Subfolders of a model folder that hold part of the model: ``static/`` and the modules ``modules.json`` names."""
    import json

    folders = {"static"}
    try:
        modules = json.loads((base / "modules.json").read_text(encoding="utf-8"))
        folders.update(str(m.get("path") or "").strip("/") for m in modules if isinstance(m, dict))
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return {f for f in folders if f}


def model_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The files of a model folder that decide what it computes (weights, configuration, tokenizer), sorted.

    Every file named in :data:`MODEL_FILE_NAMES` or ending in :data:`MODEL_FILE_SUFFIXES` at the top of
    ``directory``, in ``static/`` and in the module folders its ``modules.json`` names (a README, a training summary,
    checkpoints, evaluation results or an export written into another subfolder are not model files). Empty for a
    folder that does not exist. Works for paranmt_hf, sentence-transformers and model2vec folders.
    """
    base = Path(directory)
    if not base.is_dir():
        return []
    found = [p for p in base.iterdir() if p.is_file() and not p.name.startswith(".")]
    for folder in sorted(_module_folders(base)):
        if (base / folder).is_dir():
            found += [p for p in (base / folder).rglob("*") if p.is_file() and not p.name.startswith(".")]
    return sorted(p for p in found if p.name in MODEL_FILE_NAMES or p.suffix in MODEL_FILE_SUFFIXES)


def model_fingerprint(directory: str | os.PathLike[str]) -> str:
    """A sha256 of what a model folder computes with: ``(relative path, sha256)`` of its :func:`model_files`.

    A README, a training summary or evaluation results written next to the model do not change it.

    Raises:
        FileNotFoundError: ``directory`` is not a folder, or holds no model file.
    """
    base = Path(directory)
    if not base.is_dir():
        raise FileNotFoundError(f"model folder {base} not found")
    entries = [f"{path.relative_to(base).as_posix()}\0{file_sha256(path)}" for path in model_files(base)]
    if not entries:
        raise FileNotFoundError(f"{base} holds no model file (config.json, weights, tokenizer)")
    return hashlib.sha256("\n".join(sorted(entries)).encode("utf-8")).hexdigest()


def model_record(directory: str | os.PathLike[str]) -> dict[str, str]:
    """Which model a result came from: ``{"path": resolved folder, "sha256": model_fingerprint(folder)}``."""
    return {"path": str(Path(directory).resolve()), "sha256": model_fingerprint(directory)}

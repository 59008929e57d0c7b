"""A translation model resolved once, identified by its content, and copied once to storage the run names.

The scale commands translate with a model that every task must load identically, wherever it runs.
:func:`resolve_translation_model` turns what the user gave into a :class:`ResolvedModel`: a local folder stays
itself; a Hub id is resolved once, in the submitting process, to a commit and its files fetched. Its
:attr:`~ResolvedModel.sha256` hashes the files that decide what it computes (:func:`model_files`); modification
times and paths never key anything (within a process the hash of an unchanged file is remembered).

:func:`prepare_copy` copies those files into ``<destination>/<sha256[:20]>/model`` (atomically, checked against
the hash), the folder every task reads, so a model replaced in place after the run started changes nothing the
tasks see. The CTranslate2 conversion goes next to it
(:func:`paranmt_hf.corpus.translation.ctranslate2_engine.converted_model`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...utils.atomic import atomic_output
from ...utils.content_hash import sha256_file
from ...utils.imports import require
from .transformers_engine import TranslationModelError, resolve_model

MODEL_SUFFIXES = (".safetensors", ".bin", ".json", ".model", ".spm", ".txt", ".py", ".vocab", ".tiktoken")
"""Files of a translation model folder that decide what it computes (weights, configuration, tokenizer, code)."""
PREPARED_RECORD = "paranmt_hf_prepared.json"
"""The record :func:`prepare_copy` writes next to the copied files (not part of the model's content)."""
HUB_PATTERNS = tuple(f"*{suffix}" for suffix in MODEL_SUFFIXES)
"""The files fetched from the Hub (no TensorFlow / Flax / Rust weights, no README)."""
DIGEST_CHARS = 20
"""Hex characters of the content hash in folder names (80 bits)."""

_MEMO: dict[tuple[str, int, int, int, int, int], str] = {}


@dataclass(frozen=True)
class ResolvedModel:
    """A translation model, pinned.

    Attributes:
        name: what the user gave (a folder or a Hub id), for messages and records.
        folder: the local folder of its files (the folder itself, or the Hub snapshot of ``revision``).
        revision: the Hub commit of a Hub id (None for a local folder).
        sha256: the content hash of its :func:`model_files` (:func:`model_sha256`).
    """

    name: str
    folder: Path
    revision: str | None
    sha256: str

    @property
    def digest(self) -> str:
        """The first :data:`DIGEST_CHARS` hex characters of :attr:`sha256` (folder names)."""
        return self.sha256[:DIGEST_CHARS]

    def record(self) -> dict[str, str | None]:
        """``{"model", "revision", "sha256"}``: what a run records of its model."""
        return {"model": self.name, "revision": self.revision, "sha256": self.sha256}


def model_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The files of a translation model folder that decide what it computes, sorted by name.

    The regular files (or links to them, as in a Hub snapshot) at the top of ``folder`` ending in
    :data:`MODEL_SUFFIXES`; hidden files and :data:`PREPARED_RECORD` are not part of the model.
    """
    base = Path(folder)
    return sorted((p for p in base.iterdir() if p.is_file() and not p.name.startswith(".")
                   and p.name.endswith(MODEL_SUFFIXES) and p.name != PREPARED_RECORD), key=lambda p: p.name)


def file_sha256(path: Path) -> str:
    """sha256 of a file's content, streamed; remembered in this process per (path, device, inode, size, times)."""
    real = os.path.realpath(path)
    info = os.stat(real)
    key = (real, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    found = _MEMO.get(key)
    if found is None:
        found = sha256_file(real)
        after = os.stat(real)
        if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == key[3:]:  # not written while read
            _MEMO[key] = found
    return found


def model_sha256(folder: str | os.PathLike[str]) -> str:
    r"""The content hash of a model folder: sha256 over ``name\0sha256(content)`` of each of its :func:`model_files`.

    Raises:
        TranslationModelError: no model file in ``folder``.
    """
    files = model_files(folder)
    if not files:
        raise TranslationModelError(f"{folder} holds no model file (config.json, weights, tokenizer)")
    lines = "".join(f"{p.name}\0{file_sha256(p)}\n" for p in files)
    return hashlib.sha256(lines.encode("utf-8", "surrogateescape")).hexdigest()


def _hub_snapshot(repo_id: str, revision: str | None) -> Path:
    """The local snapshot of ``repo_id`` at ``revision`` (downloaded if needed; offline: the cached one)."""
    hub = require("huggingface_hub", "translate")
    return Path(hub.snapshot_download(repo_id, revision=revision, allow_patterns=list(HUB_PATTERNS)))


def _hub_commit(repo_id: str, revision: str | None) -> str:
    """The commit ``revision`` (a branch, tag or commit) of ``repo_id`` points at, from the Hub."""
    hub = require("huggingface_hub", "translate")
    return str(hub.model_info(repo_id, revision=revision).sha)


hub_snapshot: Callable[[str, str | None], Path] = _hub_snapshot
"""How a Hub id becomes a local folder (replaceable, e.g. by tests)."""
hub_commit: Callable[[str, str | None], str] = _hub_commit
"""How a Hub revision becomes a commit when the snapshot folder's name is not one (replaceable)."""
_COMMIT = re.compile(r"[0-9a-f]{40}")


def resolve_translation_model(model: str | os.PathLike[str], revision: str | None = None) -> ResolvedModel:
    """Pin ``model`` (a folder or a Hub id at ``revision``) and hash its content (see the module docstring).

    Raises:
        TranslationModelError: a local path that is not a model folder, a Hub id that cannot be fetched, a
            revision given for a local folder, or a folder without model files.
    """
    name = resolve_model(model)
    if Path(name).is_dir():
        if revision is not None:
            raise TranslationModelError(f"{name} is a local folder: a revision ({revision}) names a Hub commit")
        return ResolvedModel(name, Path(name), None, model_sha256(name))
    try:
        folder = Path(hub_snapshot(name, revision))
    except Exception as err:  # noqa: BLE001 - offline, unknown repo, network: one message
        raise TranslationModelError(f"cannot find {name} locally or on the Hub: {err}") from None
    commit = folder.name if _COMMIT.fullmatch(folder.name) else None
    if commit is None:
        try:
            commit = hub_commit(name, revision)
        except Exception as err:  # noqa: BLE001
            raise TranslationModelError(f"cannot find which commit of {name} to use: {err}") from None
    return ResolvedModel(name, folder, commit, model_sha256(folder))


def prepare_copy(model: ResolvedModel, destination: str | os.PathLike[str]) -> Path:
    """The copy of ``model``'s files under ``destination`` (made once; reused when its content is the same).

    ``<destination>/<digest>/model``: the :func:`model_files` copied (links followed), checked against
    ``model.sha256`` after the copy, and a :data:`PREPARED_RECORD` naming where they came from.

    Raises:
        TranslationModelError: the files changed while they were copied (their hash is not ``model.sha256``).
    """
    target = Path(destination) / model.digest / "model"
    if (target / PREPARED_RECORD).is_file() and model_sha256(target) == model.sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(target, directory=True, overwrite=True, wait=600.0) as tmp:
        for path in model_files(model.folder):
            shutil.copyfile(path, Path(tmp) / path.name)
        found = model_sha256(tmp)
        if found != model.sha256:
            raise TranslationModelError(f"the files of {model.name} changed while they were copied (sha256 "
                                        f"{model.sha256[:12]}… before, {found[:12]}… now): run the command again")
        (Path(tmp) / PREPARED_RECORD).write_text(json.dumps(model.record(), indent=2) + "\n", encoding="utf-8")
    return target

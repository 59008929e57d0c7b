"""Where a model named on the command line lives: a local folder, or a Hub id fetched into the Hub's cache.

A name that is a folder is that folder. Any other name is a Hub id (``org/name``, optionally ``@REVISION``: a branch,
tag or commit), fetched with ``huggingface_hub.snapshot_download`` into the Hub's cache (``HF_HUB_CACHE``; offline,
with ``HF_HUB_OFFLINE=1``, the cached snapshot). The snapshot's folder is named by the commit it holds, so the
revision a command used is known (:func:`hub_commit_of`). A name that is neither is one sentence
(``FileNotFoundError``), never the Hub client's traceback: :func:`hub_error` words it, for this resolver and for every
loader that takes a Hub id (``ParaNMTEncoder``, ``StaticEncoder``, a subword tokenizer's ``--from``, a teacher).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..utils.exception_chain import exception_chain

_COMMIT = re.compile(r"[0-9a-f]{40}")


def split_revision(name: str, revision: str | None = None) -> tuple[str, str | None]:
    """``"org/name@rev"`` -> ``("org/name", "rev")``; an explicit ``revision`` wins over none in the name.

    Raises:
        ValueError: the name and ``revision`` both give one, and they differ.
    """
    repo_id, at, in_name = name.partition("@")
    if not at:
        return name, revision
    if revision is not None and revision != in_name:
        raise ValueError(f"{name} names revision {in_name!r} and --model-revision {revision!r}: give one")
    return repo_id, in_name


def not_found(name: str, why: str) -> FileNotFoundError:
    """The one sentence of a model name that is neither a folder here nor a model the Hub gave."""
    return FileNotFoundError(f"{name} is not a folder here, and {why}: check the name (a folder path, or a Hub id "
                             "such as org/name[@revision])")


def locate_model(name: str | os.PathLike[str], revision: str | None = None) -> Path:
    """The local folder of model ``name``: the folder itself, or the Hub snapshot of a Hub id at ``revision``.

    Raises:
        FileNotFoundError: a local-looking path that is not a folder, or a Hub id that the Hub (or, offline, its
            cache) does not have or cannot be reached for; one sentence saying which.
        ValueError: a revision given for a local folder.
    """
    from ..utils.integrity import check_model_path
    from ..utils.paths import looks_local

    path = Path(name).expanduser()
    if path.is_dir() or isinstance(name, os.PathLike) or looks_local(name):
        if revision is not None:
            raise ValueError(f"--model-revision {revision} is for a Hub id; {name} is a local folder")
        check_model_path(name)  # a missing local path is named (a folder set aside by a killed swap is put back)
        return path
    return _hub_snapshot(str(name), revision)


def _hub_snapshot(name: str, revision: str | None) -> Path:
    import huggingface_hub

    repo_id, revision = split_revision(name, revision)
    try:
        return Path(huggingface_hub.snapshot_download(repo_id, revision=revision))
    except Exception as err:
        said = hub_error(name, err, revision)
        if said is None and isinstance(err, OSError):  # a connection error of the Hub client
            said = not_found(name, f"the Hub could not be reached ({_first_line(err)})")
        if said is None:
            raise
        raise said from None


def hub_error(name: str, err: BaseException, revision: str | None = None) -> FileNotFoundError | None:
    """The one sentence (:func:`not_found`) of an error the Hub client raised fetching ``name``; None for others.

    The Hub client's error may be ``err`` or, when a library (transformers, model2vec) wrapped it, in its chain of
    causes; every loader that takes a Hub id says the same sentence for the same failure.
    """
    from huggingface_hub import constants, errors

    for cause in exception_chain(err):
        if isinstance(cause, errors.HFValidationError):
            return not_found(name, "it is not a valid Hub id")
        if isinstance(cause, errors.RevisionNotFoundError):
            return not_found(name, f"the Hub's {split_revision(name)[0]} has no revision {revision!r}")
        if isinstance(cause, errors.RepositoryNotFoundError):
            return not_found(name, "the Hub has no model by that name (or it is private: log in with `hf auth "
                                   "login`)")
        if isinstance(cause, errors.OfflineModeIsEnabled) or \
                (isinstance(cause, errors.LocalEntryNotFoundError) and constants.HF_HUB_OFFLINE):
            return not_found(name, "it is not in the Hub's local cache (HF_HUB_OFFLINE=1: the Hub was not asked)")
        if isinstance(cause, errors.LocalEntryNotFoundError):
            return not_found(name, "the Hub could not be reached and its local cache does not hold it")
        if isinstance(cause, errors.EntryNotFoundError):
            return not_found(name, f"the Hub's {split_revision(name)[0]} lacks a file ({_first_line(cause)})")
        if type(cause).__module__.startswith(("huggingface_hub", "httpx", "requests", "urllib3")):
            return not_found(name, f"the Hub could not be reached ({_first_line(cause)})")
    return None


@contextmanager
def hub_failure_said(name: str, revision: str | None = None) -> Iterator[None]:
    """Around a library's load of ``name`` (a folder or a Hub id): the Hub's failure as :func:`hub_error` says it.

    Errors of a local folder, and errors that are not the Hub's, pass unchanged.
    """
    try:
        yield
    except Exception as err:
        said = None if os.path.isdir(name) else hub_error(name, err, revision)
        if said is None:
            raise
        raise said from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0].rstrip(".") if text else type(err).__name__


def hub_commit_of(folder: str | os.PathLike[str]) -> str | None:
    """The commit of a Hub snapshot folder (``.../snapshots/<commit>``), None for any other folder."""
    path = Path(folder)
    return path.name if path.parent.name == "snapshots" and _COMMIT.fullmatch(path.name) else None

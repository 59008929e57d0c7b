"""Fetch missing evaluation sets (``paranmt-hf eval --download``) with the sources of :mod:`paranmt_hf.fetch`.

Folders (below the data directory's ``eval`` folder, as the readers name them): ``sts/STS12-en-test`` ...
``sts/STS16-en-test``, ``sts/STSBenchmark``, ``sts/STS17``, ``tatoeba``, ``simlex``. URLs, mirrors and checksums
are those of :mod:`paranmt_hf.fetch.registry` (the one list the project has); downloads are resumable and
verified, and recorded in the data directory's ``SOURCES.json``, exactly as ``paranmt-hf data fetch`` does.
"""

from __future__ import annotations

from pathlib import Path


class DataUnavailableError(FileNotFoundError):
    """The evaluation data is neither on disk nor downloadable (offline, or the source moved)."""


def download_folder(root: Path, folder: str, timeout: float = 60.0, progress: bool = False) -> Path:
    """Download and install one evaluation folder (``"sts/STS12-en-test"``, ..., ``"tatoeba"``) below ``root``.

    ``root`` is the ``eval`` folder of a data directory (or a folder holding ``sts/`` and ``tatoeba/`` directly);
    the downloads and their record go to the data directory (``root``'s parent when ``root`` is named ``eval``).

    Raises:
        KeyError: no source installs ``folder``.
        DataUnavailableError: offline, or the source failed its checks.
    """
    from ..fetch import DownloadError, UnpinnedError, UnreachableError
    from ..fetch.pipeline import DataFetcher
    from ..fetch.registry import EVAL_FOLDERS, SOURCES

    if folder not in EVAL_FOLDERS:
        raise KeyError(f"no download source known for {folder!r}; known: {sorted(EVAL_FOLDERS)}")
    root = Path(root)
    dest = root.parent if root.name == "eval" else root
    target = root / folder
    fetcher = DataFetcher(dest, timeout=timeout, progress=progress)
    try:
        fetcher.install_eval(SOURCES[EVAL_FOLDERS[folder]], target=target)
    except UnreachableError as err:
        raise DataUnavailableError(
            f"could not download {folder} ({err}). You are probably offline: put the data in place yourself and "
            "pass --data-dir (or set PARANMT_HF_DATA), or run `paranmt-hf data fetch` where there is internet."
        ) from err
    except (DownloadError, UnpinnedError) as err:
        raise DataUnavailableError(f"could not install {folder}: {err}") from err
    return target


def ensure_data(root: Path, folders: list[str], download: bool = False) -> None:
    """Check the task's folders exist below ``root``; download the missing ones when ``download`` is true.

    Raises:
        DataUnavailableError: a folder is missing and ``download`` is false (the message says how to fix it).
    """
    missing = [f for f in folders if not (Path(root) / f).is_dir()]
    if missing and not download:
        raise DataUnavailableError(
            f"evaluation data missing under {root}: {missing}. Pass --data-dir (or set PARANMT_HF_DATA) to a folder "
            "holding eval/sts and eval/tatoeba, --download to fetch them from their public sources, or run "
            "`paranmt-hf data fetch`."
        )
    for folder in missing:
        download_folder(Path(root), folder)

"""Fetch the evaluation sets from their canonical public sources into the local data layout (when online).

Layout written under ``<data_dir>/eval`` (the one the readers expect): ``sts/STS12-en-test`` ... ``sts/STS16-en-test``,
``sts/STSBenchmark``, ``sts/STS17``, ``tatoeba/``. Sources: the SemEval STS wiki archives (the URLs SentEval's
``get_transfer_data.bash`` uses), the SemEval-2017 task 1 site and LASER's GitHub copy of the Tatoeba test sets.
"""

from __future__ import annotations

import logging
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from .tatoeba_data import TATOEBA_LANGS

logger = logging.getLogger(__name__)

STS_URLS: dict[str, list[str]] = {
    "sts/STS12-en-test": ["http://ixa2.si.ehu.es/stswiki/images/4/40/STS2012-en-test.zip"],
    "sts/STS13-en-test": ["http://ixa2.si.ehu.es/stswiki/images/2/2f/STS2013-en-test.zip"],
    "sts/STS14-en-test": ["http://ixa2.si.ehu.es/stswiki/images/8/8c/STS2014-en-test.zip"],
    "sts/STS15-en-test": ["http://ixa2.si.ehu.es/stswiki/images/d/da/STS2015-en-test.zip"],
    "sts/STS16-en-test": ["http://ixa2.si.ehu.es/stswiki/images/9/98/STS2016-en-test.zip"],
    "sts/STSBenchmark": ["http://ixa2.si.ehu.es/stswiki/images/4/48/Stsbenchmark.tar.gz"],
    "sts/STS17": [
        "http://alt.qcri.org/semeval2017/task1/data/uploads/sts2017.eval.v1.1.zip",
        "http://alt.qcri.org/semeval2017/task1/data/uploads/sts2017.gs.zip",
    ],
}
TATOEBA_URL = "https://raw.githubusercontent.com/facebookresearch/LASER/main/data/tatoeba/v1/tatoeba.{pair}.{side}"
# PRAS's own bundle of the same STS sets (STS17 in a different, 3-column layout): kept for reference.
PRAS_STS_ZIP = "http://www.cs.cmu.edu/~jwieting/STS.zip"

_STS_FILE = re.compile(r"^STS(?:\d{4})?\.(input|gs)\.(.+\.txt)$")


class DataUnavailableError(FileNotFoundError):
    """The evaluation data is neither on disk nor downloadable (offline, or the source moved)."""


def _fetch(url: str, dest: Path, timeout: float) -> None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(dest, "wb") as out:  # noqa: S310
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError) as err:
        raise DataUnavailableError(
            f"could not download {url} ({err}). You are probably offline: put the data in place yourself and pass "
            "--data-dir (or set PARANMT_HF_DATA)."
        ) from err


def _extract(archive: Path, into: Path) -> None:
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tf:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12 / 3.11.4: refuse unsafe members
                tf.extractall(into, filter="data")
            else:  # pragma: no cover - old interpreters
                tf.extractall(into)  # noqa: S202


def _install_sts_files(extracted: Path, target: Path) -> int:
    """Copy STS input/gold files (renaming ``STS2016.input.x.txt`` to ``STS.input.x.txt``) and STS-B csv files."""
    copied = 0
    for path in extracted.rglob("*"):
        if not path.is_file():
            continue
        match = _STS_FILE.match(path.name)
        if match:
            shutil.copy(path, target / f"STS.{match.group(1)}.{match.group(2)}")
            copied += 1
        elif re.fullmatch(r"sts-(train|dev|test)\.csv|readme\.txt|LICENSE\.txt", path.name):
            shutil.copy(path, target / path.name)
            copied += 1
    return copied


def download_folder(root: Path, folder: str, timeout: float = 60.0) -> Path:
    """Download one data folder (``"sts/STS12-en-test"``, ..., ``"tatoeba"``) below ``root`` (the ``eval`` folder).

    Raises:
        DataUnavailableError: offline or the source is gone.
    """
    target = root / folder
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        if folder == "tatoeba":
            for lang in TATOEBA_LANGS:
                for side in (lang, "eng"):
                    name = f"tatoeba.{lang}-eng.{side}"
                    _fetch(TATOEBA_URL.format(pair=f"{lang}-eng", side=side), tmp_dir / name, timeout)
                    shutil.move(tmp_dir / name, target / name)
            return target
        if folder not in STS_URLS:
            raise KeyError(f"no download source known for {folder!r}")
        for url in STS_URLS[folder]:
            archive = tmp_dir / url.rsplit("/", 1)[-1]
            logger.info("downloading %s", url)
            _fetch(url, archive, timeout)
            _extract(archive, tmp_dir / "x")
        if not _install_sts_files(tmp_dir / "x", target):
            raise DataUnavailableError(f"the archives for {folder} held no STS files: the source layout changed")
    return target


def ensure_data(root: Path, folders: list[str], download: bool = False) -> None:
    """Check the task's folders exist below ``root``; download the missing ones when ``download`` is true.

    Raises:
        DataUnavailableError: a folder is missing and ``download`` is false (the message says how to fix it).
    """
    missing = [f for f in folders if not (root / f).is_dir()]
    if missing and not download:
        raise DataUnavailableError(
            f"evaluation data missing under {root}: {missing}. Pass --data-dir (or set PARANMT_HF_DATA) to a folder "
            "holding eval/sts and eval/tatoeba, or --download to fetch them from their public sources."
        )
    for folder in missing:
        download_folder(root, folder)

"""Install the evaluation sets from their downloaded archives into the layout the readers expect.

Each installer streams the members it needs to disk byte for byte (each held to a size limit, see
:mod:`.archives`) (renaming only ``STS2016.*`` to ``STS.*``, as SentEval's
data script does) plus the archive's readme / licence files, then checks the folder with the project's own readers,
so a source whose format changed fails here (with the file and line) instead of in an evaluation later.

Folder names and dataset lists come from :mod:`paranmt_hf.data.sts` and
:mod:`paranmt_hf.data.tatoeba` (one source of truth with the readers).
"""

from __future__ import annotations

import functools
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from ..data import sts, tatoeba
from .archives import Archive, ArchiveError

_DOCS = re.compile(r"(?i)(^00-readme|^readme|licen[cs]e)")


def _copy_docs(archive: Archive, out: Path, skip: set[str]) -> None:
    """Copy readme / licence members not copied yet (the first archive's copy wins)."""
    for name in archive.members:
        if _DOCS.search(name) and name not in skip and not (out / name).exists():
            archive.copy(name, out / name)


def _first_member(archive: Archive, names: list[str]) -> str:
    for name in names:
        if archive.has(name):
            return name
    raise ArchiveError(f"{archive.path} has none of {names}: the source's layout changed")


def install_sts_year(year: str, files: list[Path], out: Path) -> None:
    """SemEval ``year`` (``"STS12"`` ... ``"STS16"``): ``STS.input/gs.<dataset>.txt`` + readme/licence files."""
    _, datasets = sts.STS_YEARS[year]
    full_year = "20" + year[3:]
    copied: set[str] = set()
    with Archive(files[0]) as archive:
        for dataset in datasets:
            for kind in ("input", "gs"):
                name = _first_member(archive, [f"STS.{kind}.{dataset}.txt", f"STS{full_year}.{kind}.{dataset}.txt"])
                archive.copy(name, out / f"STS.{kind}.{dataset}.txt")
                copied.add(name)
        _copy_docs(archive, out, copied)
    sts.load_sts_year(out.parent, year)  # same checks as an evaluation


def install_stsb(files: list[Path], out: Path) -> None:
    """STS Benchmark: ``sts-train.csv``, ``sts-dev.csv``, ``sts-test.csv`` + readme/licence."""
    with Archive(files[0]) as archive:
        names = list(sts.STSB_SPLITS.values())
        for name in names:
            archive.copy(name, out / name)
        _copy_docs(archive, out, set(names))
    for split in sts.STSB_SPLITS:
        sts.load_stsb(out.parent, split)


def install_sts17(files: list[Path], out: Path) -> None:
    """SemEval-2017: inputs from the first archive, gold scores from the second; readme/licence from both."""
    with Archive(files[0]) as inputs, Archive(files[1]) as gold:
        copied = set()
        for stem in sts.STS17_TRACKS:
            for archive, kind in ((inputs, "input"), (gold, "gs")):
                name = f"STS.{kind}.{stem}.txt"
                archive.copy(name, out / name)
                copied.add(name)
        _copy_docs(inputs, out, copied)
        _copy_docs(gold, out, copied)
    sts.load_sts17(out.parent)


def install_tatoeba(files: list[Path], out: Path) -> None:
    """LASER's Tatoeba test files, copied under their own names."""
    for path in files:
        shutil.copyfile(path, out / path.name)
    tatoeba.load_tatoeba(out, list(tatoeba.TATOEBA_LANGS))


def install_simlex(files: list[Path], out: Path) -> None:
    """SimLex-999: ``SimLex-999.txt`` (999 pairs) and ``README.txt``."""
    from ..data.simlex import read_simlex

    with Archive(files[0]) as archive:
        archive.copy("SimLex-999.txt", out / "SimLex-999.txt")
        _copy_docs(archive, out, {"SimLex-999.txt"})
    rows = read_simlex(str(out / "SimLex-999.txt"))
    if len(rows) != 999:
        raise ArchiveError(f"{files[0]}: SimLex-999.txt holds {len(rows)} pairs, expected 999")


INSTALLERS: dict[str, Callable[[list[Path], Path], None]] = {
    **{year.lower(): functools.partial(install_sts_year, year) for year in sts.STS_YEARS},
    "stsb": install_stsb,
    "sts17": install_sts17,
    "tatoeba": install_tatoeba,
    "simlex": install_simlex,
}
"""Source name -> ``installer(downloaded_files, output_folder)``; the folder's name is the layout's."""

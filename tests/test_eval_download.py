"""The download path, without the network: archive unpacking into the reader layout, and the offline error."""

from __future__ import annotations

import shutil
import urllib.error
import zipfile

import pytest

from paranmt_hf.evaluation import download, load_sts_year


def test_archive_is_installed_in_reader_layout(data_dir, tmp_path, monkeypatch):
    # an archive shaped like the SemEval 2016 one (STS2016.* names in a sub-folder), made from the real files
    real = data_dir / "eval" / "sts" / "STS16-en-test"
    archive = tmp_path / "STS2016-en-test.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in real.glob("STS.*.txt"):
            zf.write(path, f"sts2016-english-with-gs-v1.0/{path.name.replace('STS.', 'STS2016.', 1)}")
    monkeypatch.setattr(download, "_fetch", lambda url, dest, timeout: shutil.copy(archive, dest))
    root = tmp_path / "eval"
    download.ensure_data(root, ["sts/STS16-en-test"], download=True)
    got = load_sts_year(root / "sts", "STS16")
    want = load_sts_year(data_dir / "eval" / "sts", "STS16")
    assert [(d.name, len(d), d.scores) for d in got] == [(d.name, len(d), d.scores) for d in want]


def test_offline_gives_a_clear_error(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(download.urllib.request, "urlopen", refuse)
    with pytest.raises(download.DataUnavailableError, match="offline.*--data-dir"):
        download.ensure_data(tmp_path, ["tatoeba"], download=True)
    with pytest.raises(KeyError):
        download.download_folder(tmp_path, "sts/unknown")

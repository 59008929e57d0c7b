"""``paranmt-hf eval --download``: the registry's sources installed into the reader layout, and the offline error."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from _fetch_server import SourceServer, eval_files, served_paths, unpinned_registry

from paranmt_hf.evaluation import download, load_sts_year, load_tatoeba


@pytest.fixture
def eval_server(data_dir, monkeypatch):
    unpinned_registry(monkeypatch)
    server = SourceServer(served_paths(eval_files(data_dir)))
    monkeypatch.setenv("PARANMT_HF_MIRROR", server.url)
    yield server
    server.close()


@pytest.mark.data
def test_missing_folders_are_installed_in_reader_layout(data_dir, tmp_path, eval_server):
    root = tmp_path / "data" / "eval"
    download.ensure_data(root, ["sts/STS16-en-test", "tatoeba"], download=True)
    got = load_sts_year(root / "sts", "STS16")
    want = load_sts_year(data_dir / "eval" / "sts", "STS16")
    assert [(d.name, len(d), d.scores) for d in got] == [(d.name, len(d), d.scores) for d in want]
    assert len(load_tatoeba(root / "tatoeba")) == 7
    record = json.loads((tmp_path / "data" / "SOURCES.json").read_text())  # same record as `data fetch`
    assert {"sts16", "tatoeba"} <= set(record["sources"])
    assert record["remotes"]["tatoeba/tatoeba.spa-eng.spa"]["checksum"] == "pinned"
    requests = len(eval_server.requests)
    download.ensure_data(root, ["sts/STS16-en-test", "tatoeba"], download=True)  # present: nothing downloaded
    assert len(eval_server.requests) == requests


def test_offline_gives_a_clear_error(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    with pytest.raises(download.DataUnavailableError, match="offline.*--data-dir"):
        download.ensure_data(tmp_path, ["tatoeba"], download=True)
    with pytest.raises(download.DataUnavailableError, match="--download.*paranmt-hf data fetch"):
        download.ensure_data(tmp_path, ["tatoeba"], download=False)
    with pytest.raises(KeyError):
        download.download_folder(tmp_path, "sts/unknown")


@pytest.mark.data
def test_download_into_a_new_data_dir_uses_the_standard_layout(tmp_path, eval_server):
    from paranmt_hf.evaluation.tasks import eval_root

    new = tmp_path / "fresh"  # what `paranmt-hf eval --download` gets on a machine without data
    download.ensure_data(eval_root(new), ["simlex"], download=True)
    assert (new / "eval" / "simlex" / "SimLex-999.txt").is_file()
    assert eval_root(new) == new / "eval"
    flat = tmp_path / "flat"  # a folder holding sts/ and tatoeba/ directly keeps working
    (flat / "tatoeba").mkdir(parents=True)
    assert eval_root(flat) == flat

"""``paranmt-hf data fetch`` against a local HTTP server that serves every source in its real format.

The served files are built from the shared data (see tests/_fetch_server.py), so a fetch must reproduce
``../shared/data``: the evaluation folders byte for byte, the training files pair for pair (with the planted
evaluation sentences and duplicates removed). No test touches the network.
"""

from __future__ import annotations

import gzip
import json
import socket
from pathlib import Path

import pytest
from _fetch_server import (
    SICK_PLANTED,
    SourceServer,
    eval_files,
    planted_sentences,
    remote_by_key,
    served_paths,
    server_path,
    train_files,
    unpinned_registry,
)

from paranmt_hf.cli.main import main
from paranmt_hf.fetch import (
    ChecksumError,
    DownloadError,
    FetchFailed,
    UnpinnedError,
    UnreachableError,
    fetch_data,
    registry,
    verify_checksums,
)
from paranmt_hf.fetch.decontaminate import normalize
from paranmt_hf.fetch.pipeline import DataFetcher


@pytest.fixture(scope="module")
def unpinned():
    patch = pytest.MonkeyPatch()
    unpinned_registry(patch)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def served(data_dir, unpinned) -> dict[str, bytes]:
    """Remote key -> bytes of every source."""
    return {**eval_files(data_dir), **train_files(data_dir)}


@pytest.fixture
def server(served):
    srv = SourceServer(served_paths(served))
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def fetched(served, tmp_path_factory):
    """One full fetch (everything) from the local server."""
    srv = SourceServer(served_paths(served))
    dest = tmp_path_factory.mktemp("fetch") / "data"
    report = fetch_data(dest, mirror=srv.url, progress=False)
    yield dest, report, srv
    srv.close()


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _pairs(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes())


# ------------------------------------------------------------------------------------------- full reproduction
@pytest.mark.data
def test_fetch_reproduces_the_shared_layout_and_counts(fetched, data_dir):
    dest, report, _ = fetched
    assert _files(dest / "eval") == _files(data_dir / "eval")
    for name in _files(data_dir / "eval"):
        assert (dest / "eval" / name).read_bytes() == (data_dir / "eval" / name).read_bytes(), name
    train = {n for n in _files(data_dir / "train") if n.endswith(".gz")}
    assert {n for n in _files(dest / "train") if n.endswith(".gz")} == train
    for name in train:
        assert _pairs(dest / "train" / name) == _pairs(data_dir / "train" / name), name
    shared_stats = json.loads((data_dir / "train" / "STATS.json").read_text())
    stats = json.loads((dest / "train" / "STATS.json").read_text())
    assert {k: v["pairs"] for k, v in stats.items()} == {k: v["pairs"] for k, v in shared_stats.items()}
    assert sorted(report.built) == sorted([*(o for s in registry.EVAL_SOURCES for o in s.outputs),
                                           *(f"train/{n}" for n in train)])


@pytest.mark.data
def test_planted_evaluation_sentences_and_duplicates_are_removed(fetched, data_dir):
    dest, _, _ = fetched
    stats = json.loads((dest / "train" / "STATS.json").read_text())
    de = stats["train/bitext/tatoeba-en-de.tsv.gz"]
    assert (de["removed_eval"], de["removed_duplicate"]) == (2, 1)  # STS-B sentence + SICK sentence; a duplicate
    assert stats["train/paranmt5m-sample-10k.tsv.gz"]["removed_eval"] == 1
    assert stats["train/flickr30k-caption-pairs.tsv.gz"]["removed_eval"] > 0
    planted = {normalize(s) for s in [*planted_sentences(data_dir), SICK_PLANTED]}
    for path in (dest / "train").rglob("*.gz"):
        for line in _pairs(path).decode().splitlines():
            assert not planted & {normalize(side) for side in line.split("\t")}, (path, line)


@pytest.mark.data
def test_records_sources_licences_and_checksums(fetched):
    dest, _, _ = fetched
    record = json.loads((dest / "SOURCES.json").read_text())
    assert set(record["sources"]) == set(registry.SOURCES)
    assert all(entry["licence"] for entry in record["sources"].values())
    assert record["remotes"]["tatoeba/tatoeba.fra-eng.fra"]["checksum"] == "pinned"
    assert record["remotes"]["sts/STS2012-en-test.zip"]["checksum"] == "first-use"
    assert len(record["remotes"]["sts/STS2012-en-test.zip"]["sha256"]) == 64
    result = verify_checksums(dest)
    assert not result["changed"] and not result["missing"] and len(result["ok"]) == len(
        [p for p in _files(dest) if p.startswith(("eval/", "train/"))])


@pytest.mark.data
def test_second_fetch_keeps_everything_and_downloads_nothing(fetched):
    dest, _, srv = fetched
    before = len(srv.requests)
    report = fetch_data(dest, mirror=srv.url, progress=False)
    assert report.built == [] and len(srv.requests) == before
    assert "train/flickr30k-caption-pairs.tsv.gz" in report.kept


@pytest.mark.data
def test_verify_command_detects_a_changed_file(fetched, tmp_path, capsys):
    import shutil

    dest, _, _ = fetched
    copy = tmp_path / "copy"
    shutil.copytree(dest, copy, ignore=shutil.ignore_patterns(".downloads"))
    assert main(["data", "verify", str(copy)]) == 0
    (copy / "eval" / "simlex" / "README.txt").write_text("edited\n")
    assert main(["data", "verify", str(copy)]) == 1
    assert "changed: eval/simlex/README.txt" in capsys.readouterr().out


@pytest.mark.data
def test_a_fetch_repairs_a_tampered_folder_instead_of_recording_it(fetched, tmp_path, capsys):
    """CHECKSUMS.sha256 records what was built; a fetch re-installs what fails verification."""
    import shutil

    dest, _, srv = fetched
    copy = tmp_path / "copy"
    shutil.copytree(dest, copy)
    recorded = (copy / "CHECKSUMS.sha256").read_text()
    year = copy / "eval" / "sts" / "STS12-en-test"
    original_input = (year / "STS.input.MSRpar.txt").read_bytes()
    original_gold = (year / "STS.gs.SMTeuroparl.txt").read_bytes()
    (year / "STS.input.MSRpar.txt").write_bytes(original_input.replace(b"the", b"THE", 5))
    (year / "STS.gs.SMTeuroparl.txt").unlink()
    (copy / "train" / "flickr30k-caption-pairs.tsv.gz").write_bytes(b"not the built file")
    assert main(["data", "verify", str(copy)]) == 1
    report = fetch_data(copy, mirror=srv.url, progress=False)
    assert sorted(report.built) == ["eval/sts/STS12-en-test", "train/flickr30k-caption-pairs.tsv.gz"]
    assert (year / "STS.input.MSRpar.txt").read_bytes() == original_input  # restored from the verified download
    assert (year / "STS.gs.SMTeuroparl.txt").read_bytes() == original_gold
    assert (copy / "CHECKSUMS.sha256").read_text() == recorded  # the record of the build, not of the tampering
    capsys.readouterr()
    assert main(["data", "verify", str(copy)]) == 0
    assert "changed" not in capsys.readouterr().out


@pytest.mark.data
def test_a_folder_that_cannot_be_repaired_stays_flagged(fetched, tmp_path):
    import shutil

    dest, _, _ = fetched
    copy = tmp_path / "copy"
    shutil.copytree(dest, copy, ignore=shutil.ignore_patterns(".downloads"))
    simlex = copy / "eval" / "simlex" / "SimLex-999.txt"
    text = simlex.read_text()
    simlex.write_text(text.replace("old\tnew", "old\tnewer", 1))
    assert simlex.read_text() != text
    with pytest.raises((UnreachableError, FetchFailed)):  # no download to rebuild it from, offline
        fetch_data(copy, mirror="http://127.0.0.1:9", progress=False, retries=1, timeout=2)
    assert verify_checksums(copy)["changed"] == ["eval/simlex/SimLex-999.txt"]  # never recorded as it is now


# ------------------------------------------------------------------------------------ resume, checksums, offline
@pytest.mark.data
def test_resumes_after_the_connection_drops_mid_file(server, data_dir, tmp_path):
    key = "sts/STS2016-en-test.zip"
    path = server_path(remote_by_key(key).urls[0])
    server.drop_once.add(path)
    fetcher = DataFetcher(tmp_path / "d", mirror=server.url, progress=False)
    fetcher.downloader.backoff = 0.0
    fetcher.install_eval(registry.SOURCES["sts16"])
    ranges = [rng for p, rng in server.requests if p == path]
    assert ranges[0] is None and ranges[1] is not None and ranges[1].startswith("bytes=")  # resumed, not restarted
    assert int(ranges[1][6:-1]) == len(server.files[path]) // 2
    for f in (data_dir / "eval" / "sts" / "STS16-en-test").iterdir():
        assert (tmp_path / "d" / "eval" / "sts" / "STS16-en-test" / f.name).read_bytes() == f.read_bytes()


@pytest.mark.data
def test_a_server_that_ignores_ranges_gets_a_fresh_download(server, data_dir, tmp_path):
    path = server_path(remote_by_key("tatoeba/tatoeba.fra-eng.fra").urls[0])
    server.drop_once.add(path)
    server.ignore_range.add(path)
    fetcher = DataFetcher(tmp_path, mirror=server.url, progress=False)
    fetcher.downloader.backoff = 0.0
    fetcher.install_eval(registry.SOURCES["tatoeba"])  # pinned checksum: a half file appended to would fail it
    assert [rng is not None for p, rng in server.requests if p == path] == [False, True]
    assert (tmp_path / "eval" / "tatoeba" / "tatoeba.fra-eng.fra").read_bytes() == (
        data_dir / "eval" / "tatoeba" / "tatoeba.fra-eng.fra").read_bytes()


@pytest.mark.data
def test_resumes_in_the_next_run(server, tmp_path):
    key = "simlex/SimLex-999.zip"
    path = server_path(remote_by_key(key).urls[0])
    server.drop_once.add(path)
    fetcher = DataFetcher(tmp_path, mirror=server.url, progress=False, retries=1)
    with pytest.raises(DownloadError, match="run again to resume"):
        fetcher.install_eval(registry.SOURCES["simlex"])
    assert (tmp_path / ".downloads" / "simlex" / "SimLex-999.zip.part").is_file()
    assert not (tmp_path / "eval" / "simlex").exists()
    DataFetcher(tmp_path, mirror=server.url, progress=False).install_eval(registry.SOURCES["simlex"])
    assert [rng for p, rng in server.requests if p == path][-1] == f"bytes={len(server.files[path]) // 2}-"
    assert (tmp_path / "eval" / "simlex" / "SimLex-999.txt").is_file()


@pytest.mark.data
def test_a_corrupted_download_is_rejected(server, tmp_path):
    # pinned checksum (LASER's files): a flipped byte is refused, nothing is installed
    path = server_path(remote_by_key("tatoeba/tatoeba.fra-eng.fra").urls[0])
    data = bytearray(server.files[path])
    data[100] ^= 0x20
    server.files[path] = bytes(data)
    with pytest.raises(ChecksumError, match=r"tatoeba.fra-eng.fra: .*sha256 .*expected .*pinned"):
        DataFetcher(tmp_path, mirror=server.url, progress=False).install_eval(registry.SOURCES["tatoeba"])
    assert not (tmp_path / "eval" / "tatoeba").exists()
    assert not list((tmp_path / ".downloads").rglob("tatoeba.fra-eng.fra*"))


@pytest.mark.data
def test_a_changed_source_is_rejected_after_first_use(server, tmp_path):
    fetch_data(tmp_path, only="eval", mirror=server.url, progress=False)
    path = server_path(remote_by_key("sts/STS2012-en-test.zip").urls[0])
    server.files[path] = server.files[path][:-40] + b"\0" * 40
    import shutil

    shutil.rmtree(tmp_path / "eval" / "sts" / "STS12-en-test")
    (tmp_path / ".downloads" / "sts" / "STS2012-en-test.zip").unlink()
    with pytest.raises(FetchFailed, match="1 source.*sts12: .*recorded on first use") as failed:
        fetch_data(tmp_path, only="eval", mirror=server.url, progress=False)
    assert isinstance(failed.value.failures["sts12"], ChecksumError)
    assert not (tmp_path / "eval" / "sts" / "STS12-en-test").exists()


@pytest.mark.data
def test_strict_refuses_files_without_a_known_checksum(server, tmp_path):
    with pytest.raises(FetchFailed, match="--verify strict") as failed:
        fetch_data(tmp_path, only="eval", verify="strict", mirror=server.url, progress=False)
    assert isinstance(failed.value.failures["sts12"], UnpinnedError)
    assert set(failed.value.failures) == {"sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sts17", "simlex"}
    assert (tmp_path / "eval" / "tatoeba").is_dir()  # pinned: accepted
    assert all("/tatoeba." in p or "/README.md" in p for p, _ in server.requests)  # nothing unpinned downloaded


@pytest.mark.data
def test_a_failing_source_leaves_the_rest_and_a_copy_given_by_hand_completes_it(fetched, served, data_dir,
                                                                                   tmp_path):
    import shutil

    dest = tmp_path / "data"
    shutil.copytree(fetched[0], dest)
    for name in ("flickr30k-caption-pairs.tsv.gz", "bitext/multi30k-en-cs.tsv.gz"):
        (dest / "train" / name).unlink()
    key = "multi30k/task2/raw/train.3.en.gz"
    (dest / ".downloads" / key).unlink()
    files = served_paths(served)
    del files[server_path(remote_by_key(key).urls[0])]  # one upstream file is gone
    server = SourceServer(files)
    try:
        with pytest.raises(FetchFailed, match=r"flickr30k: .*HTTP 404.*--file KEY=PATH") as failed:
            fetch_data(dest, mirror=server.url, progress=False)
        assert set(failed.value.failures) == {"flickr30k"}
        assert (dest / "train" / "bitext" / "multi30k-en-cs.tsv.gz").is_file()  # built after the failure
        assert not (dest / "train" / "flickr30k-caption-pairs.tsv.gz").exists()
        copy = tmp_path / "by-hand.gz"
        copy.write_bytes(served[key])
        requests = len(server.requests)
        assert main(["data", "fetch", "--dest", str(dest), "--mirror", server.url, "--no-progress",
                     "--file", f"{key}={copy}"]) == 0
        assert len(server.requests) == requests  # the missing file came from --file, the rest from .downloads
    finally:
        server.close()
    assert _pairs(dest / "train" / "flickr30k-caption-pairs.tsv.gz") == _pairs(
        data_dir / "train" / "flickr30k-caption-pairs.tsv.gz")
    assert json.loads((dest / "SOURCES.json").read_text())["remotes"][key]["url"].startswith("file://")
    assert verify_checksums(dest)["changed"] == []
    with pytest.raises(ValueError, match="unknown download key"):
        fetch_data(dest, files={"nope.zip": copy})


def test_offline_stops_at_once_with_what_to_do(tmp_path, capsys, monkeypatch):
    import urllib.request

    import paranmt_hf.fetch.http as fetch_http

    with socket.socket() as sock:  # a port nobody listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    opened, waits = [], []
    real_urlopen = urllib.request.urlopen

    def counting_urlopen(request, *args, **kwargs):
        opened.append(getattr(request, "full_url", request))
        return real_urlopen(request, *args, **kwargs)

    monkeypatch.setattr(fetch_http.urllib.request, "urlopen", counting_urlopen)
    monkeypatch.setattr(fetch_http.time, "sleep", waits.append)  # at once: no retry waits (not wall time)
    with pytest.raises(UnreachableError):
        fetch_data(tmp_path / "a", mirror=f"http://127.0.0.1:{port}", progress=False)
    first = len(opened)
    with pytest.raises(SystemExit, match=r"offline.*PARANMT_HF_DATA=DIR"):
        main(["data", "fetch", "--dest", str(tmp_path / "b"), "--mirror", f"http://127.0.0.1:{port}",
              "--no-progress"])
    assert waits == [] and 1 <= first <= 2 and len(opened) - first == first, opened
    assert not (tmp_path / "a" / "eval").exists()


@pytest.mark.data
def test_google_drive_warning_page_is_followed(server, tmp_path):
    remote = remote_by_key("paranmt/para-nmt-5m-processed.zip")
    path = server_path(remote.urls[0])
    confirm = "/drive.usercontent.google.com/download?id=x&confirm=t"
    server.files[confirm] = server.files[path]
    server.html_first[path] = confirm
    _, got = DataFetcher(tmp_path, mirror=server.url, progress=False).download(remote)
    assert got.path.read_bytes() == server.files[path]
    assert [p for p, _ in server.requests] == [path, confirm]
    # an HTML page that is not the warning page is never taken for the file
    server.files[path] = b"<html>quota exceeded</html>"
    with pytest.raises(DownloadError, match="HTML page"):
        DataFetcher(tmp_path / "other", mirror=server.url, progress=False).download(remote)


@pytest.mark.data
def test_cli_fetch_eval_only(server, tmp_path, capsys):
    assert main(["data", "fetch", "--dest", str(tmp_path), "--only", "eval", "--mirror", server.url,
                 "--no-progress"]) == 0
    assert "built 9 outputs" in capsys.readouterr().out
    assert (tmp_path / "eval" / "sts" / "STS17" / "README.txt").read_bytes() != b""
    assert not (tmp_path / "train").exists()

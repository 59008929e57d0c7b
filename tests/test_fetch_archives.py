"""Archive members are streamed with a size limit: a zip bomb costs neither memory nor disk."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import pytest

from paranmt_hf.fetch import archives
from paranmt_hf.fetch.archives import Archive, ArchiveError
from paranmt_hf.fetch.installers import install_sts_year
from paranmt_hf.fetch.train_sets import anki_pairs

BOMB = 64 << 20  # 64 MiB of one byte: a ~64 KB download


def _bomb(path: Path, member: str, size: int = BOMB, newline: bool = True) -> Path:
    line = b"x" * 1023 + b"\n" if newline else b"x" * 1024
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open(member, "w", force_zip64=True) as out:
            for _ in range(size // len(line)):
                out.write(line)
    assert path.stat().st_size < size // 100
    return path


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
    except (ArchiveError, ValueError):
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_an_installed_member_is_streamed_and_held_to_its_limit(tmp_path, monkeypatch):
    archive = _bomb(tmp_path / "sts12.zip", "test-gold/STS.input.MSRpar.txt")
    out = tmp_path / "STS12-en-test"
    out.mkdir()
    monkeypatch.setattr(archives, "MAX_COPY_BYTES", 8 << 20)
    with pytest.raises(ArchiveError, match=r"STS.input.MSRpar.txt declares 67,108,864 bytes, more than the 8,388,608"):
        install_sts_year("STS12", [archive], out)
    assert _peak(lambda: install_sts_year("STS12", [archive], out)) < 8 << 20  # was the whole member: 64 MiB


def test_a_large_member_is_copied_in_blocks(tmp_path):
    archive = _bomb(tmp_path / "big.zip", "big.txt")
    with Archive(archive) as zf:
        assert _peak(lambda: zf.copy("big.txt", tmp_path / "big.txt")) < 8 << 20
    assert (tmp_path / "big.txt").stat().st_size == BOMB


def test_a_member_that_delivers_more_than_its_limit_is_stopped(tmp_path):
    archive = _bomb(tmp_path / "big.zip", "big.txt")
    with Archive(archive) as zf:
        zf.sizes["big.txt"] = 10  # a header that lies about its size (zipfile itself stops at the declared size)
        with pytest.raises(ArchiveError, match="holds more than 1,000 bytes"), zf.open("big.txt", limit=1000) as f:
            f.read()


def test_a_member_declaring_too_many_bytes_is_refused_before_reading(tmp_path, monkeypatch):
    archive = _bomb(tmp_path / "x.zip", "SimLex-999.txt")
    monkeypatch.setattr(archives, "MAX_READ_BYTES", 1 << 20)
    with Archive(archive) as zf:
        with pytest.raises(ArchiveError, match=r"declares 67,108,864 bytes, more than the 1,048,576 allowed"):
            zf.read("SimLex-999.txt")
        with pytest.raises(ArchiveError, match="declares"), zf.open("SimLex-999.txt", limit=1000):
            pass


def test_a_line_without_end_is_refused_at_a_bounded_size(tmp_path):
    archive = _bomb(tmp_path / "spa-eng.zip", "spa.txt", newline=False)
    with pytest.raises(ValueError, match=r"spa.txt: line 1 is longer than 1,048,576 bytes"):
        list(anki_pairs(archive, "spa.txt"))
    assert _peak(lambda: list(anki_pairs(archive, "spa.txt"))) < 8 << 20  # was the whole line: 64 MiB


def test_small_members_still_read_and_copy(tmp_path):
    path = tmp_path / "ok.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("dir/readme.txt", "hello\n")
    with Archive(path) as archive:
        assert archive.read("readme.txt") == b"hello\n"
        archive.copy("readme.txt", tmp_path / "readme.txt")
    assert (tmp_path / "readme.txt").read_bytes() == b"hello\n"

"""The non-streaming cache of load_paranmt follows the files, not their names (issue: stale training data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.training.data import load_pairs


def _pairs(path: Path, n: int, tag: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{tag} sentence {i}\t{tag} paraphrase {i}\n" for i in range(n)), encoding="utf-8")
    return path


def test_same_relative_name_in_two_folders_is_two_corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    _pairs(tmp_path / "x" / "train.tsv", 10, "x")
    _pairs(tmp_path / "y" / "train.tsv", 4, "y")
    monkeypatch.chdir(tmp_path / "x")
    first = load_paranmt("pairs", "train.tsv", streaming=False, cache_dir=str(cache))
    monkeypatch.chdir(tmp_path / "y")
    second = load_paranmt("pairs", "train.tsv", streaming=False, cache_dir=str(cache))
    assert len(first) == 10 and len(second) == 4
    assert second[0]["text_a"] == "y sentence 0"
    assert len(load_pairs(["train.tsv"])) == 4  # what `paranmt-hf train --train train.tsv` reads


def test_file_edited_in_place_is_read_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = _pairs(tmp_path / "train.tsv", 6, "old")
    assert len(load_paranmt("pairs", str(path), streaming=False, cache_dir=str(cache))) == 6
    stat = path.stat()
    _pairs(path, 6, "new")  # same size and line count: only the content changed
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    again = load_paranmt("pairs", str(path), streaming=False, cache_dir=str(cache))
    assert again[0]["text_a"] == "new sentence 0"


def test_unchanged_file_reuses_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = _pairs(tmp_path / "train.tsv", 6, "same")
    load_paranmt("pairs", str(path), streaming=False, cache_dir=str(cache))
    prepared = sorted(p.name for p in cache.rglob("*.arrow"))
    load_paranmt("pairs", str(path), streaming=False, cache_dir=str(cache))
    assert sorted(p.name for p in cache.rglob("*.arrow")) == prepared and prepared


def test_a_copy_that_keeps_size_and_mtime_is_read_again(tmp_path: Path) -> None:
    """``cp -p`` / ``rsync -a`` of another corpus over the file keep its size and modification time."""
    import shutil

    cache = tmp_path / "cache"
    path = _pairs(tmp_path / "train.tsv", 6, "old")
    assert load_paranmt("pairs", str(path), streaming=False, cache_dir=str(cache))[0]["text_a"] == "old sentence 0"
    other = _pairs(tmp_path / "other" / "train.tsv", 6, "new")  # same size
    os.utime(other, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))
    shutil.copy2(other, path)  # cp -p: content replaced, size and mtime as before
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (other.stat().st_size, other.stat().st_mtime_ns)
    again = load_paranmt("pairs", str(path), streaming=False, cache_dir=str(cache))
    assert again[0]["text_a"] == "new sentence 0"

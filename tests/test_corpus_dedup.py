"""`corpus dedup` on files: external hash sort at bounded memory, same answers as the in-memory set."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from paranmt_hf.corpus import dedup as dedup_module
from paranmt_hf.corpus.dedup import dedup_files, dedup_records
from paranmt_hf.corpus.pipeline import RunSettings
from paranmt_hf.data.reader import Shard
from paranmt_hf.data.records import iter_records


def _corpus(path: Path, n: int = 5000, seed: int = 0) -> Path:
    rng = random.Random(seed)
    lines = [f"sentence {rng.randint(0, n // 3)}\tparaphrase {rng.randint(0, 3)}\t0.{rng.randint(0, 2)}\n"
             for _ in range(n)]
    lines[17] = "bad line without tabs\n"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _run(path: Path, settings: RunSettings, **kwargs: object) -> tuple[list[str], object]:
    chunks: list[bytes] = []
    summary = dedup_files([path], chunks.append, settings, **kwargs)
    return b"".join(chunks).decode().splitlines(), summary


@pytest.mark.parametrize(("keep", "key"), [("first", "pair"), ("none", "pair"), ("first", "line"), ("none", "line")])
def test_same_lines_as_the_in_memory_dedup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: str,
                                           key: str) -> None:
    path = _corpus(tmp_path / "in.tsv")
    monkeypatch.setattr(dedup_module, "_BUCKET_BUFFER", 7)  # spill to the bucket files many times
    got, summary = _run(path, RunSettings(processes=2, block_bytes=4000, progress=False), keep=keep, key=key)

    def records() -> list[dict]:
        return [rec for _, _, rec in iter_records([path], "pairs")]

    kept = list(dedup_records(records, keep=keep, key=key))
    expected = [f"{r['text_a']}\t{r['text_b']}\t{r['score']!r}" for r in kept]
    assert [f"{a}\t{b}\t{float(s)!r}" for a, b, s in (line.split("\t") for line in got)] == expected
    assert summary.counts["kept"] == len(expected) and summary.report.total_bad == 1
    assert summary.counts["kept"] + summary.counts["duplicate"] == 4999


def test_hash_shards_union_is_the_whole_output(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "in.tsv", seed=1)
    whole, _ = _run(path, RunSettings(processes=1, progress=False))
    parts = [_run(path, RunSettings(processes=1, shard=Shard(i, 3), progress=False))[0] for i in range(3)]
    assert sorted(line for part in parts for line in part) == sorted(whole)
    assert all(part for part in parts)
    order = {line: i for i, line in enumerate(whole)}
    assert all([order[x] for x in part] == sorted(order[x] for x in part) for part in parts)  # input order


def test_temporary_buckets_are_removed(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "in.tsv")
    temp = tmp_path / "tmp"
    temp.mkdir()
    _run(path, RunSettings(processes=1, progress=False), temp_dir=temp)
    assert list(temp.iterdir()) == []

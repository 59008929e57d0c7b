"""`corpus dedup` on files: external hash sort at bounded memory, exact across tasks, same answers as the in-memory
set."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from paranmt_hf.corpus.pipeline.runner import RunOptions
from paranmt_hf.corpus.selection import dedup as dedup_module
from paranmt_hf.corpus.selection.dedup import dedup_files, dedup_records
from paranmt_hf.data.records import iter_records


def _corpus(path: Path, n: int = 5000, seed: int = 0) -> Path:
    rng = random.Random(seed)
    lines = [f"sentence {rng.randint(0, n // 3)}\tparaphrase {rng.randint(0, 3)}\t0.{rng.randint(0, 2)}\n"
             for _ in range(n)]
    lines[17] = "bad line without tabs\n"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _run(path: Path, out: Path, run: RunOptions, **kwargs: object) -> tuple[list[str], object]:
    summary = dedup_files([path], out, run, **kwargs)
    return out.read_text(encoding="utf-8").splitlines(), summary


@pytest.mark.parametrize(("keep", "key"), [("first", "pair"), ("none", "pair"), ("first", "line"), ("none", "line")])
def test_same_lines_as_the_in_memory_dedup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: str,
                                           key: str) -> None:
    path = _corpus(tmp_path / "in.tsv")
    monkeypatch.setattr(dedup_module, "_BUCKET_BUFFER", 7)  # spill to the bucket files many times
    got, summary = _run(path, tmp_path / "out.tsv", RunOptions(workers=1, tasks=3, chunk_bytes=4000, progress=False),
                        keep=keep, key=key)

    def records() -> list[dict]:
        return [rec for _, _, rec in iter_records([path], "pairs")]

    kept = list(dedup_records(records, keep=keep, key=key))
    expected = [f"{r['text_a']}\t{r['text_b']}\t{r['score']!r}" for r in kept]
    assert [f"{a}\t{b}\t{float(s)!r}" for a, b, s in (line.split("\t") for line in got)] == expected
    assert summary.counts["kept"] == len(expected) and summary.report.total_bad == 1
    assert summary.counts["kept"] + summary.counts["duplicate"] == 4999


def test_any_number_of_tasks_gives_the_one_task_output(tmp_path: Path) -> None:
    # the duplicates are global: a pair's first copy in one task removes its copies in every other task
    path = _corpus(tmp_path / "in.tsv", seed=1)
    whole, _ = _run(path, tmp_path / "one.tsv", RunOptions(workers=1, tasks=1, progress=False))
    for tasks in (2, 5):
        split, summary = _run(path, tmp_path / f"{tasks}.tsv",
                              RunOptions(workers=2, tasks=tasks, chunk_bytes=3000, progress=False))
        assert split == whole and summary.tasks == tasks
    assert len(whole) < 4999


def test_the_work_folder_is_removed(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "in.tsv")
    work = tmp_path / "work"
    _run(path, tmp_path / "out.tsv", RunOptions(workers=1, progress=False, work_dir=str(work)))
    assert not work.exists()


def test_a_corpus_command_called_from_python_leaves_the_sigterm_handler_as_it_was(tmp_path: Path) -> None:
    """The CLI unwinds on SIGTERM while it runs; called in-process (``main([...])``), it puts the caller's handler
    back, so processes the caller forks later (a Pool's workers) still die when terminated."""
    import signal

    from paranmt_hf.cli.main import main

    before = signal.getsignal(signal.SIGTERM)
    src = _corpus(tmp_path / "in.tsv", n=50)
    assert main(["corpus", "dedup", str(src), "-o", str(tmp_path / "out.tsv"), "--quiet"]) == 0
    assert signal.getsignal(signal.SIGTERM) is before

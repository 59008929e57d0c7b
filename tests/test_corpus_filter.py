"""`corpus filter` at scale: the same rows as the builder and as the papers' per-line filter, on any number of
processes or shards; progress, a summary, and outputs that are atomic and never replace an input."""

from __future__ import annotations

import gzip
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _synthetic import BAD_LINES, write_synthetic_paranmt

from paranmt_hf import load_paranmt
from paranmt_hf.cli.main import main
from paranmt_hf.corpus.measures.overlap import ngram_overlap
from paranmt_hf.corpus.text.langid import LanguageIdentifier
from paranmt_hf.corpus.text.tokens import nltk_word_tokenize_reference


@pytest.fixture(scope="module")
def corpus(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,500 realistic para-nmt-50m.txt lines (real ParaNMT text, detokenised, scored; foreign lines) and a bad line
    of every kind."""
    path = write_synthetic_paranmt(tmp_path_factory.mktemp("corpus") / "para-nmt-50m.txt", 1500, data_dir, seed=3)
    with open(path, "ab") as f:
        f.write(b"".join(BAD_LINES))
    return path


def reference_filter(path: Path) -> list[tuple[str, str, float, float]]:
    """The PRAS filter as the original scripts apply it, line by line: nltk.word_tokenize overlap, fastText lid."""
    lid = LanguageIdentifier()
    kept = []
    for raw in path.read_bytes().split(b"\n")[:-1]:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        fields = line.split("\t")
        if len(fields) != 3 or "\x00" in line or not fields[0].strip() or not fields[1].strip():
            continue
        try:
            score = float(fields[2])
        except ValueError:
            continue
        ref, para = fields[0], fields[1]
        if not math.isfinite(score) or not 0.4 <= score <= 1.0:
            continue
        if not 5 <= (len(ref.split()) + len(para.split())) / 2 <= 40:
            continue
        overlap = ngram_overlap(nltk_word_tokenize_reference(ref.strip().lower()),
                                nltk_word_tokenize_reference(para.strip().lower()))
        if overlap > 0.7 or lid.labels_many([ref, para]) != ["en", "en"]:
            continue
        kept.append((ref, para, score, overlap))
    return kept


def _rows(path: Path) -> list[list[str]]:
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return [line.split("\t") for line in data.decode("utf-8").splitlines()]


@pytest.mark.data
def test_filter_keeps_exactly_the_rows_of_the_papers_filter_and_of_the_builder(corpus: Path, tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "filtered.tsv"
    assert main(["corpus", "filter", str(corpus), "-o", str(out), "--with-overlap", "--workers", "2", "--tasks", "3",
                 "--chunk-bytes", "20000"]) == 0
    got = [(r[0], r[1], float(r[2]), float(r[3])) for r in _rows(out)]
    expected = reference_filter(corpus)
    assert len(expected) > 500
    assert got == expected
    builder = list(load_paranmt("filtered", str(corpus)))
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    assert [(r["reference"], r["paraphrase"], r["paraphrase_score"], r["trigram_overlap"]) for r in builder] == [
        (a, b, f32(s), f32(o)) for a, b, s, o in expected]
    summary = capsys.readouterr().err
    assert f"{len(expected):,} kept" in summary and "score" in summary and "language" in summary
    assert "bad (" in summary and "NUL byte" in summary


@pytest.mark.data
def test_one_or_two_processes_and_gzip_give_the_same_output(corpus: Path, tmp_path: Path) -> None:
    one, two, gz = tmp_path / "one.tsv", tmp_path / "two.tsv", tmp_path / "two.tsv.gz"
    base = ["corpus", "filter", str(corpus), "--quiet", "--no-language-filter"]
    assert main([*base, "-o", str(one), "--workers", "1"]) == 0
    assert main([*base, "-o", str(two), "--workers", "2", "--tasks", "4", "--chunk-bytes", "20000"]) == 0
    assert main([*base, "-o", str(gz), "--workers", "2", "--tasks", "4", "--chunk-bytes", "20000"]) == 0
    assert one.read_bytes() == two.read_bytes() and len(one.read_bytes()) > 1000
    assert gzip.decompress(gz.read_bytes()) == one.read_bytes()


@pytest.mark.data
@pytest.mark.parametrize("command", [
    ["filter", "--no-language-filter"],
    ["annotate", "--format", "paranmt", "--tokenizer", "whitespace"],
    ["dedup", "--format", "paranmt"],
])
def test_tasks_run_separately_merge_into_the_one_task_output(corpus: Path, tmp_path: Path,
                                                             command: list[str]) -> None:
    name, *options = command
    whole, split = tmp_path / "whole.tsv.gz", tmp_path / "split.tsv.gz"
    assert main(["corpus", name, str(corpus), "-o", str(whole), "--quiet", "--tasks", "1", *options]) == 0
    args = ["corpus", name, str(corpus), "-o", str(split), "--quiet", "--tasks", "2", "--local-tasks", "1",
            "--chunk-bytes", "30000", *options]
    assert main([*args, "--local-rank-offset", "1"]) == 0  # as on two machines sharing the folder
    assert not split.exists()  # written once every task is done
    if name != "dedup":  # (dedup's first stage only hashes: the run that completes it writes every task's part)
        parts = sorted((tmp_path / ".split.tsv.gz.paranmt-work" / "parts").glob("*.tsv.gz"))
        assert [p.name for p in parts] == ["00001.tsv.gz"] and _rows(parts[0])
    assert main(["corpus", "merge", "-o", str(split)]) == 1 and not split.exists()  # task 0 is not done
    assert main([*args, "--local-rank-offset", "0"]) == 0  # the last task done: the output is written
    assert gzip.decompress(split.read_bytes()) == gzip.decompress(whole.read_bytes())  # dedup too: global, in order
    assert not (tmp_path / ".split.tsv.gz.paranmt-work").exists()


@pytest.mark.data
def test_tasks_run_separately_give_the_one_run_output_and_the_old_flag_names_are_gone(corpus: Path,
                                                                                      tmp_path: Path) -> None:
    # 0.1.0 is unreleased: the names before the rename (--num-shards, --shard-index, --processes, --block-bytes,
    # --recipe for --filter) are refused, not shimmed
    out, whole = tmp_path / "kept.tsv", tmp_path / "whole.tsv"
    base = ["corpus", "filter", str(corpus), "--quiet", "--no-language-filter"]
    for index in ("0", "1"):
        assert main([*base, "-o", str(out), "--tasks", "2", "--local-tasks", "1", "--local-rank-offset", index]) == 0
    assert main([*base, "-o", str(whole), "--workers", "1"]) == 0
    assert out.read_bytes() == whole.read_bytes()
    for old in (["--num-shards", "2"], ["--shard-index", "0"], ["--processes", "1"], ["--block-bytes", "1000"],
                ["--recipe", "pras"]):
        with pytest.raises(SystemExit) as err:
            main([*base, "-o", str(tmp_path / "old.tsv"), *old])
        assert err.value.code == 2


@pytest.mark.data
def test_shards_from_torchrun_environment(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "kept.tsv"
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank in (1, 0):
        monkeypatch.setenv("RANK", str(rank))
        assert main(["corpus", "filter", str(corpus), "-o", str(out), "--quiet", "--no-language-filter"]) == 0
        assert out.exists() == (rank == 0)
    monkeypatch.delenv("WORLD_SIZE")
    monkeypatch.delenv("RANK")
    whole = tmp_path / "whole.tsv"
    assert main(["corpus", "filter", str(corpus), "-o", str(whole), "--quiet", "--no-language-filter"]) == 0
    assert out.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize("via", ["same", "dot-slash", "symlink", "gz"])
def test_output_that_is_an_input_is_refused_even_with_overwrite(tmp_path: Path, via: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = "a b c d e f\tg h i j k l\t0.9\n" * 3
    src = tmp_path / ("x.tsv.gz" if via == "gz" else "x.tsv")
    src.write_bytes(gzip.compress(data.encode()) if via == "gz" else data.encode())
    before = src.read_bytes()
    out = {"same": str(src), "dot-slash": "./" + src.name, "gz": str(src), "symlink": str(tmp_path / "link.tsv")}[via]
    if via == "symlink":
        os.symlink(src, tmp_path / "link.tsv")
    for command in (["filter", "--no-language-filter"], ["dedup"], ["annotate", "--tokenizer", "whitespace"]):
        assert main(["corpus", command[0], src.name, "-o", out, "--overwrite", *command[1:]]) == 1
        assert src.read_bytes() == before


def test_existing_output_needs_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src, out = tmp_path / "x.tsv", tmp_path / "out.tsv"
    src.write_text("a b c d e f\tg h i j k l\t0.9\n")
    out.write_text("precious\n")
    assert main(["corpus", "dedup", str(src), "-o", str(out)]) == 1
    assert "already exists" in capsys.readouterr().err and out.read_text() == "precious\n"
    assert main(["corpus", "dedup", str(src), "-o", str(out), "--overwrite"]) == 0
    assert out.read_text() == "a b c d e f\tg h i j k l\t0.9\n"


def test_a_second_filter_into_the_same_output_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                         hold_lock) -> None:
    """Two runs into one output must not both report success: the second is refused while the
    first writes (it holds the output's lock)."""
    src, out = tmp_path / "x.tsv", tmp_path / "out.tsv"
    src.write_text("a b c d e f\tg h i j k l\t0.9\n")
    holder = hold_lock(out)  # the first `corpus filter ... -o out.tsv`, still writing
    for extra in ([], ["--overwrite"]):
        assert main(["corpus", "filter", str(src), "-o", str(out), "--no-language-filter", *extra]) == 1
        err = capsys.readouterr().err
        assert "being written by another process" in err and f"pid {holder.pid}" in err and "wrote" not in err
    assert not out.exists()


def test_all_bad_input_fails_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src, out = tmp_path / "bad.tsv", tmp_path / "out.tsv"
    src.write_bytes(b"no tabs\nref\tpara\tnot-a-score\n\xff\xfe\tx\t0.5\n")
    assert main(["corpus", "filter", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no valid line" in err and "3 bad" in err and "non-numeric score" in err and not out.exists()
    assert not list(tmp_path.glob(".paranmt-tmp-*"))
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    assert main(["corpus", "filter", str(empty), "-o", str(out)]) == 1
    assert "empty input" in capsys.readouterr().err


def _run_and_kill(args: list[str], work: Path, sig: int, after_bytes: int = 1,
                  parts: str = "parts/*") -> subprocess.Popen:
    """Start `paranmt-hf corpus ...` and send ``sig`` once the files ``parts`` of its work folder (``work``) hold
    ``after_bytes``."""
    proc = subprocess.Popen([sys.executable, "-m", "paranmt_hf.cli.main", "corpus", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pattern = parts
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        parts = [p for p in work.glob(pattern) if p.is_file()] if work.is_dir() else []
        if parts and sum(p.stat().st_size for p in parts) >= after_bytes:
            proc.send_signal(sig)
            break
        time.sleep(0.05)
    proc.wait(timeout=120)
    return proc


@pytest.mark.data
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_filter_leaves_nothing_under_the_final_name_and_resumes(data_dir: Path, tmp_path: Path,
                                                                       sig: int) -> None:
    src = write_synthetic_paranmt(tmp_path / "in.txt", 6000, data_dir, seed=5)
    out, whole = tmp_path / "out.tsv", tmp_path / "whole.tsv"
    args = ["filter", str(src), "--no-language-filter", "--workers", "1", "--tasks", "3", "--chunk-bytes", "20000",
            "--quiet"]
    proc = _run_and_kill([*args, "-o", str(out)], tmp_path / ".out.tsv.paranmt-work", sig)
    assert proc.returncode != 0, "the run finished before it could be killed"
    assert not out.exists()
    if sig == signal.SIGTERM:  # unwinds like Ctrl-C: no temporary output is left; the work folder is, to resume
        assert proc.returncode == 128 + signal.SIGTERM
        assert not list(tmp_path.glob(".paranmt-tmp-*"))
        assert b"resume" in proc.stderr.read()
    assert (tmp_path / ".out.tsv.paranmt-work" / "run.json").is_file()
    assert main(["corpus", *args, "-o", str(out)]) == 0  # the same command resumes
    assert main(["corpus", *args, "-o", str(whole)]) == 0
    assert out.read_bytes() == whole.read_bytes() and len(whole.read_bytes()) > 1000
    assert main(["corpus", *args, "--tokenizer", "whitespace", "-o", str(tmp_path / "other.tsv"),
                 "--work-dir", str(tmp_path / "w")]) == 0
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "run.json").write_text("{}")  # a folder of another run is never mixed in
    assert main(["corpus", *args, "-o", str(tmp_path / "third.tsv"), "--work-dir", str(tmp_path / "w")]) == 1
    assert main(["corpus", *args, "-o", str(tmp_path / "third.tsv"), "--work-dir", str(tmp_path / "w"),
                 "--restart"]) == 0


@pytest.mark.data
def test_killed_export_leaves_nothing_under_the_final_name_and_resumes(data_dir: Path, tmp_path: Path) -> None:
    from datasets import load_dataset

    src = write_synthetic_paranmt(tmp_path / "para-nmt-50m.txt", 6000, data_dir, seed=6)
    out, whole = tmp_path / "hub", tmp_path / "whole"
    args = ["export", str(src), "--config", "full", "--config", "filtered", "--workers", "1", "--tasks", "4",
            "--shard-rows", "500", "--no-language-filter", "--chunk-bytes", "20000", "--quiet"]
    proc = _run_and_kill([*args, "-o", str(out)], tmp_path / ".hub.paranmt-work", signal.SIGKILL,
                         parts="full/*/*.parquet")
    assert proc.returncode != 0 and not out.exists()
    assert main(["corpus", *args, "-o", str(out)]) == 0
    assert main(["corpus", *args, "-o", str(whole)]) == 0
    for config in ("full", "filtered"):
        ours = load_dataset(str(out), config, split="train", cache_dir=str(tmp_path / "c1")).to_list()
        one = load_dataset(str(whole), config, split="train", cache_dir=str(tmp_path / "c2")).to_list()
        assert ours == one and ours

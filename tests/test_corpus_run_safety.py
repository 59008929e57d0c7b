"""A corpus run is never corrupted by another process.

- killing only the main process of a multi-worker run (as the OOM killer does) leaves no worker alive, and the rerun
  writes the output of an uninterrupted run, byte for byte;
- a second launch of the same command while the first runs is refused at once, in one sentence;
- the merge checks every part against what its task recorded: a torn, foreign or missing part stops it (rc 1, one
  line, no output);
- Ctrl-C, or SIGTERM to the whole process group, stops a multi-worker run with one line and no traceback, and
  leaves no process behind.

The tests synchronise on files the run writes (never on sleeps that assume a speed), and kill whatever they started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("datatrove")

from paranmt_hf.cli.main import main  # noqa: E402

WAIT = 240.0
"""Generous upper bound (seconds) for anything the tests wait for: a file to appear, a process to end."""


# ---- processes ------------------------------------------------------------------------------------------------------


def _proc_stat(pid: int) -> tuple[int, str, int] | None:
    """``(parent pid, state, start time)`` of a process from /proc, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0], int(fields[19])


def descendants(pid: int) -> dict[int, int]:
    """Every process below ``pid`` (children, their children...): ``{pid: start time}``."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _proc_stat(int(entry.name))) is not None:
            children.setdefault(stat[0], []).append(int(entry.name))
            starts[int(entry.name)] = stat[2]
    found: dict[int, int] = {}
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found and child in starts:
                found[child] = starts[child]
                todo.append(child)
    return found


def alive(processes: dict[int, int]) -> list[int]:
    """The processes of ``processes`` (pid: start time) still running (not zombies, not a reused pid)."""
    out = []
    for pid, start in processes.items():
        stat = _proc_stat(pid)
        if stat is not None and stat[2] == start and stat[1] not in ("Z", "X"):
            out.append(pid)
    return out


def wait_until(condition, what: str, timeout: float = WAIT) -> None:  # noqa: ANN001
    """Poll ``condition()`` until it holds (fails the test after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def launched(args: list[str], new_session: bool = False) -> Iterator[subprocess.Popen]:
    """``paranmt-hf ARGS`` in a subprocess; on leaving, it and every process it started are killed (none survives
    the test, whatever happened)."""
    proc = subprocess.Popen([sys.executable, "-m", "paranmt_hf.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=new_session)
    proc.seen = {}  # type: ignore[attr-defined]  # processes the test saw below it (killed at the end too)
    try:
        yield proc
    finally:
        seen = {**proc.seen, **descendants(proc.pid)}  # type: ignore[attr-defined]
        for pid in [proc.pid, *alive(seen)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()


# ---- fixtures -------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def marian(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("sentencepiece")
    from _synthetic_translation import build_translation_model, model_sentences

    return build_translation_model(tmp_path_factory.mktemp("models") / "marian", model_sentences(300, seed=0),
                                   kind="marian", seed=1)


def _bitext(path: Path, count: int) -> Path:
    from _synthetic_translation import model_sentences

    path.write_text("".join(f"english reference {i}\t{s}\n" for i, s in enumerate(model_sentences(count, seed=3))),
                    encoding="utf-8")
    return path


def _pairs(path: Path, count: int) -> Path:
    """A ParaNMT-format file of ``count`` pairs (reference, paraphrase, score)."""
    words = ["a", "man", "is", "playing", "the", "guitar", "someone", "plays", "music", "loud", "quiet", "dog"]
    lines = []
    for i in range(count):
        a = " ".join(words[(i + k) % len(words)] for k in range(4 + i % 5))
        b = " ".join(words[(i * 7 + k) % len(words)] for k in range(3 + i % 4))
        lines.append(f"{a} {i}\t{b} {i % 13}\t0.{i % 10}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


# ---- killing only the main process ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_killing_only_the_main_process_leaves_no_worker_and_the_rerun_is_whole(marian: Path,
                                                                                tmp_path: Path) -> None:
    src = _bitext(tmp_path / "bitext.en-de.tsv", 60)  # ~15 chunks: the kill comes after the second
    out, whole = tmp_path / "out.tsv", tmp_path / "whole.tsv"
    args = ["corpus", "backtranslate", str(src), "--model", str(marian), "--num-beams", "2", "--workers", "2",
            "--tasks", "2", "--chunk-bytes", "250", "--quiet"]
    chunks = tmp_path / ".out.tsv.paranmt-work" / "chunks"
    with launched([*args, "-o", str(out)]) as proc:
        wait_until(lambda: proc.poll() is not None or (chunks.is_dir() and len(list(chunks.glob("*.json"))) >= 2),
                   "the first translated chunks")
        assert proc.poll() is None, "the run ended before it could be killed: " + proc.stderr.read().decode()
        workers = proc.seen = descendants(proc.pid)
        assert len(workers) >= 2, workers  # the pool's workers (and datatrove's helper processes)
        os.kill(proc.pid, signal.SIGKILL)  # the main process only, as the OOM killer would
        proc.wait(timeout=60)
        wait_until(lambda: not alive(workers), f"the workers {alive(workers)} to die with their run", timeout=60)
    assert not out.exists()
    assert main([*args, "-o", str(out)]) == 0  # the same command resumes
    assert main([*args, "-o", str(whole)]) == 0  # the same command, uninterrupted
    assert out.read_bytes() == whole.read_bytes() and whole.read_bytes().count(b"\n") > 30
    assert b"\x00" not in out.read_bytes()


# ---- a second launch ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_second_launch_of_the_same_run_is_refused_in_one_sentence(marian: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    src = _bitext(tmp_path / "bitext.en-de.tsv", 60)
    out, whole = tmp_path / "out.tsv", tmp_path / "whole.tsv"
    args = ["corpus", "backtranslate", str(src), "--model", str(marian), "--workers", "2", "--tasks", "2",
            "--chunk-bytes", "250", "--quiet"]
    with launched([*args, "-o", str(out)]) as first:
        work = tmp_path / ".out.tsv.paranmt-work"
        wait_until(lambda: first.poll() is not None or (work / "run.json").is_file(), "the first run to start")
        os.kill(first.pid, signal.SIGSTOP)  # the first run is still at work, whatever the machine's speed
        try:
            for extra in ([], ["--overwrite"], ["--restart"]):
                capsys.readouterr()
                assert main([*args, "-o", str(out), *extra]) == 1, extra
                err = capsys.readouterr().err.strip().splitlines()
                assert len(err) == 1 and "another process" in err[0] and f"pid {first.pid}" in err[0], err
            assert (work / "run.json").is_file()  # --restart did not discard the first run's folder
        finally:
            os.kill(first.pid, signal.SIGCONT)
        assert first.wait(timeout=WAIT) == 0, first.stderr.read().decode()
    assert main([*args, "-o", str(whole)]) == 0  # the same command, alone
    assert out.read_bytes() == whole.read_bytes()


# ---- the merge checks every part ------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["torn", "foreign", "missing"])
def test_a_torn_foreign_or_missing_part_never_gives_an_output(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                              damage: str) -> None:
    src = _pairs(tmp_path / "pairs.txt", 3000)
    out, whole = tmp_path / "out.tsv", tmp_path / "whole.tsv"
    base = ["corpus", "annotate", str(src), "--format", "paranmt", "--tokenizer", "whitespace", "--quiet",
            "--chunk-bytes", "20000"]
    args = [*base, "--tasks", "2", "--local-tasks", "1"]
    assert main([*args, "-o", str(out), "--local-rank-offset", "1"]) == 0
    part = tmp_path / ".out.tsv.paranmt-work" / "parts" / "00001.tsv"
    data = part.read_bytes()
    assert data.count(b"\n") > 100
    if damage == "torn":  # what an orphaned writer leaves: the bytes cut short, NUL bytes in place
        part.write_bytes(data[: len(data) // 2] + b"\x00" * (len(data) - len(data) // 2))
    elif damage == "foreign":  # another attempt's bytes, same size
        part.write_bytes(data.replace(b"a", b"b"))
    else:
        part.unlink()
    capsys.readouterr()
    assert main([*args, "-o", str(out), "--local-rank-offset", "0"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    said = "or its record is missing" if damage == "missing" else "is torn or foreign"
    assert len(err) == 1 and "00001.tsv" in err[0] and said in err[0], err
    assert not out.exists()
    assert main([*base, "-o", str(out), "--tasks", "2", "--restart"]) == 0  # a fresh run is whole again
    assert main([*base, "-o", str(whole), "--tasks", "1"]) == 0
    assert out.read_bytes() == whole.read_bytes()


# ---- Ctrl-C ---------------------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill-the-group"])
def test_a_stopped_multi_worker_run_says_so_in_one_line_and_leaves_no_process(marian: Path, tmp_path: Path,
                                                                               stop: signal.Signals) -> None:
    """Ctrl-C, or SIGTERM to the whole process group (``timeout``, a job scheduler): the stop is reported as such,
    also when datatrove's pool, stopped by the same signal, fails to reach its manager process while it ends (more
    tasks than workers: tasks still queued)."""
    src = _bitext(tmp_path / "bitext.en-de.tsv", 120)
    out = tmp_path / "out.tsv"
    args = ["corpus", "backtranslate", str(src), "--model", str(marian), "--num-beams", "2", "--workers", "2",
            "--tasks", "4", "--chunk-bytes", "250", "--quiet", "-o", str(out)]
    chunks = tmp_path / ".out.tsv.paranmt-work" / "chunks"
    with launched(args, new_session=True) as proc:
        wait_until(lambda: proc.poll() is not None or (chunks.is_dir() and len(list(chunks.glob("*.json"))) >= 2),
                   "the first translated chunks")
        assert proc.poll() is None, "the run ended before Ctrl-C: " + proc.stderr.read().decode()
        processes = proc.seen = descendants(proc.pid)
        os.killpg(proc.pid, stop)  # the terminal's Ctrl-C, or `timeout`'s SIGTERM: the whole group
        assert proc.wait(timeout=WAIT) == 128 + stop
        err = proc.stderr.read().decode()
        wait_until(lambda: not alive(processes), f"the processes {alive(processes)} to end", timeout=60)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert len(err.strip().splitlines()) == 1 and "resume" in err, err
    assert ("interrupted" if stop == signal.SIGINT else "terminated") in err, err
    assert not out.exists() and (tmp_path / ".out.tsv.paranmt-work" / "run.json").is_file()


# ---- the models a command loads are inputs --------------------------------------------------------------------------


def test_a_corpus_command_never_replaces_a_file_of_the_model_it_loads(marian: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """``-o MODEL/model.safetensors --overwrite`` (backtranslate, annotate) and a work folder that is the model are
    refused in one line, the model untouched."""
    from paranmt_hf import build_encoder

    embedder = tmp_path / "emb"
    build_encoder("word", corpus=["a man plays", "someone plays music"], embedding_dim=8).save_pretrained(embedder)
    weights = {p: p.read_bytes() for p in [*marian.glob("*.safetensors"), *embedder.glob("*.safetensors")]}
    src = _bitext(tmp_path / "bitext.en-de.tsv", 5)
    pairs = _pairs(tmp_path / "pairs.txt", 20)
    bt = ["corpus", "backtranslate", str(src), "--model", str(marian), "--quiet", "--workers", "1"]
    annotate = ["corpus", "annotate", str(pairs), "--format", "paranmt", "--model", str(embedder), "--quiet",
                "--workers", "1"]
    for args in ([*bt, "-o", str(marian / "model.safetensors"), "--overwrite"],
                 [*bt, "-o", str(marian / "sub" / ".." / "config.json"), "--overwrite"],
                 [*bt, "-o", str(tmp_path / "x.tsv"), "--work-dir", str(marian)],
                 [*annotate, "-o", str(embedder / "model.safetensors"), "--overwrite"],
                 [*annotate, "-o", str(tmp_path / "y.tsv"), "--work-dir", str(embedder), "--restart"]):
        capsys.readouterr()
        assert main(args) == 1, args
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is the input" in err[0], (args, err)
    assert {p: p.read_bytes() for p in weights} == weights
    assert not (tmp_path / "x.tsv").exists() and not (tmp_path / "y.tsv").exists()
    assert main([*annotate, "-o", str(embedder / "scores.tsv")]) == 0  # a new file next to the model is fine


def test_a_work_folder_that_is_a_link_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A work folder that exists as a symbolic link would be written through (and removed): refused."""
    pairs = _pairs(tmp_path / "pairs.txt", 20)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    out = tmp_path / "out.tsv"
    (tmp_path / ".out.tsv.paranmt-work").symlink_to(elsewhere)
    args = ["corpus", "annotate", str(pairs), "--format", "paranmt", "--tokenizer", "whitespace", "--quiet"]
    for extra in ([], ["--restart"]):
        assert main([*args, "-o", str(out), *extra]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "symbolic link" in err[0], err
    assert [p.name for p in elsewhere.iterdir()] == ["keep.txt"] and not out.exists()


@pytest.mark.parametrize("name", ["../../escaped", "..", "/tmp/absolute-config", "a/b"])
def test_the_config_name_of_corpus_make_stays_inside_the_output(marian: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture, name: str) -> None:
    """``corpus make --config NAME`` names ``data/NAME/`` inside the output: a name that leads out of it is refused
    in one line before any work."""
    src = _bitext(tmp_path / "bitext.en-de.tsv", 5)
    out = tmp_path / "deep" / "er" / "made"
    before = sorted(tmp_path.rglob("*"))
    capsys.readouterr()
    assert main(["corpus", "make", str(src), "-o", str(out), "--model", str(marian), "--config", name,
                 "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be a folder name inside the output" in err[0], err
    assert sorted(tmp_path.rglob("*")) == before


def test_disk_full_at_the_merge_is_one_sentence_and_keeps_the_work(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC while the parts are joined: one line (no traceback), no output, the work folder kept to resume once
    space is freed."""
    import errno

    import paranmt_hf.corpus.pipeline.parts as parts

    pairs = _pairs(tmp_path / "pairs.txt", 50)
    out = tmp_path / "out.tsv"
    args = ["corpus", "annotate", str(pairs), "--format", "paranmt", "--tokenizer", "whitespace", "--quiet",
            "--workers", "1", "-o", str(out)]
    real = parts.check_parts

    def full(paths: list[Path]) -> list[dict]:
        raise OSError(errno.ENOSPC, "No space left on device", str(out))

    monkeypatch.setattr(parts, "check_parts", full)
    capsys.readouterr()
    assert main(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no space left on the device" in err[0] and "resume" in err[0], err
    assert not out.exists() and (tmp_path / ".out.tsv.paranmt-work" / "run.json").is_file()
    monkeypatch.setattr(parts, "check_parts", real)
    assert main(args) == 0 and out.read_text().count("\n") == 50  # space freed: the same command finishes


# ---- a resume checks its inputs by content --------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["filter", "--no-language-filter"],
                                     ["dedup", "--format", "paranmt"],
                                     ["annotate", "--format", "paranmt", "--tokenizer", "whitespace"]])
def test_a_resume_refuses_an_input_replaced_by_one_of_the_same_size_and_time(tmp_path: Path, command: list[str],
                                                                             capsys: pytest.CaptureFixture) -> None:
    """What `cp -p`, `rsync -a` or `tar x` do: another content under the same path, size and modification time.
    The resume refuses it in one sentence (it would take its first parts from the old file, the rest from the
    new); --restart starts over from the new file."""
    src = _pairs(tmp_path / "pairs.txt", 3000)
    lines = src.read_bytes().splitlines(keepends=True)
    name, *options = command
    out, whole = tmp_path / "out.tsv", tmp_path / "whole.tsv"
    base = ["corpus", name, str(src), *options, "--quiet", "--chunk-bytes", "20000", "--tasks", "2"]
    assert main([*base, "-o", str(out), "--local-tasks", "1"]) == 0  # task 0 done, as a killed run leaves it
    times = src.stat()
    src.write_bytes(b"".join(reversed(lines)))  # the same bytes in another order: the same size
    os.utime(src, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert (src.stat().st_size, src.stat().st_mtime_ns) == (times.st_size, times.st_mtime_ns)
    capsys.readouterr()
    assert main([*base, "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "changed since the interrupted run" in err[0] and str(src) in err[0], err
    assert "--restart" in err[0] and not out.exists()
    assert main([*base, "-o", str(out), "--restart"]) == 0
    assert main([*base, "-o", str(whole)]) == 0
    assert out.read_bytes() == whole.read_bytes()


def test_disk_full_under_the_task_logs_is_still_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk fails the tasks' log lines before their data: no "Logging error in Loguru Handler" block, only
    the sentence of the full disk."""
    import errno
    import io

    import paranmt_hf.corpus.pipeline.executors as executors
    import paranmt_hf.corpus.pipeline.parts as parts

    class FullFile(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    def full(paths: list[Path]) -> list[dict]:
        raise OSError(errno.ENOSPC, "No space left on device", str(out))

    pairs = _pairs(tmp_path / "pairs.txt", 50)
    out = tmp_path / "out.tsv"
    monkeypatch.setattr(executors, "open_task_log", lambda logging_dir, rank: FullFile())
    monkeypatch.setattr(parts, "check_parts", full)
    capsys.readouterr()
    assert main(["corpus", "annotate", str(pairs), "--format", "paranmt", "--tokenizer", "whitespace", "--quiet",
                 "--workers", "1", "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no space left on the device" in err[0], err


def test_a_task_process_that_the_run_did_not_start_dies_with_the_run(tmp_path: Path) -> None:
    """datatrove's pool workers are started by its forkserver, not by the run: when only the run's main process is
    killed they must die too (not finish their task first, holding the forkserver and its semaphores)."""
    run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    ready = tmp_path / "bound"
    code = ("import sys, time; from pathlib import Path; "
            "from paranmt_hf.corpus.pipeline.task_process import bind_to_run; "
            f"bind_to_run({run.pid}); Path({str(ready)!r}).touch(); time.sleep(600)")
    worker = subprocess.Popen([sys.executable, "-c", code])  # its parent is this test, as a forkserver's child
    try:
        wait_until(lambda: ready.exists() or worker.poll() is not None, "the worker to bind to the run")
        assert worker.poll() is None
        run.kill()
        run.wait(timeout=WAIT)
        assert worker.wait(timeout=WAIT) == -signal.SIGKILL
    finally:
        for proc in (run, worker):
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(timeout=60)

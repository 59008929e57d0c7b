"""The Slurm executor, proven with a fake ``sbatch`` (tests/_fake_slurm.py): the submitted job arrays run here, in
dependency order, one process per array index with ``SLURM_ARRAY_TASK_ID`` set and the environment activated by the
script itself, and give the local executor's output byte for byte (`corpus backtranslate`, `corpus make`,
`corpus dedup`); the scripts honour --qos / --account / --sbatch-arg, request GPUs only for the stages that run a
model, quote every path (a `; touch X` in a folder name runs nothing) and fail loudly when the environment does not
activate. Tiny translation models are built in code."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from _fake_slurm import FakeSlurm

from paranmt_hf.cli.main import main

pytest.importorskip("datatrove")
EVIL = "run dir; touch PWNED"


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSlurm:
    fake = FakeSlurm(tmp_path / "slurm")
    monkeypatch.setenv("PATH", f"{fake.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    return fake


def _venv(folder: Path) -> Path:
    """A virtual environment folder (named with shell metacharacters) whose bin/activate activates this one."""
    real = Path(sys.prefix) / "bin" / "activate"
    (folder / "bin").mkdir(parents=True)
    line = f'source "{real}"' if real.is_file() else f'export PATH="{Path(sys.executable).parent}:$PATH"'
    (folder / "bin" / "activate").write_text(line + "\n")
    return folder


def _no_payload(*roots: Path) -> None:
    for root in roots:
        assert not list(root.rglob("PWNED*")), "a path pasted into a Slurm script ran as a command"


def _stage_jobs(fake: FakeSlurm) -> dict[str, object]:
    """The job of each stage (by its job name), datatrove's statistics jobs left out."""
    return {job.directives()["job-name"]: job for job in fake.jobs() if "executor.pik" in job.script}


@pytest.fixture(scope="module")
def marian(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("sentencepiece")
    from _synthetic_translation import build_translation_model, model_sentences

    return build_translation_model(tmp_path_factory.mktemp("mt") / "marian", model_sentences(300), seed=1)


def _bitext(path: Path) -> Path:
    from _synthetic_translation import model_sentences

    sentences = model_sentences(18, seed=7)
    lines = [f"reference {i % 11}\t{s}\n" for i, s in enumerate(sentences)]
    lines += lines[:4]
    random.Random(0).shuffle(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


SLURM_FLAGS = ["--executor", "slurm", "--partition", "cpu", "--time", "01:00:00", "--gpus-per-task", "1",
               "--qos", "high", "--account", "acct", "--sbatch-arg", "constraint=fast"]


def _check_scripts(fake: FakeSlurm, device_stages: set[str]) -> None:
    for job in fake.jobs():
        lines = job.script.splitlines()
        assert [line for line in lines if line.startswith("#SBATCH --qos")] == ["#SBATCH --qos=high"]
        assert "#SBATCH --account=acct" in lines and "#SBATCH --constraint=fast" in lines
        name = job.directives()["job-name"]
        stage = name.rsplit("-", 1)[-1]
        wants_gpu = stage in device_stages and "executor.pik" in job.script
        assert ("#SBATCH --gpus=1" in lines) == wants_gpu, (name, job.script)


@pytest.mark.slow  # every array index is a process that loads torch: ~2 min on 2 busy cores
def test_backtranslate_on_slurm_gives_the_local_output(marian: Path, tmp_path: Path, slurm: FakeSlurm) -> None:
    folder = tmp_path / EVIL
    src = _bitext(folder / "bitext.en-de.tsv")
    venv = _venv(tmp_path / "my venv; touch PWNED2")
    out = folder / "bt.tsv"
    args = ["corpus", "backtranslate", str(src), "--model", str(marian), "--num-beams", "2", "--num-return", "2",
            "--chunk-bytes", "250", "--quiet"]
    assert main([*args, "-o", str(out), *SLURM_FLAGS, "--tasks", "2", "--workers", "2", "--venv-path",
                 str(venv)]) == 0
    assert not out.exists()  # submitted: the jobs write it
    stages = _stage_jobs(slurm)
    names = ("main", "merge", "repeats", "sources", "translate")
    assert sorted(stages) == [f"paranmt-backtranslate-{s}" for s in names]
    assert stages["paranmt-backtranslate-translate"].directives()["array"] == "0-1%2"
    _check_scripts(slurm, {"translate"})
    jobs = slurm.run_all(cwd=tmp_path)
    assert all(rc == 0 for job in jobs for rc in job.returncodes), [slurm.log(j) for j in jobs if any(j.returncodes)]
    assert assert_ran(slurm, jobs) == 14  # 4 stages of 2 tasks, the merge, datatrove's statistics jobs
    local = tmp_path / "local.tsv"
    assert main([*args, "-o", str(local), "--tasks", "1"]) == 0
    assert out.read_bytes() == local.read_bytes() and out.stat().st_size > 200
    _no_payload(tmp_path, Path.cwd())


def assert_ran(fake: FakeSlurm, jobs: list) -> int:
    """How many array indices ran (every job ran all of its indices)."""
    assert all(len(job.returncodes) == len(job.indices()) for job in jobs)
    return sum(len(job.returncodes) for job in jobs)


@pytest.mark.slow
def test_make_on_slurm_gives_the_local_folder(marian: Path, tmp_path: Path, slurm: FakeSlurm) -> None:
    folder = tmp_path / EVIL
    src = _bitext(folder / "bitext.en-de.tsv")
    out = folder / "made"
    args = ["corpus", "make", str(src), "--model", str(marian), "--num-beams", "2", "--num-return", "2",
            "--tokenizer", "whitespace", "--chunk-bytes", "250", "--quiet", "--tasks", "2"]
    assert main([*args, "-o", str(out), *SLURM_FLAGS, "--workers", "2", "--venv-path",
                 str(_venv(tmp_path / "venv"))]) == 0
    assert sorted(_stage_jobs(slurm)) == [f"paranmt-make-{s}" for s in ("find", "main", "merge", "repeats", "sources",
                                                                        "translate", "write")]
    _check_scripts(slurm, {"translate", "main"})
    jobs = slurm.run_all(cwd=tmp_path)
    assert all(rc == 0 for job in jobs for rc in job.returncodes), [slurm.log(j) for j in jobs if any(j.returncodes)]
    local = tmp_path / "local"
    assert main([*args, "-o", str(local), "--workers", "1"]) == 0
    files = sorted(p.relative_to(local) for p in local.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert all((local / f).read_bytes() == (out / f).read_bytes() for f in files if f.suffix == ".parquet")
    assert any(p.suffix == ".parquet" for p in files)
    for name in files:
        assert (out / name).read_bytes() == (local / name).read_bytes(), name
    _no_payload(tmp_path, Path.cwd())


def _pairs(path: Path) -> Path:
    rng = random.Random(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"s {rng.randint(0, 40)} x\tp {rng.randint(0, 3)} y\t0.5\n" for _ in range(300)))
    return path


def test_dedup_on_slurm_without_qos_or_gpus_and_with_a_flag(tmp_path: Path, slurm: FakeSlurm) -> None:
    src = _pairs(tmp_path / EVIL / "pairs.tsv")
    out = tmp_path / EVIL / "dedup.tsv"
    assert main(["corpus", "dedup", str(src), "-o", str(out), "--executor", "slurm", "--partition", "cpu", "--time",
                 "02:00:00", "--tasks", "3", "--cpus-per-task", "2", "--gpus-per-task", "1", "--sbatch-arg",
                 "exclusive", "--sbatch-arg", "mem-per-cpu=3G", "--chunk-bytes", "1000", "--quiet"]) == 0
    for job in slurm.jobs():
        lines = job.script.splitlines()
        assert not any(line.startswith(("#SBATCH --qos", "#SBATCH --gpus")) for line in lines), job.script
        if "executor.pik" in job.script:
            assert "#SBATCH --exclusive" in lines and "#SBATCH --mem-per-cpu=3G" in lines
    stage_args = [job.args for job in slurm.jobs() if "executor.pik" in job.script]
    assert not any(a.startswith("--dependency") for a in stage_args[0])
    assert all(any(a.startswith("--dependency=afterok:") for a in args) for args in stage_args[1:])
    jobs = slurm.run_all(cwd=tmp_path)  # no --venv-path: this interpreter's folder is not on the jobs' PATH
    failed = [job for job in jobs if any(job.returncodes)]
    assert failed and "launch_pickled_pipeline (datatrove) is not on PATH" in slurm.log(failed[0])
    assert not out.exists()


def test_dedup_on_slurm_gives_the_local_output(tmp_path: Path, slurm: FakeSlurm) -> None:
    src = _pairs(tmp_path / "pairs.tsv")
    out = tmp_path / EVIL / "dedup.tsv"
    out.parent.mkdir()
    assert main(["corpus", "dedup", str(src), "-o", str(out), "--executor", "slurm", "--partition", "cpu", "--time",
                 "02:00:00", "--tasks", "4", "--workers", "2", "--chunk-bytes", "1000", "--quiet", "--venv-path",
                 str(_venv(tmp_path / "venv"))]) == 0
    jobs = slurm.run_all(cwd=tmp_path)
    assert all(rc == 0 for job in jobs for rc in job.returncodes)
    local = tmp_path / "local.tsv"
    assert main(["corpus", "dedup", str(src), "-o", str(local), "--tasks", "1", "--quiet"]) == 0
    assert out.read_bytes() == local.read_bytes() and out.stat().st_size > 100
    _no_payload(tmp_path, Path.cwd())


def test_a_venv_that_does_not_activate_stops_the_job(tmp_path: Path, slurm: FakeSlurm) -> None:
    src = _pairs(tmp_path / "pairs.tsv")
    venv = tmp_path / "broken"
    (venv / "bin").mkdir(parents=True)
    # puts the right tools on PATH, then fails: datatrove's script carried on silently
    (venv / "bin" / "activate").write_text(f'export PATH="{Path(sys.executable).parent}:$PATH"\nreturn 3\n')
    out = tmp_path / "dedup.tsv"
    assert main(["corpus", "dedup", str(src), "-o", str(out), "--executor", "slurm", "--partition", "cpu", "--time",
                 "02:00:00", "--tasks", "1", "--quiet", "--venv-path", str(venv)]) == 0
    jobs = slurm.run_all(cwd=tmp_path)
    assert jobs[0].returncodes[0] != 0 and "cannot activate" in slurm.log(jobs[0])
    assert not out.exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--venv-path", "VENV_FILE"], "is not a virtual environment folder"),
    (["--venv-path", "MISSING"], "is not a virtual environment folder"),
    (["--qos", "high", "--sbatch-arg", "qos=low"], "--qos high and --sbatch-arg qos=low disagree"),
    (["--gpus-per-task", "1", "--sbatch-arg", "gpus=2"], "both ask for GPUs"),
    (["--sbatch-arg", "array=0-3"], "is set by the run itself"),
    (["--sbatch-arg", "=x"], "is not KEY=VALUE"),
    (["--sbatch-arg", "comment=a\nb"], "cannot go into a Slurm script"),
])
def test_bad_slurm_options_are_one_sentence(tmp_path: Path, slurm: FakeSlurm, capsys: pytest.CaptureFixture,
                                            extra: list[str], message: str) -> None:
    src = _pairs(tmp_path / "pairs.tsv")
    (tmp_path / "venv-file").write_text("not a folder")
    extra = [{"VENV_FILE": str(tmp_path / "venv-file"), "MISSING": str(tmp_path / "nope")}.get(e, e) for e in extra]
    code = main(["corpus", "dedup", str(src), "-o", str(tmp_path / "out.tsv"), "--executor", "slurm", "--partition",
                 "cpu", "--time", "1:00:00", "--quiet", *extra])
    err = capsys.readouterr().err.strip()
    assert code == 1 and message in err and len(err.splitlines()) == 1, err
    assert not slurm.jobs() and not (tmp_path / ".out.tsv.paranmt-work").exists()


def test_slurm_flags_without_the_slurm_executor_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = _pairs(tmp_path / "pairs.tsv")
    assert main(["corpus", "dedup", str(src), "-o", str(tmp_path / "out.tsv"), "--qos", "high", "--quiet"]) == 1
    assert "--qos is a Slurm setting: add --executor slurm" in capsys.readouterr().err

"""The README's Ray steps: `ray start --head` (with token authentication on, as Ray turns it on when a token exists),
then `paranmt-hf corpus backtranslate / make --executor ray` connect to that cluster (the address `ray start` wrote,
or $RAY_ADDRESS) and give the local executor's output byte for byte; without the cluster's token, or without a
cluster, the command says in one sentence what to set.

The cluster is started by the fixture (`ray start --head --block --num-cpus 2 --node-ip-address 127.0.0.1`, its own
HOME, token and temporary folder, so it never meets another Ray on the machine) and stopped by ending the process
group it started. Ray resolves 127.0.0.1 to the machine's address (services.resolve_ip_for_localhost), so the cluster
listens there; the token keeps other users out."""

from __future__ import annotations

import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paranmt_hf.cli.main import main

pytest.importorskip("ray")
pytest.importorskip("sentencepiece")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head() -> Iterator[dict[str, str]]:
    """The environment of a machine where `ray start --head` ran: HOME (with ~/.ray/auth_token), RAY_TMPDIR."""
    root = Path(tempfile.mkdtemp(prefix="prh"))  # short: Ray's socket paths live under it
    home = root / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(16))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env |= {"HOME": str(home), "RAY_TMPDIR": str(root), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    ray = Path(sys.executable).parent / "ray"
    proc = subprocess.Popen([str(ray), "start", "--head", "--block", "--port", str(_free_port()), "--num-cpus", "2",
                             "--node-ip-address", "127.0.0.1", "--include-dashboard=false", "--disable-usage-stats",
                             "--dashboard-agent-listen-port", str(_free_port())], env=env, stdout=subprocess.DEVNULL,
                            stderr=open(root / "start.log", "w"), start_new_session=True)  # noqa: SIM115
    address_file = root / "ray" / "ray_current_cluster"
    try:
        for _ in range(240):
            if address_file.is_file() and address_file.read_text().strip():
                break
            assert proc.poll() is None, (root / "start.log").read_text()[-3000:]
            time.sleep(0.5)
        else:
            pytest.fail("ray start --head did not come up in 120 s: " + (root / "start.log").read_text()[-3000:])
        yield env | {"ADDRESS": address_file.read_text().strip()}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # `ray start --block` stops the processes it started
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def marian(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from _synthetic_translation import build_translation_model, model_sentences

    return build_translation_model(tmp_path_factory.mktemp("mt") / "marian", model_sentences(300), seed=1)


def _bitext(path: Path) -> Path:
    from _synthetic_translation import model_sentences

    lines = [f"reference {i % 11}\t{s}\n" for i, s in enumerate(model_sentences(16, seed=7))]
    lines += lines[:4]
    random.Random(0).shuffle(lines)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "paranmt_hf.cli.main", *args], env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow  # a Ray cluster and a process per task that loads torch: ~1-2 min on 2 busy cores
def test_backtranslate_and_make_on_ray_give_the_local_output(ray_head: dict[str, str], marian: Path,
                                                              tmp_path: Path) -> None:
    src = _bitext(tmp_path / "bitext.en-de.tsv")
    env = {k: v for k, v in ray_head.items() if k != "ADDRESS"}
    bt = ["corpus", "backtranslate", str(src), "--model", str(marian), "--num-beams", "2", "--num-return", "2",
          "--chunk-bytes", "250", "--no-progress", "--tasks", "2"]
    proc = _cli([*bt, "-o", str(tmp_path / "ray.tsv"), "--executor", "ray", "--workers", "2"], env)  # the address
    assert proc.returncode == 0, proc.stderr[-3000:]  # `ray start` wrote, with the token it enabled
    assert main([*bt, "-o", str(tmp_path / "local.tsv")]) == 0
    assert (tmp_path / "ray.tsv").read_bytes() == (tmp_path / "local.tsv").read_bytes()

    make = ["corpus", "make", str(src), "--model", str(marian), "--num-beams", "2", "--tokenizer", "whitespace",
            "--chunk-bytes", "250", "--no-progress", "--tasks", "2", "--dedup", "off"]  # (dedup's stages: below)
    proc = _cli([*make, "-o", str(tmp_path / "ray-made"), "--executor", "ray"],
                env | {"RAY_ADDRESS": ray_head["ADDRESS"], "RAY_TMPDIR": str(tmp_path / "elsewhere")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert main([*make, "-o", str(tmp_path / "local-made")]) == 0
    files = sorted(p.relative_to(tmp_path / "local-made") for p in (tmp_path / "local-made").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "ray-made") for p in (tmp_path / "ray-made").rglob("*")
                           if p.is_file())
    for name in files:
        assert (tmp_path / "ray-made" / name).read_bytes() == (tmp_path / "local-made" / name).read_bytes(), name


@pytest.mark.slow
def test_dedup_on_ray_in_process_gives_the_local_output(ray_head: dict[str, str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python user's run: RunOptions(executor="ray") connects this process (RAY_ADDRESS) and disconnects it."""
    import ray

    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.selection.dedup import dedup_files

    for name in ("HOME", "RAY_TMPDIR"):
        monkeypatch.setenv(name, ray_head[name])
    monkeypatch.setenv("RAY_ADDRESS", ray_head["ADDRESS"])
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)  # restored after the test (the run sets it)
    src = tmp_path / "pairs.tsv"
    rng = random.Random(2)
    src.write_text("".join(f"s {rng.randint(0, 40)} x\tp {rng.randint(0, 3)} y\t0.5\n" for _ in range(300)))
    summary = dedup_files([src], tmp_path / "ray.tsv", RunOptions(executor="ray", tasks=2, workers=2,
                                                                   chunk_bytes=1500, progress=False,
                                                                   cluster={"mem_per_cpu_gb": 0.5}))
    assert not ray.is_initialized()  # disconnected again
    dedup_files([src], tmp_path / "local.tsv", RunOptions(tasks=1, progress=False))
    assert (tmp_path / "ray.tsv").read_bytes() == (tmp_path / "local.tsv").read_bytes()
    assert summary.complete and summary.counts["duplicate"] > 0


@pytest.mark.slow
def test_without_the_clusters_token_one_sentence_names_what_to_set(ray_head: dict[str, str], tmp_path: Path) -> None:
    src = tmp_path / "pairs.tsv"
    src.write_text("a b\tc d\t0.5\n")
    (tmp_path / "home").mkdir()
    env = ray_head | {"HOME": str(tmp_path / "home")}  # another machine: the address, no token
    proc = _cli(["corpus", "dedup", str(src), "-o", str(tmp_path / "out.tsv"), "--executor", "ray",
                 "--no-progress"], env | {"RAY_ADDRESS": ray_head["ADDRESS"]})
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert last.startswith("paranmt-hf corpus dedup: error: cannot connect to the Ray cluster at")
    assert "RAY_AUTH_TOKEN" in last and not (tmp_path / "out.tsv").exists()


def test_without_a_cluster_one_sentence_says_how_to_start_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "no-ray"))
    src = tmp_path / "pairs.tsv"
    src.write_text("a b\tc d\t0.5\n")
    assert main(["corpus", "dedup", str(src), "-o", str(tmp_path / "out.tsv"), "--executor", "ray",
                 "--no-progress"]) == 1
    err = capsys.readouterr().err.strip()
    assert "no Ray cluster to connect to: start one with `ray start --head`" in err and "RAY_ADDRESS" in err
    assert len(err.splitlines()) == 1

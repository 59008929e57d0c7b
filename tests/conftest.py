from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared real data; fails (not skips) with a clear message when it is absent."""
    from paranmt_hf.utils.paths import data_dir as resolve

    try:
        return resolve()
    except FileNotFoundError as err:
        pytest.fail(str(err))


ALLOW_MISSING_EXTRAS = "PARANMT_HF_ALLOW_MISSING_EXTRAS"
"""Set to 1 to let tests of a missing optional extra skip (e.g. a core-only install). By default (CI installs
``.[dev]``) a test skipped by ``pytest.importorskip`` FAILS: a missing extra must not pass silently."""


def _missing_extra(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    """The reason of a skip caused by a missing module (``pytest.importorskip``), unless such skips are allowed."""
    if not report.skipped or os.environ.get(ALLOW_MISSING_EXTRAS) == "1":
        return None
    longrepr = report.longrepr
    reason = str(longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr)
    return reason if "could not import" in reason else None


def _fail_missing_extra(report: pytest.TestReport | pytest.CollectReport) -> None:
    reason = _missing_extra(report)
    if reason:
        report.outcome = "failed"
        report.longrepr = (f"{reason}\nA dev extra is missing: `pip install -e .[dev]` (or set "
                           f"{ALLOW_MISSING_EXTRAS}=1 to skip tests of missing extras)")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    outcome = yield
    _fail_missing_extra(outcome.get_result())


# ---- the `data` marker: every test that reads the shared real data carries it --------------------------------------

DATA_MARKER_HELP = ("mark it `@pytest.mark.data` and take the `data_dir` fixture (tests/conftest.py), so that "
                    "`pytest -m 'not data'` runs without the real data and the suite says which tests need it")


def _shared_data_roots() -> tuple[str, ...]:
    """The real data folder as given and resolved (``$PARANMT_HF_DATA`` / ``../shared/data``), when it exists."""
    from paranmt_hf.utils.paths import data_dir

    try:
        root = data_dir()
    except FileNotFoundError:
        return ()
    given = os.environ.get("PARANMT_HF_DATA")
    forms = {str(root), os.path.realpath(root), *([os.path.abspath(given)] if given else [])}
    return tuple(sorted(form.rstrip(os.sep) + os.sep for form in forms))


class _DataReads:
    """Paths under the shared data that the running test (setup or call) opened or listed, seen by an audit hook."""

    EVENTS = frozenset({"open", "os.listdir", "os.scandir", "glob.glob"})

    def __init__(self) -> None:
        self.roots: tuple[str, ...] = ()
        self.watching = False
        self.paths: list[str] = []

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.watching or event not in self.EVENTS or not args:
            return
        path = args[0]
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        elif isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):  # a file descriptor
            return
        path = os.path.abspath(path) + os.sep
        if path.startswith(self.roots):
            self.paths.append(path.rstrip(os.sep))


DATA_READS = _DataReads()


def pytest_sessionstart(session: pytest.Session) -> None:
    DATA_READS.roots = _shared_data_roots()
    if DATA_READS.roots:
        sys.addaudithook(DATA_READS)  # lives as long as the process; idle unless a test runs


def data_marker_problem(item: pytest.Item, paths: list[str]) -> str | None:
    """Why ``item`` breaks the data-marker rule (uses ``data_dir`` or read the shared data, unmarked), or ``None``."""
    if item.get_closest_marker("data") is not None:
        return None
    if "data_dir" in getattr(item, "fixturenames", ()):
        return f"{item.nodeid} uses the data_dir fixture without @pytest.mark.data: {DATA_MARKER_HELP}"
    if paths:
        return (f"{item.nodeid} read the shared real data ({paths[0]}"
                f"{f' and {len(paths) - 1} more' if len(paths) > 1 else ''}) without @pytest.mark.data: "
                f"{DATA_MARKER_HELP}")
    return None


_TORCH_THREADS_SET = False


def _one_torch_thread() -> None:
    """One torch thread in the pytest process, once torch is imported (a test that checks thread settings sets the
    counts it checks itself, e.g. tests/test_corpus_tools.py, tests/test_featurization.py).

    The suite's models are tiny: a second intra-op thread only waits on the first on a busy 2-core machine (a tiny
    translation model's beam search took 40% less CPU and 35% less time with one thread at load 8). Subprocesses keep
    torch's default, as a user's command does.
    """
    global _TORCH_THREADS_SET
    torch = sys.modules.get("torch")
    if not _TORCH_THREADS_SET and torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(1)
        _TORCH_THREADS_SET = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> object:
    _one_torch_thread()
    DATA_READS.paths, DATA_READS.watching = [], True
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> object:
    DATA_READS.watching = False  # a module fixture's teardown reads nothing the test did not
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    report = outcome.get_result()
    _fail_missing_extra(report)
    if report.when == "call" and report.passed:
        problem = data_marker_problem(item, DATA_READS.paths)
        if problem:
            report.outcome = "failed"
            report.longrepr = problem


HOLD_LOCK = """
import sys, time
from paranmt_hf.utils.atomic import output_lock
with output_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(300)
"""


@pytest.fixture
def hold_lock():
    """``hold_lock(path)`` starts a process that holds the output lock of ``path``, as a concurrent writer does.

    Returns the process (killed when the test ends).
    """
    import subprocess
    import sys

    procs = []

    def start(path):
        proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path)], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "locked"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()

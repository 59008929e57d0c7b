from __future__ import annotations

import os
from pathlib import Path

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
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    _fail_missing_extra(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    outcome = yield
    _fail_missing_extra(outcome.get_result())


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

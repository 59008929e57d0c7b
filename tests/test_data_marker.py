"""The conftest check behind the ``data`` marker: an unmarked test that uses ``data_dir`` or reads the data fails.

Runs pytest in a subprocess on three small tests with this conftest and a stand-in data folder
(``PARANMT_HF_DATA`` pointing at a temporary folder), so it needs no real data itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = '''
import os
from pathlib import Path

import pytest


def test_fixture_unmarked(data_dir):
    assert data_dir.is_dir()


def test_reads_unmarked():
    assert (Path(os.environ["PARANMT_HF_DATA"]) / "eval" / "pairs.tsv").read_text() == "a\\tb\\n"


def test_lists_unmarked():
    assert os.listdir(os.environ["PARANMT_HF_DATA"])


@pytest.mark.data
def test_marked(data_dir):
    assert (data_dir / "eval" / "pairs.tsv").read_text() == "a\\tb\\n"


def test_elsewhere(tmp_path):
    (tmp_path / "x").write_text("x")
    assert (tmp_path / "x").read_text() == "x"
'''


def test_unmarked_tests_that_use_the_data_fail(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "eval").mkdir(parents=True)
    (data / "eval" / "pairs.tsv").write_text("a\tb\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(Path(__file__).with_name("conftest.py"), suite / "conftest.py")
    (suite / "test_toy.py").write_text(TESTS)
    (suite / "pytest.ini").write_text("[pytest]\nmarkers =\n    data: needs the shared real data\n")
    env = {**os.environ, "PARANMT_HF_DATA": str(data), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(suite)],
                          cwd=suite, env=env, capture_output=True, text=True, timeout=120)
    out = proc.stdout
    assert "3 failed, 2 passed" in out, out[-3000:]
    assert "test_fixture_unmarked uses the data_dir fixture without @pytest.mark.data" in out
    assert f"test_reads_unmarked read the shared real data ({data.resolve() / 'eval' / 'pairs.tsv'}" in out
    assert "test_lists_unmarked read the shared real data" in out

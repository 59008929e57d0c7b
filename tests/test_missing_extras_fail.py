"""A dev extra missing in CI fails the suite (``pytest.importorskip`` skips turn into failures unless allowed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("where", ["module", "test"])
def test_a_missing_extra_fails_unless_skipping_is_allowed(tmp_path, where):
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    body = ('import pytest\npytest.importorskip("no_such_extra_xyz")\n\ndef test_a():\n    pass\n' if where == "module"
            else 'import pytest\n\ndef test_a():\n    pytest.importorskip("no_such_extra_xyz")\n')
    (tmp_path / "test_extra.py").write_text(body)
    env = {k: v for k, v in os.environ.items() if k != "PARANMT_HF_ALLOW_MISSING_EXTRAS"}

    def run(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                              cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True, timeout=120)

    strict = run()
    assert strict.returncode != 0 and "A dev extra is missing" in strict.stdout
    allowed = run(PARANMT_HF_ALLOW_MISSING_EXTRAS="1")
    assert allowed.returncode in (0, 5) and "1 skipped" in allowed.stdout  # 5: the one module skipped whole

"""The main job's console output: each results table once, no internal jargon (issue numbers)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = (ROOT / "scripts" / "main.sh").read_text(encoding="utf-8")


def _printed_strings(script: str) -> list[str]:
    return re.findall(r'echo "([^"]*)"', script)


def test_the_results_table_is_printed_once():
    writes = re.findall(r'paranmt-hf eval "\$OUT/model"[^\n]*\n[^\n]*', MAIN)
    assert writes and all("tee" not in w for w in writes)  # written to the file silently ...
    assert MAIN.count('cat "$OUT/results_table.txt"') == 1  # ... and shown once, at the end


def test_no_internal_jargon_in_what_the_job_prints(tmp_path, capsys, monkeypatch):
    assert not [s for s in _printed_strings(MAIN) if re.search(r"\bissue\b", s, re.I)]
    monkeypatch.syspath_prepend(str(ROOT / "results" / "bitext"))
    import side_by_side

    values = {row: 1.0 for row, _, _ in side_by_side.TARGETS}
    monkeypatch.setattr(side_by_side, "rows", lambda folder: dict(values))
    assert side_by_side.main(["english=a", "bitext=b", "--targets", "bitext"]) == 0
    out = capsys.readouterr().out
    assert "Cross-lingual targets" in out and not re.search(r"\bissue\b", out, re.I)

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
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks" / "quality"))
    import side_by_side

    values = {row: 1.0 for row, _, _ in side_by_side.TARGETS}
    monkeypatch.setattr(side_by_side, "rows", lambda folder: dict(values))
    assert side_by_side.main(["english=a", "bitext=b", "--targets", "bitext"]) == 0
    out = capsys.readouterr().out
    assert "Cross-lingual targets" in out and not re.search(r"\bissue\b", out, re.I)


def test_every_stage_of_the_job_records_its_time_and_load(tmp_path):
    """main.sh times each stage (JSON lines: stage, seconds, load) and hands them to benchmarks/quality/main_job.py."""
    import json
    import subprocess

    function = re.search(r"^stage\(\) \{.*?^\}", MAIN, re.M | re.S)
    assert function, "main.sh has no stage() function"
    stages = tmp_path / "stages.jsonl"
    script = (f'STAGES="{stages}"\nstage_start=$(date +%s.%N)\n{function.group(0)}\n'
              'stage install\nstage "train best (teacher pass included)"\n')
    subprocess.run(["bash", "-c", script], check=True)
    lines = [json.loads(line) for line in stages.read_text().splitlines()]
    assert [line["stage"] for line in lines] == ["install", "train best (teacher pass included)"]
    assert all(line["seconds"] >= 0 and line["load_1min"] >= 0 for line in lines)
    called = [name for name in re.findall(r"^\s*stage \"?([^\"\n]+)\"?$", MAIN, re.M)]
    assert {"install", "pivot", "publish"} <= set(called) and any(c.startswith("train") for c in called)
    assert '--stages "$STAGES"' in MAIN and '--json "$OUT/main_job.json"' in MAIN

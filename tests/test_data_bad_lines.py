from __future__ import annotations

import logging
from pathlib import Path

import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.data.records import BadLineError

GOOD = b"a good reference .\ta good paraphrase .\t0.75\n"

# (bad line, reason counted) for the para-nmt-50m.txt format
BAD_FULL = [
    (b"only one column\n", "missing column"),
    (b"ref only\tparaphrase only\n", "missing column"),
    (b"a\tb\t0.5\textra\n", "extra column"),
    (b"ref\tpara\tnot-a-number\n", "non-numeric score"),
    (b"ref\tpara\t\n", "non-numeric score"),
    (b"ref\tpara\tnan\n", "NaN or infinite score"),
    (b"ref\tpara\tNaN\n", "NaN or infinite score"),
    (b"ref\tpara\tinf\n", "NaN or infinite score"),
    (b"\tpara\t0.5\n", "empty side"),
    (b"ref\t   \t0.5\n", "empty side"),
    (b"caf\xe9 latin-1\tcafe\t0.5\n", "invalid UTF-8"),
    (b"ref\tpara \xff\xfe\t0.5\n", "invalid UTF-8"),
    (b"\n", "empty line"),
]

# valid lines that must never be dropped (edge cases of the format)
VALID_FULL = [
    "plain line .\tplain line !\t0.5\n",
    "crlf ending\tcrlf end\t0.1\r\n",
    "négatif score ünïcödé 你好\tnegative score unicode\t-0.05\n",
    "integer score\tinteger\t1\n",
    "exponent score\texp\t1e-3\n",
    "  padded  \t  padded too  \t 0.3 \n",
    "quotes \" and ' \\ backslash\tquotes\t0.9\n",
    "unicode line\u2028separator, vertical\x0btab, form\x0cfeed, cr\rinside\tstill one line\t0.6\n",
    "no final newline\tnone\t0.42",
]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize(("bad", "reason"), BAD_FULL)
def test_bad_line_is_skipped_counted_and_summarised(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                    bad: bytes, reason: str) -> None:
    path = _write(tmp_path / "para-nmt-50m.txt", [GOOD, bad, GOOD])
    with caplog.at_level(logging.WARNING, logger="paranmt_hf.data"):
        rows = list(load_paranmt("full", str(path)))
    assert len(rows) == 2
    assert "skipped 1 bad line(s) of 3" in caplog.text
    assert f"1 {reason}" in caplog.text
    assert f"para-nmt-50m.txt:2: {reason}" in caplog.text


@pytest.mark.parametrize(("bad", "reason"), BAD_FULL)
def test_bad_line_raises_with_file_and_line_in_strict_mode(tmp_path: Path, bad: bytes, reason: str) -> None:
    path = _write(tmp_path / "para-nmt-50m.txt", [GOOD, GOOD, bad, GOOD])
    with pytest.raises(BadLineError, match=rf"para-nmt-50m\.txt:3: {reason}"):
        list(load_paranmt("full", str(path), strict=True))


@pytest.mark.parametrize(
    ("config", "bad", "reason"),
    [
        ("processed-5m", b"a\tb\tc\n", "extra column"),
        ("processed-5m", b"only\n", "missing column"),
        ("processed-5m", b"a\t \n", "empty side"),
        ("pairs", b"a\tb\tx\n", "non-numeric score"),
        ("pairs", b"a\tb\t0.5\tnan\n", "NaN or infinite overlap"),
        ("pairs", b"a\tb\t1\t2\t3\n", "extra column"),
        ("bitext", b"\xc3\x28\tb\n", "invalid UTF-8"),
        ("bitext", b"hello\n", "missing column"),
    ],
)
def test_bad_lines_in_other_configs(tmp_path: Path, config: str, bad: bytes, reason: str) -> None:
    good = b"a side .\tthe other side .\n"
    path = _write(tmp_path / "en-es.tsv", [good, bad])
    assert len(list(load_paranmt(config, str(path)))) == 1
    with pytest.raises(BadLineError, match=rf"en-es\.tsv:2: {reason}"):
        list(load_paranmt(config, str(path), strict=True))


def test_no_valid_line_is_ever_dropped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lines = [v.encode("utf-8") for v in VALID_FULL]
    mixed = []
    for i, line in enumerate(lines[:-1]):
        mixed += [line, BAD_FULL[i % len(BAD_FULL)][0]]
    mixed.append(lines[-1])
    path = _write(tmp_path / "para-nmt-50m.txt", mixed)
    with caplog.at_level(logging.WARNING, logger="paranmt_hf.data"):
        rows = list(load_paranmt("full", str(path)))
    assert len(rows) == len(VALID_FULL)
    expected = [v.rstrip("\n").rstrip("\r").split("\t") for v in VALID_FULL]
    assert [[r["reference"], r["paraphrase"]] for r in rows] == [e[:2] for e in expected]
    assert [r["paraphrase_score"] for r in rows] == pytest.approx([float(e[2]) for e in expected])
    assert f"skipped {len(VALID_FULL) - 1} bad line(s)" in caplog.text
    # strict mode accepts the same valid lines
    clean = _write(tmp_path / "clean.txt", lines)
    assert len(list(load_paranmt("full", str(clean), strict=True))) == len(VALID_FULL)

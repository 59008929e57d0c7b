"""Reading pair files: encodings (BOM, UTF-16, NUL), broken compression, empty files, and exact shards."""

from __future__ import annotations

import gzip
import random
import re
import zipfile
from pathlib import Path

import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.cli.main import main
from paranmt_hf.data.reader import InputError, Shard, iter_blocks, iter_raw_lines
from paranmt_hf.data.records import iter_records

LINES = "a good reference .\ta good paraphrase .\t0.75\nanother one here\tand its paraphrase\t0.5\n"


def test_utf8_bom_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "bom.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + LINES.encode())
    rows = list(load_paranmt("full", str(path)))
    assert rows[0]["reference"] == "a good reference ."  # not "\ufeffa good reference ."


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_training_file_is_refused_naming_it(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "train.tsv"
    path.write_bytes(LINES.encode(encoding))
    with pytest.raises(InputError, match=r"train\.tsv.*(UTF-16|not UTF-8)"):
        list(load_paranmt("pairs", str(path)))
    with pytest.raises(InputError, match=r"train\.tsv"):
        load_paranmt("pairs", str(path), streaming=False, cache_dir=str(tmp_path / "cache"))
    assert main(["corpus", "dedup", str(path), "-o", str(tmp_path / "out.tsv")]) == 1


def test_nul_bytes_are_a_counted_bad_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "nul.tsv"
    path.write_bytes(LINES.encode() + b"nul\x00 inside\tthe line\t0.5\n")
    rows = list(load_paranmt("full", str(path)))
    assert len(rows) == 2 and all("\x00" not in r["reference"] for r in rows)
    assert "1 NUL byte" in caplog.text and "nul.tsv:3: NUL byte (column 1)" in caplog.text


def test_truncated_gzip_names_the_file_and_the_last_line_read(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    import zlib

    path = tmp_path / "cut.tsv.gz"
    data = gzip.compress((LINES * 20000).encode())
    path.write_bytes(data[: len(data) // 2])
    readable = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[: len(data) // 2]).count(b"\n")
    assert readable > 2000
    said = rf"cut\.tsv\.gz: truncated or corrupt compressed data after line {readable:,}\b"
    with pytest.raises(InputError, match=said):
        list(load_paranmt("full", str(path)))
    for tasks in ("1", "2"):  # one task reads it; two measure its size first
        capsys.readouterr()
        assert main(["corpus", "filter", str(path), "-o", str(tmp_path / "out.tsv"), "--no-language-filter",
                     "--quiet", "--workers", "1", "--tasks", tasks]) == 1
        assert re.search(said, capsys.readouterr().err)


def test_empty_file_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "empty.tsv"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.tsv: no valid pair"):
        load_paranmt("pairs", str(path), streaming=False, cache_dir=str(tmp_path / "cache"))
    assert list(load_paranmt("pairs", str(path))) == []  # streaming: simply nothing


def _corpus(tmp_path: Path) -> list[Path]:
    rng = random.Random(0)
    lines = [f"ref {i} {'x' * rng.randint(0, 40)}\tpara {i}\t0.{i % 10}\n" for i in range(3000)]
    plain = tmp_path / "a.tsv"
    plain.write_text("".join(lines[:1000]), encoding="utf-8")
    gz = tmp_path / "b.tsv.gz"
    gz.write_bytes(gzip.compress("".join(lines[1000:2000]).encode()))
    zipped = tmp_path / "c.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("c/part1.txt", "".join(lines[2000:2500]))
        archive.writestr("c/part2.txt", "".join(lines[2500:]).rstrip("\n"))  # no final newline
    return [plain, gz, zipped]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_partition_the_lines_in_order(tmp_path: Path, count: int) -> None:
    paths = _corpus(tmp_path)

    def lines(shard: Shard | None, block_bytes: int) -> list[tuple[str, int, bytes]]:
        out = []
        for block in iter_blocks(paths, shard=shard, block_bytes=block_bytes):
            for i, raw in enumerate(block.data.split(b"\n")[:-1]):
                out.append((block.source, block.first_line + i, raw))
        return out

    whole = lines(None, 1 << 20)
    assert len(whole) == 3000 and whole[-1][1] == 500 and whole[1000][0].endswith("b.tsv.gz")
    for block_bytes in (997, 1 << 20):
        joined = [line for index in range(count) for line in lines(Shard(index, count), block_bytes)]
        assert joined == whole  # every line once, with its file and line number
    assert [r[1] for r in whole[:3]] == [1, 2, 3]
    assert list(iter_raw_lines(paths[0]))[0][1:] == (1, whole[0][2] + b"\n")
    assert [rec["text_a"] for _, _, rec in iter_records(paths, "pairs")] == [w[2].split(b"\t")[0].decode()
                                                                            for w in whole]


def test_bad_shard_arguments() -> None:
    with pytest.raises(ValueError):
        Shard(2, 2)
    with pytest.raises(ValueError):
        Shard(0, 0)


def _parsed(path: Path, **kwargs: object) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """``([(line number, line) of the valid lines], {bad reason: count})`` of ``path`` read in blocks."""
    from paranmt_hf.data.records import BadLineReport, parse_block

    kept, report = [], BadLineReport()
    for block in iter_blocks([path], **kwargs):
        parsed = parse_block(block, "pairs")
        kept += list(zip(parsed.numbers, parsed.lines, strict=True))
        report.merge(parsed.report)
    return kept, dict(report.bad)


def test_a_line_without_end_is_read_at_constant_memory_and_counted(tmp_path: Path) -> None:
    """A decompression bomb (4 MB of gzip expanding to 40 MiB with no newline) is never held in memory: the line is
    skipped and counted as ``line too long`` and the lines after it keep their numbers."""
    import tracemalloc

    bomb = tmp_path / "bomb.tsv.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as handle:
        handle.write(b"good a\tgood b\n")
        for _ in range(20):
            handle.write(b"x" * (1 << 20))
        handle.write(b"\nafter a\tafter b\n")
        for _ in range(20):
            handle.write(b"y" * (1 << 20))  # and a last line without a newline
    tracemalloc.start()
    try:
        kept, bad = _parsed(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert kept == [(1, "good a\tgood b"), (3, "after a\tafter b")]
    assert bad == {"line too long": 2}
    assert peak < 8 * (1 << 20), f"peak {peak / (1 << 20):.1f} MiB"


@pytest.mark.parametrize("block_bytes", [7, 64, 333, 4096, 1 << 20])
def test_the_line_bound_gives_the_same_lines_whatever_the_block_size(tmp_path: Path, block_bytes: int) -> None:
    path = tmp_path / "pairs.tsv"
    rng = random.Random(4)
    lines = [f"{'a' * rng.randint(1, 90)}\t{'b' * rng.choice([1, 5, 40, 150, 400])}" for _ in range(300)]
    path.write_text("\n".join(lines), encoding="utf-8")  # the last line has no newline
    expected = [(i + 1, line) for i, line in enumerate(lines) if len(line.encode()) <= 200]
    kept, bad = _parsed(path, block_bytes=block_bytes, max_line_bytes=200)
    assert kept == expected and bad == {"line too long": len(lines) - len(expected)}
    shards = [_parsed(path, block_bytes=block_bytes, max_line_bytes=200, shard=Shard(i, 3)) for i in range(3)]
    assert [line for part, _ in shards for line in part] == expected
    assert _parsed(path, block_bytes=block_bytes, max_line_bytes=None)[0] == [(i + 1, x) for i, x in enumerate(lines)]


def test_max_line_bytes_flag_of_the_corpus_commands(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("datatrove")
    path = tmp_path / "pairs.tsv"
    long = "a long reference " * 150
    path.write_text(f"short one\tshort two\n{long}\tits paraphrase\nthird a\tthird b\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    base = ["corpus", "dedup", str(path), "--format", "pairs", "--quiet", "-o", str(out)]
    assert main([*base, "--max-line-bytes", "1000"]) == 0
    assert "1 bad (1 line too long)" in capsys.readouterr().err
    assert out.read_text().count("\n") == 2
    assert main([*base, "--max-line-bytes", "4000", "--overwrite"]) == 0
    assert "bad" not in capsys.readouterr().err and out.read_text().count("\n") == 3
    assert main([*base, "--max-line-bytes", "1000", "--overwrite", "--strict"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pairs.tsv:2: line too long" in err[0], err

"""Corpus commands answer a user's mistake with one sentence naming the file and what to do (never a traceback),
and never report success for an empty result."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("datatrove")

from paranmt_hf.cli.main import main  # noqa: E402


def _one_line(capsys: pytest.CaptureFixture) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("fmt", ["pairs", "bitext"])
def test_filtering_pairs_without_scores_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                        fmt: str) -> None:
    """The default (PRAS) filter tests the paraphrase score: a two-column file has none. ``bitext`` has no score
    column (refused before any work); ``pairs`` may have one (refused at the first pair without)."""
    src = tmp_path / "two.tsv"
    src.write_text("a b c d e f\tg h i j k l\nm n o p q r\ts t u v w x\n", encoding="utf-8")
    out = tmp_path / "kept.tsv"
    capsys.readouterr()
    assert main(["corpus", "filter", str(src), "--format", fmt, "-o", str(out), "--quiet", "--workers", "1"]) == 1
    line = _one_line(capsys)
    assert str(src) in line and "paraphrase score" in line and "corpus annotate" in line, line
    assert not out.exists() and not (tmp_path / ".kept.tsv.paranmt-work").exists()


def test_ctrl_c_names_the_command_in_one_line_and_exits_130(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from paranmt_hf.corpus.selection import dedup

    def interrupted(self: object, data: object = None, rank: int = 0, world_size: int = 1) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(dedup.HashStep, "run", interrupted)  # Ctrl-C while the (one, in-process) task works
    src = tmp_path / "pairs.tsv"
    src.write_text("a b c\td e f\t0.5\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["corpus", "dedup", str(src), "--format", "paranmt", "-o", str(tmp_path / "out.tsv"), "--quiet",
                 "--workers", "1"]) == 130
    captured = capsys.readouterr()
    lines = (captured.err + captured.out).strip().splitlines()
    assert lines == ["paranmt-hf corpus dedup: interrupted; rerun the same command to resume"], lines
    assert (tmp_path / ".out.tsv.paranmt-work" / "run.json").is_file()  # kept, to resume


@pytest.mark.parametrize("command", [["annotate", "--format", "paranmt"], ["filter"], ["dedup"], ["histogram"],
                                     ["backtranslate", "--model", "some/model"], ["make", "--model", "some/model"]])
def test_a_folder_given_as_input_is_one_sentence_saying_what_is_expected(tmp_path: Path, command: list[str],
                                                                          capsys: pytest.CaptureFixture) -> None:
    folder = tmp_path / "pairs"
    folder.mkdir()
    name, *options = command
    output = [] if name == "histogram" else ["-o", str(tmp_path / "out")]
    capsys.readouterr()
    assert main(["corpus", name, str(folder), *options, *output, "--quiet"]) == 1
    line = _one_line(capsys)
    assert f"{folder} is a folder: give the text files inside it" in line and "Errno" not in line, line


def test_messages_name_flags_on_the_command_line_and_keywords_in_python(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture) -> None:
    from paranmt_hf.corpus.errors import CorpusError
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.corpus.selection.dedup import dedup_files

    src = tmp_path / "pairs.tsv"
    src.write_text("".join(f"a b {i}\tc d {i}\t0.5\n" for i in range(400)), encoding="utf-8")
    out = tmp_path / "out.tsv"
    run = RunOptions(tasks=2, local_tasks=1, chunk_bytes=2000, progress=False)
    dedup_files([src], out, run, fmt="paranmt")  # half the run, kept in its work folder
    src.write_text("".join(f"a b {i}\tc d {i}\t0.6\n" for i in range(400)), encoding="utf-8")  # another input
    with pytest.raises(CorpusError) as err:
        dedup_files([src], out, RunOptions(tasks=2, chunk_bytes=2000, progress=False), fmt="paranmt")
    assert "RunOptions(restart=True)" in str(err.value) and "--" not in str(err.value)
    capsys.readouterr()
    assert main(["corpus", "dedup", str(src), "--format", "paranmt", "-o", str(out), "--tasks", "2",
                 "--chunk-bytes", "2000", "--quiet"]) == 1
    line = _one_line(capsys)
    assert "add --restart to start over" in line and "RunOptions" not in line and "=True" not in line, line


def test_a_scoring_model_that_is_not_there_stops_annotate_before_any_work(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    """Checked before the run: no work folder is left to refuse the corrected command as "another run"."""
    src = tmp_path / "pairs.tsv"
    src.write_text("a man plays\ta guy plays\t0.5\n", encoding="utf-8")
    out = tmp_path / "annotated.tsv"
    capsys.readouterr()
    assert main(["corpus", "annotate", str(src), "--model", str(tmp_path / "no-such-model"), "-o", str(out),
                 "--quiet", "--workers", "1"]) == 1
    assert "no-such-model not found" in _one_line(capsys)
    assert not out.exists() and not (tmp_path / ".annotated.tsv.paranmt-work").exists()


@pytest.mark.parametrize("options", [[], ["--limit", "5"], ["--format", "bitext"]])
def test_histogram_of_pairs_without_scores_says_to_annotate_them_first(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                       options: list[str]) -> None:
    """Every pass (all tasks, the first pairs, a format without a score column) refuses a two-column file in one
    sentence naming it."""
    src = tmp_path / "two.tsv"
    src.write_text("a b c\td e f\ng h i\tj k l\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["corpus", "histogram", str(src), *options, "--json", str(tmp_path / "h.json"), "--quiet",
                 "--workers", "1"]) == 1
    line = _one_line(capsys)
    assert str(src) in line and "score" in line and "corpus annotate" in line, line
    assert not (tmp_path / "h.json").exists()


def test_histogram_counts_refuse_a_nan_score_as_a_missing_one() -> None:
    from paranmt_hf.corpus.errors import CorpusError
    from paranmt_hf.corpus.output.histogram import HistogramCounts

    with pytest.raises(CorpusError, match="1 of the 2 scores are NaN"):
        HistogramCounts().add(["a b c", "d e f"], ["a b c", "d e f"], [0.5, float("nan")], [None, None])


@pytest.mark.parametrize(("fmt", "said"), [("paranmt", "no valid line in"), ("pairs", "without a paraphrase score")])
def test_acl2018_filter_of_pairs_without_scores_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                fmt: str, said: str) -> None:
    """The fold bounds rank every pair's score: a two-column file is refused as the other filters refuse it (its
    lines are bad lines of the ``paranmt`` format; pairs without a score in the ``pairs`` format)."""
    src = tmp_path / "two.tsv"
    src.write_text("a b c d e f\tg h i j k l\nm n o p q r\ts t u v w x\n", encoding="utf-8")
    out = tmp_path / "kept.tsv"
    capsys.readouterr()
    assert main(["corpus", "filter", str(src), "--format", fmt, "--filter", "acl2018", "-o", str(out), "--quiet",
                 "--workers", "1"]) == 1
    line = _one_line(capsys)
    assert str(src) in line and said in line, line
    assert not out.exists()

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.cli.main import main
from paranmt_hf.corpus.measures.overlap import trigram_overlap
from paranmt_hf.corpus.output.histogram import score_histogram
from paranmt_hf.corpus.pipeline.steps import CorpusStep
from paranmt_hf.corpus.selection.dedup import DedupStats, dedup_records
from paranmt_hf.data.records import iter_records

PAIRS = [
    ("i am very happy today", "i am so glad today"),
    ("the cat sat on the mat", "a cat was sitting on the mat"),
    ("we will leave in the morning", "we are going to leave tomorrow morning"),
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from paranmt_hf import build_encoder

    corpus = [s for pair in PAIRS for s in pair]
    path = tmp_path_factory.mktemp("model") / "word"
    build_encoder("word", corpus=corpus, vocab_size=40, embedding_dim=16).save_pretrained(path)
    return path


def _read_tsv(path: Path) -> list[list[str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


def test_annotate_adds_model_cosine_and_overlap(tmp_path: Path, model_dir: Path) -> None:
    from paranmt_hf import ParaNMTEncoder

    src = tmp_path / "mine.tsv"
    src.write_text("".join(f"{a}\t{b}\n" for a, b in PAIRS) + "the cat sat on the mat\tthe cat sat on the mat\n")
    out = tmp_path / "scored.tsv.gz"
    assert main(["corpus", "annotate", str(src), "-o", str(out), "--model", str(model_dir)]) == 0
    rows = _read_tsv(out)
    assert len(rows) == 4 and all(len(r) == 4 for r in rows)
    enc = ParaNMTEncoder.from_pretrained(model_dir)
    a = enc.encode([r[0] for r in rows], show_progress_bar=False)
    b = enc.encode([r[1] for r in rows], show_progress_bar=False)
    expected = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert [float(r[2]) for r in rows] == pytest.approx(expected.tolist(), abs=1e-5)
    assert float(rows[3][2]) == pytest.approx(1.0, abs=1e-5)
    assert [float(r[3]) for r in rows] == pytest.approx([trigram_overlap(r[0], r[1]) for r in rows])
    # 3-column output is exactly the para-nmt-50m.txt format: "build your own ParaNMT"
    own = tmp_path / "own-paranmt.txt"
    assert main(["corpus", "annotate", str(src), "-o", str(own), "--model", str(model_dir), "--no-overlap"]) == 0
    full = list(load_paranmt("full", str(own), strict=True))
    assert [r["paraphrase_score"] for r in full] == pytest.approx(expected.tolist(), abs=1e-5)


def test_dedup_keeps_one_copy_or_none_like_uniq_u(tmp_path: Path) -> None:
    src = tmp_path / "dups.tsv"
    src.write_text("a x\tb y\t0.5\nc\td\t0.1\na x\tb y\t0.5\na x\tb y\t0.7\ne\tf\t0.2\n")
    first = tmp_path / "first.tsv"
    assert main(["corpus", "dedup", str(src), "-o", str(first)]) == 0
    assert _read_tsv(first) == [["a x", "b y", "0.5"], ["c", "d", "0.1"], ["e", "f", "0.2"]]
    none = tmp_path / "none.tsv"
    assert main(["corpus", "dedup", str(src), "-o", str(none), "--keep", "none"]) == 0
    assert _read_tsv(none) == [["c", "d", "0.1"], ["e", "f", "0.2"]]
    line = tmp_path / "line.tsv"
    assert main(["corpus", "dedup", str(src), "-o", str(line), "--keep", "none", "--key", "line"]) == 0
    assert _read_tsv(line) == [["c", "d", "0.1"], ["a x", "b y", "0.7"], ["e", "f", "0.2"]]

    def records() -> list[dict]:
        return [rec for _, _, rec in iter_records([src], "pairs")]

    stats = DedupStats()
    assert len(list(dedup_records(records(), stats=stats))) == 3 and stats.removed == 2
    with pytest.raises(TypeError):
        list(dedup_records(records(), keep="none"))


def test_filter_cli_writes_full_format(tmp_path: Path) -> None:
    src = tmp_path / "para-nmt-50m.txt"
    src.write_text("w1 w2 w3 w4 w5 w6\tv1 v2 v3 v4 v5 v6\t0.9\nw1 w2 w3 w4 w5 w6\tv1 v2 v3 v4 v5 v6\t0.2\n")
    out = tmp_path / "kept.tsv"
    args = ["corpus", "filter", str(src), "-o", str(out), "--no-language-filter", "--tokenizer", "whitespace"]
    assert main(args) == 0
    assert _read_tsv(out) == [["w1 w2 w3 w4 w5 w6", "v1 v2 v3 v4 v5 v6", "0.9"]]  # the kept line, unchanged
    assert main([*args, "--sim-low", "0.1", "--with-overlap", "--overwrite"]) == 0
    assert [len(r) for r in _read_tsv(out)] == [4, 4]


def test_histogram_bins_are_table3_left_open(tmp_path: Path) -> None:
    records = [{"text_a": "a b c d", "text_b": "a b c e", "score": s} for s in (0.2, 0.21, 0.95, 1.0, -0.5, 1.5)]
    hist = score_histogram(records, tokenizer="whitespace")
    assert [b["range"] for b in hist["bins"]] == ["(-0.1, 0.2]", "(0.2, 0.4]", "(0.4, 0.6]", "(0.6, 0.8]",
                                                  "(0.8, 1]"]
    assert [b["count"] for b in hist["bins"]] == [1, 1, 0, 0, 2]
    assert (hist["below"], hist["above"], hist["total"]) == (1, 1, 6)
    assert hist["bins"][4]["overlap_mean"] == pytest.approx(0.5) and hist["bins"][4]["overlap_std"] == 0.0
    assert math.isnan(hist["bins"][2]["overlap_mean"])
    src = tmp_path / "p.tsv"
    src.write_text("a b c d\ta b c e\t0.9\nx y z\tq r s\t0.3\t0.25\n")
    js, png = tmp_path / "h.json", tmp_path / "h.png"
    assert main(["corpus", "histogram", str(src), "--json", str(js), "--plot", str(png),
                 "--tokenizer", "whitespace"]) == 0
    saved = json.loads(js.read_text())
    assert [b["count"] for b in saved["bins"]] == [0, 1, 0, 0, 1]
    assert saved["bins"][1]["overlap_mean"] == pytest.approx(0.25)  # the file's overlap column is used
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="score"):
        score_histogram([{"text_a": "a", "text_b": "b", "score": None}])


def test_annotate_without_model_keeps_scores_and_adds_overlap(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "scored.tsv"
    src.write_text("a b c d\ta b c e\t0.5\n")
    out = tmp_path / "out.tsv"
    assert main(["corpus", "annotate", str(src), "-o", str(out), "--tokenizer", "whitespace"]) == 0
    assert _read_tsv(out) == [["a b c d", "a b c e", "0.5", "0.5"]]
    unscored = tmp_path / "unscored.tsv"
    unscored.write_text("a b c d\ta b c e\n")
    # a user mistake is one line naming the file and line, not a traceback
    capsys.readouterr()
    assert main(["corpus", "annotate", str(unscored), "-o", str(out), "--overwrite", "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(r"error: .*unscored\.tsv:1: no score to keep: pass --model", err[0])
    assert _read_tsv(out) == [["a b c d", "a b c e", "0.5", "0.5"]]  # the earlier output is untouched


def test_language_identifier() -> None:
    from paranmt_hf.corpus.text.langid import LanguageIdentifier

    lid = LanguageIdentifier()
    assert lid.is_english("I don't believe we ought to attend the party this evening.")
    assert lid.language("Je ne pense pas que nous devrions aller à la fête ce soir.") == "fr"
    with pytest.raises(FileNotFoundError):
        LanguageIdentifier("/nonexistent/lid.176.bin")


def test_hash_set_merges_buffer_and_keeps_membership() -> None:
    from paranmt_hf.corpus.selection.dedup import HashSet64

    values = [2**64 - 1, 0, 2**63, 12345, *range(1000, 1100)]
    hs = HashSet64(buffer_size=8)
    assert hs.add_many(values[:3]) == [True, True, True]
    assert hs.add_many(values) == [False] * 3 + [True] * (len(values) - 3)
    assert hs.add_many([7, 7, 2**63]) == [True, False, False]
    assert len(hs) == len(values) + 1 and len(hs._buffer) < 8
    assert hs.contains_many([2**64 - 2, 1, 2**63, 2**64 - 1, 7]) == [False, False, True, True, True]


def test_corpus_cli_module_is_light() -> None:
    """Building the corpus parser (which reads the filter registry) imports none of the heavy packages."""
    import subprocess
    import sys

    code = ("import sys, paranmt_hf.cli.corpus as c, argparse; p = argparse.ArgumentParser(); "
            "c.add_parser(p.add_subparsers()); "
            "print([m for m in ('torch', 'datasets', 'transformers', 'pyarrow', 'nltk', 'fasttext') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_whitespace_filter_does_not_import_nltk(tmp_path: Path) -> None:
    # importing nltk costs ~2 CPU s per run: only the exact (NLTK) overlap needs it
    import subprocess
    import sys

    src = tmp_path / "in.txt"
    src.write_text("the cat sat on the mat today\ta cat was sitting on the mat\t0.6\n", encoding="utf-8")
    code = ("import sys; from paranmt_hf.cli.main import main; "
            f"main(['corpus', 'filter', {str(src)!r}, '-o', {str(tmp_path / 'out.tsv')!r}, '--workers', '1', "
            "'--quiet', '--overwrite', '--no-language-filter', '--tokenizer', TOKENIZER]); "
            "print('nltk' in sys.modules)")
    for tokenizer, imported in (("whitespace", "False"), ("nltk", "True")):
        out = subprocess.run([sys.executable, "-c", code.replace("TOKENIZER", repr(tokenizer))], capture_output=True,
                             text=True, check=True)
        assert out.stdout.strip().splitlines()[-1] == imported


class _ThreadsStep(CorpusStep):
    """Writes the BLAS and torch thread counts each batch runs with as its output line."""

    name = "threads"

    def setup(self, rank: int, world_size: int) -> None:
        import torch  # noqa: F401 (as a step's setup loads its model)

    def process(self, batch):  # noqa: ANN001, ANN201
        import torch
        from threadpoolctl import threadpool_info

        blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
        batch.parsed.lines = [f"{max(blas)} {min(blas)} {torch.get_num_threads()}"]
        return batch


@pytest.mark.parametrize(("workers", "tasks"), [(1, 1), (1, 3), (2, 3)])
def test_corpus_tasks_use_one_blas_thread(tmp_path: Path, workers: int, tasks: int) -> None:
    # a BLAS pool of every core in each task spins on the cores the other tasks need
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import torch

    from paranmt_hf.corpus.pipeline.parts import TsvPartWriter
    from paranmt_hf.corpus.pipeline.runner import JobOptions, RunOptions, Stage, execute, make_spec, merge_stage

    path = tmp_path / "in.tsv"
    path.write_text("".join(f"a{i}\tb{i}\n" for i in range(50)), encoding="utf-8")
    out = tmp_path / "threads.txt"
    run = RunOptions(workers=workers, tasks=tasks, chunk_bytes=64, progress=False)
    spec, n = make_spec("threads", [path], out, run, False, JobOptions(part_suffix=".tsv"))
    from paranmt_hf.corpus.pipeline.parts import merge_tsv

    stages = [Stage("main", [spec.reader("main", "pairs"), _ThreadsStep(), TsvPartWriter(spec.parts_dir())]),
              merge_stage(merge_tsv, spec)]
    threads = torch.get_num_threads()
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        torch.set_num_threads(2)
        try:
            execute(spec, stages, run, n)
            after = [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
            assert torch.get_num_threads() == 2  # the caller's settings are restored
        finally:
            torch.set_num_threads(threads)
    seen = [tuple(map(int, line.split())) for line in out.read_text().splitlines()]
    assert len(seen) > 2
    # tasks: one BLAS thread; torch keeps the caller's threads in this process, cores / workers in parallel tasks
    assert all(high == low == 1 and torch_threads == (2 if workers == 1 else 1) for high, low, torch_threads in seen)
    assert set(after) == {2}


def test_format_numbers_equals_format_number_per_value() -> None:
    from paranmt_hf.data.writer import format_number, format_numbers

    values = [*np.random.default_rng(0).random(1000).astype(np.float32).tolist(), 0.1, -0.0, 5e-324, 1.0, 7]
    assert format_numbers(values) == [format_number(v) for v in values]
    assert format_numbers(np.float32([0.5, 0.1])) == [format_number(v) for v in np.float32([0.5, 0.1])]


def test_histogram_counts_float32_cosines_of_one_and_prints_table3(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    # the cosine of a sentence with itself comes out as 1.0000002 in float32 (a rounding error)
    one = float(np.float32(1.0000002))
    assert one > 1.0
    hist = score_histogram([{"text_a": "a b c", "text_b": "a b c", "score": one},
                            {"text_a": "a b c", "text_b": "a b d", "score": 1.01}], tokenizer="whitespace")
    assert hist["bins"][4]["count"] == 1 and hist["above"] == 1
    src = tmp_path / "p.tsv"
    src.write_text(f"a b c d\ta b c d\t{one!r}\nx y z\tq r s\t0.3\n")
    capsys.readouterr()
    assert main(["corpus", "histogram", str(src), "--tokenizer", "whitespace", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert not out.lstrip().startswith("{")  # the Table 3 layout its help promises, not JSON
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["score", "range", "pairs", "share"] and "paper: pairs (M)" in lines[0]
    assert lines[-2].startswith("(0.8, 1]") and " 1 " in lines[-2] and "18.0" in lines[-2]
    assert "2 pairs; 0 scored <= -0.1, 0 above 1" in lines[-1]
    assert main(["corpus", "histogram", str(src), "--tokenizer", "whitespace", "--quiet", "--print-json"]) == 0
    assert json.loads(capsys.readouterr().out)["bins"][4]["count"] == 1


def test_histogram_of_several_tasks_equals_one_task_and_numpy(tmp_path: Path) -> None:
    # each task's overlap sums and sums of squares add up: mean and std of 3 tasks = 1 task = numpy's
    from paranmt_hf.corpus.output.histogram import TABLE3_EDGES, histogram_files
    from paranmt_hf.corpus.pipeline.runner import RunOptions

    rng = np.random.default_rng(0)
    scores, overlaps = rng.uniform(-0.05, 1.0, 90).round(4), rng.uniform(0.0, 1.0, 90).round(4)
    src = tmp_path / "pairs.tsv"
    src.write_text("".join(f"a{i} b c\tx{i} y z\t{s}\t{o}\n" for i, (s, o) in enumerate(zip(scores, overlaps,
                                                                                                strict=True))))
    bins = np.searchsorted(TABLE3_EDGES, scores, side="left") - 1
    results = []
    for tasks in (1, 3):
        hist, summary = histogram_files([src], tmp_path / f"{tasks}.json",
                                        RunOptions(workers=1, tasks=tasks, chunk_bytes=300, progress=False))
        assert summary.tasks == tasks
        results.append(hist)
    for hist in results:
        assert hist["total"] == 90 and hist["below"] == hist["above"] == 0
        for i, found in enumerate(hist["bins"]):
            mine = overlaps[bins == i]
            assert found["count"] == len(mine) > 5
            assert found["overlap_mean"] == pytest.approx(mine.mean(), abs=1e-12)
            assert found["overlap_std"] == pytest.approx(mine.std(), abs=1e-9) and found["overlap_std"] > 0.1
    for one, three in zip(results[0]["bins"], results[1]["bins"], strict=True):
        assert one["count"] == three["count"] and one["overlap_std"] == pytest.approx(three["overlap_std"], abs=1e-12)
    with pytest.raises(ValueError, match="1 of the 2 scores are NaN"):  # in no bin: refused, as a missing score
        score_histogram([{"text_a": "a", "text_b": "b", "score": s} for s in (0.5, float("nan"))])


def test_corpus_help_describes_every_option_with_the_papers_settings() -> None:
    # every option has help, the papers' settings are the examples, no reST markup in --help
    import argparse

    from paranmt_hf.cli.main import build_parser

    parser = build_parser()
    corpus = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith("corpus"))
    assert "``" not in corpus.format_help()
    tools = corpus._subparsers._group_actions[0].choices
    assert {"backtranslate", "make", "annotate", "filter", "dedup", "histogram", "export", "merge"} <= set(tools)
    for name, sub in tools.items():
        text = sub.format_help()
        assert "``" not in text, name
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            assert action.help, f"corpus {name} {action.option_strings or action.dest} has no help"
    def flat(tool: str) -> str:
        return " ".join(tools[tool].format_help().split())

    assert "EMNLP 2017: 50" in flat("backtranslate") and "ACL 2018: 12" in flat("backtranslate")
    assert "PRAS: 0.4" in flat("filter") and "ACL 2018: 30" in flat("filter")


def test_filter_cli_fast_tokenizer_keeps_the_exact_rows(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # raw sentences whose overlap needs NLTK's tokens: the fast mode keeps what the exact mode keeps, whitespace not
    src = tmp_path / "para-nmt-50m.txt"
    src.write_text("He said: \"I can't go.\" Then he left.\the said: \"i can't go .\" then he left .\t0.9\n"
                   "Mr. Smith isn't here, is he?\tMr. Smith is not here, is he?\t0.8\n", encoding="utf-8")
    kept = {}
    for name in ("nltk", "fast", "whitespace"):
        out = tmp_path / f"kept-{name}.tsv"
        assert main(["corpus", "filter", str(src), "-o", str(out), "--no-language-filter", "--quiet",
                     "--tokenizer", name]) == 0
        kept[name] = _read_tsv(out)
    assert kept["fast"] == kept["nltk"] == [["Mr. Smith isn't here, is he?", "Mr. Smith is not here, is he?", "0.8"]]
    assert kept["whitespace"] != kept["nltk"]
    with pytest.raises(SystemExit):
        main(["corpus", "filter", str(src), "-o", str(tmp_path / "x.tsv"), "--tokenizer", "nope"])
    assert "invalid choice: 'nope' (choose from" in capsys.readouterr().err


def test_corpus_histogram_counts_a_named_file_the_three_ways(tmp_path: Path) -> None:
    # the API the command calls: the first pairs in one process (a header read by name, not a bad line), every task
    # into a temporary file (nothing left beside the input), or into a JSON output (refused when it exists)
    from paranmt_hf.corpus.output.histogram import corpus_histogram
    from paranmt_hf.corpus.pipeline.runner import RunOptions
    from paranmt_hf.utils.atomic import OutputExistsError

    src = tmp_path / "scored.tsv"
    src.write_text("reference\tparaphrase\tbleu\tparaphrase_score\n" + "".join(
        f"a{i} b c\tx{i} y z\t0.1\t{score}\n" for i, score in enumerate((0.1, 0.3, 0.5, 0.7, 0.9))))
    run = RunOptions(workers=1, tasks=2, chunk_bytes=40, progress=False)
    first, summary = corpus_histogram([src], limit=3, tokenizer="whitespace")
    assert summary is None and first["total"] == 3 and [b["count"] for b in first["bins"]] == [1, 1, 1, 0, 0]
    every, summary = corpus_histogram([src], run, tokenizer="whitespace")
    assert summary.tasks == 2 and summary.report.total_bad == 0
    assert [b["count"] for b in every["bins"]] == [1, 1, 1, 1, 1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scored.tsv"]
    written, _ = corpus_histogram([src], run, output=tmp_path / "h.json", tokenizer="whitespace")
    assert json.loads((tmp_path / "h.json").read_text())["bins"] == written["bins"] == every["bins"]
    with pytest.raises(OutputExistsError):
        corpus_histogram([src], limit=1, output=tmp_path / "h.json")

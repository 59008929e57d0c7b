"""`paranmt-hf measures`: the registry listing, and training the language model and the reference classifier."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf.cli.main import main
from tests.test_corpus_measures import ARPA


def fake_lmplz(folder: Path) -> Path:
    """An ``lmplz`` stand-in that checks its arguments and writes the hand-written ARPA of test_corpus_measures."""
    folder.mkdir()
    arpa = folder / "model.arpa.txt"
    arpa.write_text(ARPA, encoding="utf-8")
    script = folder / "lmplz"
    script.write_text(f"""#!{sys.executable}
import sys
args = sys.argv[1:]
assert args[args.index("-o") + 1] == "3" and "--discount_fallback" in args, args
text = open(args[args.index("--text") + 1], encoding="utf-8").read()
assert text == "a b\\nb a\\n", repr(text)  # lower-cased nltk tokens, one sentence per line
open(args[args.index("--arpa") + 1], "w").write(open({str(arpa)!r}).read())
""", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_list_names_every_measure(capsys: pytest.CaptureFixture) -> None:
    from paranmt_hf.corpus.measures.registry import MEASURES

    assert main(["measures", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == list(MEASURES)


def test_train_lm_runs_lmplz_and_the_model_scores(tmp_path: Path) -> None:
    pytest.importorskip("kenlm")
    lmplz = fake_lmplz(tmp_path / "bin")
    data = tmp_path / "bt.tsv"
    data.write_text("reference\tparaphrase\ttranslation_cost\nA b\tx\t0.5\nB a\ty\t0.7\n", encoding="utf-8")
    assert main(["measures", "train-lm", str(data), "--output", str(tmp_path / "lm"), "--lmplz", str(lmplz)]) == 0
    config = json.loads((tmp_path / "lm" / "paranmt_lm.json").read_text(encoding="utf-8"))
    assert config["order"] == 3 and config["sentences"] == 2 and config["lowercase"]
    assert not (tmp_path / "lm" / "corpus.txt").exists()
    from paranmt_hf.corpus.measures.language_model import NgramLanguageModel

    assert NgramLanguageModel(tmp_path / "lm").perplexity_many(["A B"]).tolist() == pytest.approx([10 ** (1.4 / 3)])


def test_train_lm_without_lmplz_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENLM_BIN", str(tmp_path / "nowhere"))
    monkeypatch.setenv("PATH", str(tmp_path))
    data = tmp_path / "refs.txt"
    data.write_text("a b\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="lmplz was not found.*only queries models"):
        main(["measures", "train-lm", str(data), "--output", str(tmp_path / "lm")])
    assert not (tmp_path / "lm").exists()
    assert os.environ["KENLM_BIN"]


def test_train_classifier_on_backtranslations(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(100)]
    refs = [" ".join(rng.choice(words, size=6)) for _ in range(300)]
    rows = [f"{r}\t{r.split()[0]} {r.split()[0]} {r}\t0.5" for r in refs]
    data = tmp_path / "bt.tsv"
    data.write_text("reference\tparaphrase\ttranslation_cost\n" + "\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "clf"
    assert main(["measures", "train-classifier", str(data), "--output", str(out), "--validation", "30",
                 "--test", "30"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["references"] == 300 and report["split"] == {"test": 30, "validation": 30, "train": 240}
    assert (out / "classifier.npz").is_file() and (out / "classifier.json").is_file()
    with pytest.raises(SystemExit, match="exists"):
        main(["measures", "train-classifier", str(data), "--output", str(out)])


def test_read_columns_skips_the_header_reads_gzip_and_names_a_short_line(tmp_path: Path) -> None:
    import gzip

    from paranmt_hf.corpus.measures.columns import read_columns
    from paranmt_hf.data.records import BadLineError

    plain = tmp_path / "bt.tsv"
    plain.write_text("reference\tparaphrase\ttranslation_cost\tsource\nA b\tx\t0.5\tS\n\nB a\ty\t0.7\tT\n",
                     encoding="utf-8")
    packed = tmp_path / "more.tsv.gz"
    with gzip.open(packed, "wt", encoding="utf-8") as handle:
        handle.write("\ufeffC c\tz\n")  # no header; a byte-order mark is not text
    assert read_columns([plain, packed], (1, 2)) == [["A b", "B a", "C c"], ["x", "y", "z"]]
    assert read_columns([plain], (4,)) == [["S", "T"]]
    with pytest.raises(BadLineError, match=r"more\.tsv\.gz:1: 2 column\(s\), column 3 asked"):
        read_columns([plain, packed], (3,))

"""EMNLP 2017's threshold tuning (``paranmt-hf tune-filters``): grids, selection, resume, the dev-chosen table.

The candidates are built in code; a stand-in scorer (the mean translation length of the pairs it is given) makes the
dev choice predictable, and one test trains and evaluates a real model on the shared evaluation data.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf.cli.main import main as cli
from paranmt_hf.corpus.selection import tuning

MEASURES = ("translation_length", "translation_cost", "lm_perplexity", "reference_probability", "unigram_overlap",
            "bigram_overlap", "trigram_overlap", "bleu")


def write_candidates(path: Path, references: int = 30, per_reference: int = 3) -> Path:
    """A back-translation file with every filter column: reference r's candidate c is ``r % 20 + c`` tokens long,
    its other columns spread over their ranges."""
    lines = ["\t".join(("reference", "paraphrase", "source", *MEASURES))]
    for r in range(references):
        for c in range(per_reference):
            length = r % 20 + c + 1
            values = (length, 0.1 + 0.03 * r, 20 + 5 * r, (r % 10) / 10, 0.1 * c, 0.05 * c, 0.02 * c, 0.3 * c / 2)
            text = " ".join(f"w{r}_{c}_{i}" for i in range(length))
            lines.append("\t".join((f"reference {r}", text, f"Quelle {r}", *(f"{v:g}" for v in values))))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class LengthScorer:
    """Dev = the mean translation length of the pairs; counts its calls (each one a model trained)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, rows: list[tuple[str, str]], seed: int) -> dict[str, float]:
        self.calls += 1
        dev = float(np.mean([len(b.split()) for _, b in rows]))
        return {"dev": dev + seed / 100, "sts12_16": dev / 2, "stsb_test": dev / 3}


@pytest.fixture
def candidates(tmp_path: Path) -> tuning.Candidates:
    return tuning.read_candidates(write_candidates(tmp_path / "annotated.tsv"))


def test_reading_groups_candidates_by_reference_and_keeps_the_columns(candidates: tuning.Candidates) -> None:
    assert len(candidates.reference) == 90 and candidates.references == 30
    assert set(MEASURES) <= set(candidates.columns) and len(candidates.sha256) == 64
    assert candidates.group[:4].tolist() == [0, 0, 0, 1]


def test_grids_are_e17s_with_the_asked_extensions(candidates: tuning.Candidates) -> None:
    plain = tuning.grids()
    assert len(plain["length"]) == 14 and len(plain["translation cost"]) == 9
    assert plain["language model"][-1] == {"lm_perplexity": (None, None)}  # infinity: no upper bound
    assert {b["bleu"][0] for b in plain["BLEU"]} == {0.0, 0.1}
    assert {b["bleu"][0] for b in tuning.grids(full=True)["BLEU"]} == {0.0, 0.1, 0.2, 0.3}
    columns = tuning.filter_columns(candidates)
    assert len(tuning.grids(columns=columns)["translation cost"]) == 13  # + four percentiles


def test_select_takes_one_passing_candidate_per_reference(candidates: tuning.Candidates) -> None:
    columns = tuning.filter_columns(candidates)
    rows, passing = tuning.select(candidates, columns, {"translation_length": (0.0, 5.0)}, pairs=5, seed=0)
    assert passing == 10  # references 0-4 and 20-24 have a candidate of at most 5 tokens
    assert len(rows) == 5 and len({a for a, _ in rows}) == 5 and all(len(b.split()) <= 5 for _, b in rows)
    assert tuning.select(candidates, columns, {"translation_length": (0.0, 5.0)}, pairs=11, seed=0) == ([], 10)


def test_tune_records_every_setting_once_and_resumes(candidates: tuning.Candidates, tmp_path: Path) -> None:
    columns, runs = tuning.filter_columns(candidates), tmp_path / "runs.jsonl"
    scorer = LengthScorer()
    first = list(tuning.tune(candidates, columns, runs, scorer, pairs=12, seeds=[0, 1], only=["length"]))
    assert len(first) == 3 + 14 * 2  # the random baseline's seeds 0-2, then every length range with both seeds
    feasible = [r for r in first if "dev" in r]
    assert scorer.calls == len(feasible) < len(first)  # an infeasible setting trains nothing
    assert all(r["provenance"]["command"] and r["candidates_sha256"] == candidates.sha256 for r in first)
    assert list(tuning.tune(candidates, columns, runs, scorer, pairs=12, seeds=[0, 1], only=["length"])) == []
    with runs.open("a") as f:
        f.write('{"filter": "length", "bou')  # a kill in the middle of a line
    assert len(tuning.read_runs(runs)) == len(first)
    more = list(tuning.tune(candidates, columns, runs, scorer, pairs=12, seeds=[0, 1], only=["BLEU"]))
    assert {r["filter"] for r in more} == {"BLEU"}


def test_a_runs_file_of_other_candidates_is_refused(candidates: tuning.Candidates, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    list(tuning.tune(candidates, tuning.filter_columns(candidates), runs, LengthScorer(), 12, only=["length"]))
    other = tuning.read_candidates(write_candidates(tmp_path / "other.tsv", references=31))
    with pytest.raises(tuning.TuningError, match="another candidates file"):
        next(tuning.tune(other, tuning.filter_columns(other), runs, LengthScorer(), 12, only=["length"]))
    with pytest.raises(tuning.TuningError, match="another candidates file or --pairs"):
        next(tuning.tune(candidates, tuning.filter_columns(candidates), runs, LengthScorer(), 13, only=["length"]))
    with pytest.raises(tuning.TuningError, match="unknown filter 'colour'"):
        next(tuning.tune(candidates, tuning.filter_columns(candidates), runs, LengthScorer(), 12, only=["colour"]))


def test_the_summary_chooses_each_filter_on_mean_dev(candidates: tuning.Candidates, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    list(tuning.tune(candidates, tuning.filter_columns(candidates), runs, LengthScorer(), 8, seeds=[0, 1],
                     only=["length"]))
    rows = {row["filter"]: row for row in tuning.summarize(tuning.read_runs(runs))}
    random_row, length = rows[tuning.RANDOM], rows["length"]
    assert random_row["setting"] == "3 seeds" and random_row["dev_sd"] > 0
    feasible = [r for r in tuning.read_runs(runs) if r["filter"] == "length" and "dev" in r]
    best = max(feasible, key=lambda r: r["dev"])
    assert length["setting"] == tuning.describe(best["bounds"]) and length["seeds"] == [0, 1]
    assert length["dev"] == pytest.approx(np.mean([r["dev"] for r in feasible if r["bounds"] == best["bounds"]]))
    assert length["settings"] == 14 and 0 < length["feasible"] < 14
    table = tuning.format_table(list(rows.values()))
    assert "| length | 14 (" in table and "67.3 / 66.0" in table


def test_bad_candidates_get_one_sentence(tmp_path: Path) -> None:
    headerless = tmp_path / "pairs.tsv"
    headerless.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(tuning.TuningError, match="expected a header line"):
        tuning.read_candidates(headerless)
    short = write_candidates(tmp_path / "short.tsv")
    short.write_text(short.read_text() + "only\ttwo\n", encoding="utf-8")
    with pytest.raises(tuning.TuningError, match=r"short.tsv:92: 2 columns"):
        tuning.read_candidates(short)


def test_the_command_records_infeasible_settings_and_prints_the_table(tmp_path: Path, capsys) -> None:
    path = write_candidates(tmp_path / "annotated.tsv")
    work = tmp_path / "work"
    # 1,000 pairs: no setting has enough references, so nothing is trained
    assert cli(["tune-filters", str(path), "--work", str(work), "--pairs", "1000", "--only", "length"]) == 0
    out = capsys.readouterr().out
    assert "infeasible (30 references pass)" in out and "| length | 14 (0) | too few references pass" in out
    assert len(tuning.read_runs(work / "runs.jsonl")) == 3 + 14
    assert json.loads((work / "summary.json").read_text())["runs"] == 17
    assert cli(["tune-filters", str(path), "--work", str(work), "--table-only"]) == 0
    assert "| None (random) | 1 (0)" in capsys.readouterr().out


def test_the_command_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "pairs.tsv"
    bad.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="paranmt-hf tune-filters: .*expected a header line"):
        cli(["tune-filters", str(bad), "--work", str(tmp_path / "w")])
    with pytest.raises(SystemExit, match="holds no run"):
        cli(["tune-filters", str(bad), "--work", str(tmp_path / "w"), "--table-only"])


@pytest.mark.data
@pytest.mark.slow
def test_the_trainer_scorer_trains_and_scores_on_dev_and_test(data_dir: Path, tmp_path: Path) -> None:
    from paranmt_hf.evaluation.filter_tuning import trainer_scorer

    pairs = [(f"a man is playing the guitar number {i} .", f"a person plays guitar number {i} .") for i in range(40)]
    scores = trainer_scorer(tmp_path, data_dir=data_dir)(pairs, 0)
    assert len(scores["dev_parts"]) == 2 and scores["dev"] == pytest.approx(np.mean(scores["dev_parts"]))
    assert -100 <= scores["sts12_16"] <= 100 and -100 <= scores["stsb_test"] <= 100
    assert list(tmp_path.iterdir()) == []  # the model trained for the setting is removed

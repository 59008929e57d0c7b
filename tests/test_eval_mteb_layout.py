"""Our task JSON read back by mteb gives stock mteb's number; our extra numbers stay readable by our tables/card."""

from __future__ import annotations

import json

import numpy as np
import pytest

mteb = pytest.importorskip("mteb")
datasets = pytest.importorskip("datasets")

from paranmt_hf import build_encoder  # noqa: E402
from paranmt_hf.data.eval_sets import EVAL_SETS  # noqa: E402
from paranmt_hf.data.sts import STSPairs  # noqa: E402
from paranmt_hf.data.tatoeba import BitextPairs  # noqa: E402
from paranmt_hf.evaluation import format_table, run_task, write_results  # noqa: E402
from paranmt_hf.evaluation.metrics import mining_scores  # noqa: E402

STS17_SUBSETS = EVAL_SETS["STS17"].mteb_subsets
from paranmt_hf.evaluation.mteb_meta import MTEBWrapper  # noqa: E402
from paranmt_hf.evaluation.results import read_results, read_task_json  # noqa: E402
from paranmt_hf.evaluation.tasks import EvalTask  # noqa: E402
from paranmt_hf.hub.eval_results import build_eval_results, eval_tables, load_eval_results  # noqa: E402

WORDS = "a man woman dog cat plays runs sleeps guitar park sofa snow lake bird child eats red big".split()


def _sentences(rng: np.random.Generator, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, size=rng.integers(3, 7))) for _ in range(n)]


def _pairs(name: str, n: int, seed: int, languages: list[str] | None = None) -> STSPairs:
    rng = np.random.default_rng(seed)
    return STSPairs(name, _sentences(rng, n), _sentences(rng, n), list(rng.uniform(0, 5, n).round(1)),
                    languages or ["eng-Latn"])


def _task(name: str, kind: str, data: dict, paper_year: bool = False) -> EvalTask:
    return EvalTask(name, kind, lambda root: data, paper_year=paper_year)


YEAR = {"test": [_pairs("MSRpar", 40, 1), _pairs("MSRvid", 25, 2), _pairs("SMTeuroparl", 30, 3)]}
STSB = {"validation": [_pairs("default", 20, 4)], "test": [_pairs("default", 20, 5)]}
STS17 = {"test": [_pairs("ar-en", 20, 6, ["eng-Latn", "ara-Arab"]), _pairs("es-en-wmt", 20, 7),
                  _pairs("en-en", 20, 8)]}
rng = np.random.default_rng(9)
TATOEBA = {"test": [BitextPairs("fra", _sentences(rng, 30), _sentences(rng, 30))]}


@pytest.fixture(scope="module")
def encoder():
    return build_encoder("word", corpus=[" ".join(WORDS)], embedding_dim=8)


@pytest.fixture(scope="module")
def folder(encoder, tmp_path_factory):
    tasks = [_task("STS12", "sts", YEAR, True), _task("STSBenchmark", "sts", STSB), _task("STS17", "sts", STS17),
             _task("Tatoeba", "bitext", TATOEBA)]
    results = {t.name: run_task(encoder, t, tmp_path_factory.mktemp("none")) for t in tasks}
    return write_results(results, tmp_path_factory.mktemp("eval"), "me/tiny", "v1", {"name": "me/tiny"})


def _stock_mteb(encoder, task: mteb.AbsTask, dataset: object) -> mteb.TaskResult:
    task.dataset = dataset
    task.data_loaded = True
    model = MTEBWrapper(encoder, name="me/tiny", revision="v1")
    return mteb.evaluate(model, [task], cache=None, show_progress_bar=False).task_results[0]


@pytest.mark.filterwarnings("ignore:The task .* is superseded")
def test_get_score_is_stock_mteb_pooled_score(encoder, folder):
    pooled = {k: [x for p in YEAR["test"] for x in getattr(p, k)] for k in ("sentences1", "sentences2", "scores")}
    data = datasets.Dataset.from_dict({"sentence1": pooled["sentences1"], "sentence2": pooled["sentences2"],
                                       "score": pooled["scores"]})
    stock = _stock_mteb(encoder, mteb.get_task("STS12"), datasets.DatasetDict({"test": data}))
    ours = mteb.TaskResult.from_disk(folder / "STS12.json")  # extra top-level key: accepted, ignored
    assert [e["hf_subset"] for e in ours.scores["test"]] == ["default"]
    assert ours.get_score() == pytest.approx(stock.get_score(), abs=1e-6)
    assert ours.validate_and_filter_scores().get_score() == pytest.approx(stock.get_score(), abs=1e-6)
    # the per-dataset numbers would have pulled mteb's average away from the pooled score
    full = json.loads((folder / "STS12.json").read_text())["paranmt_hf"]["scores"]["test"]
    assert [e["hf_subset"] for e in full] == ["MSRpar", "MSRvid", "SMTeuroparl", "default"]
    assert np.mean([e["main_score"] for e in full]) != pytest.approx(stock.get_score(), abs=1e-6)


def test_stsb_and_sts17_views(folder):
    stsb = mteb.TaskResult.from_disk(folder / "STSBenchmark.json")
    assert list(stsb.scores) == ["test"]  # mteb's eval_splits: the validation split stays in ours only
    test = read_task_json(folder / "STSBenchmark.json").subset("default", "test")
    assert stsb.get_score() == pytest.approx(test["cosine_spearman"], abs=1e-6)
    sts17 = mteb.TaskResult.from_disk(folder / "STS17.json")
    task = mteb.get_task("STS17")
    assert sorted(sts17.hf_subsets) == ["en-ar", "en-en"] and set(sts17.hf_subsets) <= set(task.hf_subsets)
    for ours, (theirs, languages) in STS17_SUBSETS.items():
        assert theirs in task.hf_subsets and task.metadata.eval_langs[theirs] == languages, ours
    assert {e["hf_subset"]: e["languages"] for e in sts17.scores["test"]}["en-ar"] == ["eng-Latn", "ara-Arab"]


@pytest.mark.filterwarnings("ignore:The task .* is superseded", "ignore:To copy construct from a tensor")
def test_tatoeba_main_score_is_stock_mteb(encoder, folder):
    pairs = TATOEBA["test"][0]
    data = datasets.Dataset.from_dict({"sentence1": pairs.source, "sentence2": pairs.english})
    task = mteb.get_task("Tatoeba", languages=["fra"])
    task.hf_subsets = ["fra-eng"]
    stock = _stock_mteb(encoder, task, {"fra-eng": datasets.DatasetDict({"test": data})})
    ours = mteb.TaskResult.from_disk(folder / "Tatoeba.json")
    assert ours.hf_subsets == ["fra-eng"] and "fra-eng" in mteb.get_task("Tatoeba").hf_subsets
    theirs = stock.scores["test"][0]
    for key in ("precision", "recall", "f1", "accuracy", "main_score"):
        assert ours.scores["test"][0][key] == pytest.approx(theirs[key], abs=1e-6), key
    assert ours.get_score() == pytest.approx(stock.get_score(), abs=1e-6)


def test_mining_scores_match_sklearn():
    from sklearn.metrics import f1_score, precision_score, recall_score

    pred = np.array([0, 0, 2, 2, 4, 1, 6, 6])
    labels = np.arange(len(pred))
    got = mining_scores(pred)
    assert got["f1"] == pytest.approx(f1_score(labels, pred, zero_division=0, average="weighted"))
    assert got["precision"] == pytest.approx(precision_score(labels, pred, zero_division=0, average="weighted"))
    assert got["recall"] == pytest.approx(recall_score(labels, pred, zero_division=0, average="weighted"))


def test_extra_numbers_read_by_table_and_card(folder):
    results = read_results(folder)
    table = format_table(results, "me/tiny")
    assert "MSRpar" in table and "es-en-wmt" in table and "fra-eng" in table and "validation" in table
    year = results["STS12"]
    assert year.paper_year and year.paper_score == pytest.approx(
        100 * np.mean([year.subset(d.name)["paper_pearson"] for d in YEAR["test"]]))
    summary = load_eval_results(folder.parent.parent)
    tables = eval_tables(summary)
    assert [r[1] for r in tables["datasets"]] == ["MSRpar", "MSRvid", "SMTeuroparl"]
    assert tables["years"][0][1] == pytest.approx(year.paper_score, abs=1e-3)
    assert ("STSBenchmark", "validation") in {r[:2] for r in tables["other_sts"]}
    configs = {(r.dataset_type, r.dataset_config, r.metric_type) for r in build_eval_results(summary)}
    assert ("mteb/sts17-crosslingual-sts", "en-ar", "cosine_spearman") in configs
    assert not [c for c in configs if c[1] in ("es-en-wmt", "ar-en", "MSRpar")]
    assert ("mteb/tatoeba-bitext-mining", "fra-eng", "f1") in configs


def test_old_layout_still_read(folder):
    data = json.loads((folder / "STS12.json").read_text())
    legacy = {k: v for k, v in data.items() if k != "paranmt_hf"} | {"scores": data["paranmt_hf"]["scores"]}
    result = read_task_json(legacy)
    assert result.paper_year and result.kind == "sts"
    assert [e["hf_subset"] for e in result.scores["test"]] == ["MSRpar", "MSRvid", "SMTeuroparl", "default"]

"""Results in mteb's layout: one JSON per task + model_meta.json, loadable by mteb; the printed table."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from paranmt_hf.evaluation import evaluate, format_table, task_json, write_results

pytestmark = pytest.mark.data  # every test here reads the shared real data


class HashBagEncoder:
    def encode(self, sentences):
        out = np.zeros((len(sentences), 32), dtype=np.float32)
        for i, s in enumerate(sentences):
            for w in s.lower().split():
                out[i, zlib.crc32(w.encode()) % 32] += 1.0
        return out


@pytest.fixture(scope="module")
def results(data_dir):
    return evaluate(HashBagEncoder(), ["STS15", "STSBenchmark", "STS17:en-en,es-en", "Tatoeba:fra"],
                    data_dir=data_dir)


def test_layout_and_fields(results, tmp_path):
    folder = write_results(results, tmp_path, "me/hash-bag", "v1", {"name": "me/hash-bag", "revision": "v1"})
    assert folder == tmp_path / "me__hash-bag" / "v1"
    assert sorted(p.name for p in folder.iterdir()) == [
        "STS15.json", "STS17.json", "STSBenchmark.json", "Tatoeba.json", "model_meta.json"]
    sts15 = json.loads((folder / "STS15.json").read_text())
    assert set(sts15) == {"dataset_revision", "task_name", "mteb_version", "scores", "evaluation_time",
                          "kg_co2_emissions", "date", "paranmt_hf"}
    assert sts15["task_name"] == "STS15" and list(sts15["scores"]) == ["test"]
    # mteb's view: only what mteb's STS15 holds (the pooled year), mteb's keys only
    (pooled,) = sts15["scores"]["test"]
    assert pooled["hf_subset"] == "default" and pooled["main_score"] == pooled["cosine_spearman"]
    assert "paper_pearson" not in pooled and "n_pairs" not in pooled
    ours = sts15["paranmt_hf"]
    assert ours["kind"] == "sts" and ours["paper_year"] is True
    entries = {e["hf_subset"]: e for e in ours["scores"]["test"]}
    assert list(entries) == ["answers-forums", "answers-students", "belief", "headlines", "images", "default"]
    for e in entries.values():
        assert e["main_score"] == e["cosine_spearman"] and e["languages"] == ["eng-Latn"]
    assert entries["default"]["n_pairs"] == 3000 and "paper_pearson_mean" in entries["default"]
    assert entries["default"]["cosine_spearman"] == pooled["cosine_spearman"]
    assert entries["belief"]["n_skipped"] == 1625 and entries["belief"]["mteb_subset"] is None
    stsb = json.loads((folder / "STSBenchmark.json").read_text())
    assert list(stsb["scores"]) == ["test"] and list(stsb["paranmt_hf"]["scores"]) == ["validation", "test"]
    tatoeba_json = json.loads((folder / "Tatoeba.json").read_text())
    tatoeba = tatoeba_json["scores"]["test"][0]
    assert tatoeba["hf_subset"] == "fra-eng" and tatoeba["languages"] == ["fra-Latn", "eng-Latn"]
    assert set(tatoeba) == {"precision", "recall", "f1", "accuracy", "main_score", "hf_subset", "languages",
                            "mteb_version"} and tatoeba["main_score"] == tatoeba["f1"]
    errors = tatoeba_json["paranmt_hf"]["scores"]["test"][0]
    assert errors["accuracy"] == pytest.approx(1 - (errors["error_xx2en"] + errors["error_en2xx"]) / 200)
    assert tatoeba["accuracy"] == pytest.approx(1 - errors["error_xx2en"] / 100)
    assert json.loads((folder / "model_meta.json").read_text())["name"] == "me/hash-bag"


def test_mteb_loads_our_json(results, tmp_path):
    mteb = pytest.importorskip("mteb")
    folder = write_results(results, tmp_path, "me/hash-bag")
    for name in ("STS15", "STS17", "STSBenchmark", "Tatoeba"):
        loaded = mteb.TaskResult.from_disk(folder / f"{name}.json")
        assert loaded.task_name == name
        assert loaded.scores == json.loads((folder / f"{name}.json").read_text())["scores"] or loaded.scores
    sts17 = mteb.TaskResult.from_disk(folder / "STS17.json")
    assert sorted(sts17.hf_subsets) == ["en-en", "es-en"]
    assert task_json(results["STS15"])["scores"]["test"][0]["mteb_version"] == mteb.__version__


def test_table(results):
    table = format_table(results, "hash-bag")
    assert table.startswith("# hash-bag")
    assert "STS15" in table and "answers-forums" in table and "fra-eng" in table and "err xx>en" in table
    assert "STS12-16 paper protocol" not in table  # only printed when all five years ran
    header = table.splitlines()[:5]  # each score column names its protocol; the legend says how a year is averaged
    assert header[-1].split()[-4:] == ["papers'", "Pearson", "mteb", "Spearman"]
    assert any("the mean over its datasets" in line for line in header)
    assert any("all its pairs pooled" in line for line in header)

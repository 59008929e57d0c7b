"""The ``evaluate`` metric modules: loaded offline, the same code and numbers as ``paranmt-hf eval``, Hub packaging."""

from __future__ import annotations

import configparser
import hashlib
import sys
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import MagicMock

import evaluate  # the eval extra: part of [dev], so a missing one fails here instead of skipping
import huggingface_hub
import numpy as np
import pytest

from paranmt_hf.evaluation import evaluate as run_eval
from paranmt_hf.evaluation import metrics, paper_average
from paranmt_hf.hub.metric_space import push_metric, write_metric_space
from paranmt_hf.hub.publish import PublishError
from paranmt_hf.metrics import METRICS, metric_path
from paranmt_hf.metrics.paranmt_sts import sts_protocol
from paranmt_hf.metrics.paranmt_tatoeba import mining


class HashEncoder:
    """A cheap deterministic encoder: hashed bag of lower-cased words, 64-d."""

    def encode(self, sentences, **kwargs):
        out = np.zeros((len(sentences), 64), dtype=np.float32)
        for i, sentence in enumerate(sentences):
            for word in sentence.lower().split():
                out[i, int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % 64] += 1.0
        return out


@pytest.fixture(scope="module")
def sts_metric():
    return evaluate.load(metric_path("paranmt_sts"))


@pytest.fixture(scope="module")
def tatoeba_metric():
    return evaluate.load(metric_path("paranmt_tatoeba"))


def test_metrics_load_offline_and_are_the_package_code(sts_metric, tatoeba_metric):
    assert sts_metric.name == "paranmt_sts" and tatoeba_metric.name == "paranmt_tatoeba"
    # evaluate copies the module and its helper into its cache: the copies are the package's files, unchanged
    for metric, helper in ((sts_metric, "sts_protocol"), (tatoeba_metric, "mining")):
        loaded = sys.modules[type(metric).__module__]
        copy = Path(loaded.__file__).with_name(f"{helper}.py")
        assert copy.read_text() == (Path(metric_path(metric.name)) / f"{helper}.py").read_text()
    # and `paranmt-hf eval` runs the same functions
    assert metrics.sts_correlations is sts_protocol.sts_correlations
    assert metrics.bitext_error_rates is mining.bitext_error_rates


@pytest.mark.data
def test_sts_metric_matches_the_eval_numbers_on_sts12_16(sts_metric, data_dir):
    encoder = HashEncoder()
    results = run_eval(encoder, "sts12-16", data_dir=data_dir)
    from paranmt_hf.evaluation.tasks import get_task

    predictions, references, subsets = [], [], []
    for year in results:
        for ds in get_task(year).load(data_dir / "eval")["test"]:
            a, b = encoder.encode(ds.sentences1), encoder.encode(ds.sentences2)
            predictions += sts_protocol.paired_cosine(a, b).tolist()
            references += ds.scores
            subsets += [f"{year}/{ds.name}"] * len(ds)
    got = sts_metric.compute(predictions=predictions, references=references, subsets=subsets)
    for year, result in results.items():
        assert got["pearson_per_group"][year] == pytest.approx(result.paper_score, abs=1e-9)
        for entry in result.scores["test"]:
            if entry["hf_subset"] != "default":
                assert got["pearson_per_subset"][f"{year}/{entry['hf_subset']}"] == pytest.approx(
                    100 * entry["paper_pearson"], abs=1e-9)
    assert got["pearson"] == pytest.approx(paper_average(results), abs=1e-9)
    assert 10 < got["pearson"] < 90 and got["n_pairs"] == len(references)


def test_sts_metric_aggregation_and_edge_cases(sts_metric):
    rng = np.random.default_rng(0)
    pred, gold = rng.random(40), rng.random(40) * 5
    subsets = ["A/x"] * 10 + ["A/y"] * 10 + ["B/z"] * 20
    got = sts_metric.compute(predictions=pred, references=gold, subsets=subsets)
    per = {s: 100 * np.corrcoef(pred[m], gold[m])[0, 1] for s, m in
           (("A/x", slice(0, 10)), ("A/y", slice(10, 20)), ("B/z", slice(20, 40)))}
    assert got["pearson_per_subset"] == pytest.approx(per)
    assert got["pearson_per_group"] == pytest.approx({"A": (per["A/x"] + per["A/y"]) / 2, "B": per["B/z"]})
    assert got["pearson"] == pytest.approx(((per["A/x"] + per["A/y"]) / 2 + per["B/z"]) / 2)
    # no groups: the mean over datasets; no subsets: one dataset; constant predictions: 0
    flat = sts_metric.compute(predictions=pred, references=gold, subsets=[s[2:] for s in subsets])
    assert flat["pearson"] == pytest.approx(np.mean(list(per.values()))) and "pearson_per_group" not in flat
    assert sts_metric.compute(predictions=pred, references=gold)["pearson"] == pytest.approx(
        100 * np.corrcoef(pred, gold)[0, 1])
    assert sts_metric.compute(predictions=[1.0] * 5, references=[0, 1, 2, 3, 4])["pearson"] == 0.0
    with pytest.raises(ValueError, match="subset names"):
        sts_metric.compute(predictions=pred, references=gold, subsets=["a"])


@pytest.mark.data
def test_tatoeba_metric_matches_the_eval_numbers(tatoeba_metric, data_dir):
    encoder = HashEncoder()
    (result,) = run_eval(encoder, ["Tatoeba:fra"], data_dir=data_dir).values()
    from paranmt_hf.evaluation import load_tatoeba

    (pairs,) = load_tatoeba(data_dir / "eval" / "tatoeba", ["fra"])
    got = tatoeba_metric.compute(source_embeddings=encoder.encode(pairs.source),
                                 target_embeddings=encoder.encode(pairs.english))
    want = result.subset("fra-eng")
    for key in ("error_xx2en", "error_en2xx", "error", "xx2en_f1", "main_score", "n_pairs"):
        assert got[key] == pytest.approx(want[key]), key
    assert 0 < got["error"] < 100


def test_metric_files_are_installed_with_the_package():
    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).resolve().parents[1] / "setup.cfg")
    packages = cfg["options"]["packages"].split()
    data = dict(cfg["options.package_data"])
    for name in METRICS:
        assert f"paranmt_hf.metrics.{name}" in packages and "*.md" in data[f"paranmt_hf.metrics.{name}"]
        folder = Path(metric_path(name))
        assert (folder / f"{name}.py").is_file() and (folder / "README.md").is_file()
        # evaluate parses imports line by line: one module per import line
        for line in (folder / f"{name}.py").read_text().splitlines():
            assert not (line.startswith("import ") and "," in line), line
    with pytest.raises(KeyError):
        metric_path("pearsonr")


def test_metric_space_folder_loads_offline(tmp_path):
    folder = write_metric_space("paranmt_sts", tmp_path / "paranmt_sts", repo_id="me/paranmt_sts")
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "app.py", "paranmt_sts.py", "requirements.txt",
                                                       "sts_protocol.py"]
    card = (folder / "README.md").read_text()
    assert card.startswith("---\ntitle: ParaNMT Sts\n") and "- evaluate\n- metric\n" in card and "sdk: gradio" in card
    assert 'evaluate.load("me/paranmt_sts")' in (folder / "app.py").read_text()
    assert "scipy" in (folder / "requirements.txt").read_text()
    loaded = evaluate.load(str(folder))
    assert loaded.compute(predictions=[0.1, 0.4, 0.9], references=[1, 2, 3])["pearson"] > 90
    with pytest.raises(FileExistsError):
        write_metric_space("paranmt_sts", folder)


def test_push_metric_creates_an_evaluate_space(monkeypatch):
    api = MagicMock()
    uploaded: list[str] = []
    api.upload_folder.side_effect = lambda **kw: (uploaded.extend(p.name for p in Path(kw["folder_path"]).iterdir())
                                                  or SimpleNamespace(commit_url="https://hf.co/spaces/me/x/commit/1"))
    tokens: list[str | None] = []
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda token=None: tokens.append(token) or api)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    assert push_metric("paranmt_tatoeba", "me/paranmt_tatoeba", token="hf_x", private=True) == (
        "https://hf.co/spaces/me/x/commit/1")
    assert tokens == ["hf_x"]
    api.create_repo.assert_called_once_with("me/paranmt_tatoeba", repo_type="space", space_sdk="gradio",
                                            private=True, exist_ok=True)
    assert api.upload_folder.call_args.kwargs["repo_type"] == "space"
    assert {"mining.py", "paranmt_tatoeba.py", "README.md", "app.py", "requirements.txt"} == set(uploaded)


def test_push_metric_errors_are_clear(monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(PublishError, match="HF_HUB_OFFLINE"):
        push_metric("paranmt_sts", "me/paranmt_sts")
    with pytest.raises(PublishError, match="not a Hub repository id"):
        push_metric("paranmt_sts", "no-owner")


@pytest.mark.parametrize("metric", ["sts_metric", "tatoeba_metric"])
def test_the_docstring_examples_run(metric, request):
    """The example each metric shows (its inputs description, also on its Hub page) runs as written."""
    import doctest

    text = request.getfixturevalue(metric).inputs_description
    test = doctest.DocTestParser().get_doctest(text, {"evaluate": evaluate}, metric, None, 0)
    assert test.examples, "the metric shows no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries == len(test.examples)

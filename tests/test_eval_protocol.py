"""Scores and the papers' protocol: cosine, correlations, Tatoeba error rates, per-year and over-year averages."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from paranmt_hf.evaluation import (
    bitext_error_rates,
    evaluate,
    load_sts_year,
    paired_cosine,
    paper_average,
    sts_correlations,
)
from paranmt_hf.evaluation.encoders import encode
from paranmt_hf.evaluation.metrics import mteb_paired_cosine


class HashBagEncoder:
    """A deterministic bag-of-words encoder (hashed words), standing in for a model."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def encode(self, sentences, batch_size=32):
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for i, s in enumerate(sentences):
            for w in s.lower().split():
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
        return out


def test_paired_cosine_and_zero_vectors():
    a = np.array([[1.0, 0.0], [0.0, 0.0], [3.0, 4.0]])
    b = np.array([[1.0, 1.0], [1.0, 0.0], [3.0, 4.0]])
    assert np.allclose(paired_cosine(a, b), [1 / np.sqrt(2), 0.0, 1.0])  # papers: zero vector -> 0
    mteb_cos = mteb_paired_cosine(a.astype(np.float32), b.astype(np.float32))
    assert mteb_cos.dtype == np.float32 and mteb_cos[2] == 1.0  # identical -> exactly 1 (ties as in mteb)
    assert np.allclose(mteb_cos, [1 / np.sqrt(2), 0.5, 1.0])  # mteb: zero vector -> 0.5
    with pytest.raises(ValueError):
        paired_cosine(a, b[:2])


def test_sts_correlations_match_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(40, 8)), rng.normal(size=(40, 8))
    gold = rng.uniform(0, 5, size=40)
    cos = np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    out = sts_correlations(a, b, gold)
    assert out["paper_pearson"] == pytest.approx(pearsonr(cos, gold).statistic, abs=1e-12)
    assert out["paper_spearman"] == pytest.approx(spearmanr(cos, gold).statistic, abs=1e-12)
    assert out["cosine_pearson"] == pytest.approx(out["paper_pearson"], abs=1e-9)
    assert out["cosine_spearman"] == pytest.approx(spearmanr(cos, gold).statistic, abs=1e-12)
    assert out["main_score"] == out["cosine_spearman"] and out["n_pairs"] == 40
    assert out["euclidean_spearman"] == pytest.approx(spearmanr(-np.linalg.norm(a - b, axis=1), gold).statistic)


def test_bitext_error_rates_both_directions():
    rng = np.random.default_rng(1)
    src = rng.normal(size=(10, 16))
    eng = src.copy()
    assert bitext_error_rates(src, eng)["error"] == 0.0
    eng[[0, 1]] = eng[[1, 0]]  # two swapped translations: 2 errors of 10 in each direction
    out = bitext_error_rates(src, eng)
    assert (out["error_xx2en"], out["error_en2xx"], out["accuracy"]) == (20.0, 20.0, 0.8)
    eng2 = src.copy()
    eng2[3] = src[4]  # en->xx: eng 3 retrieves src 4 (1 error); xx->en: src 3 and 4 both miss (tie -> index 3)
    out2 = bitext_error_rates(src, eng2)
    assert out2["error_en2xx"] == 10.0 and out2["error_xx2en"] >= 10.0


def test_encode_adapts_to_signatures():
    class Plain:
        def encode(self, sentences):
            return [[1.0, 2.0]] * len(sentences)

    assert encode(Plain(), ["a", "b"]).dtype == np.float32
    with pytest.raises(ValueError, match="shape"):
        encode(type("Bad", (), {"encode": lambda self, s: np.zeros(3)})(), ["a", "b"])


@pytest.mark.data
def test_paper_protocol_on_real_sts12_16(data_dir):
    encoder = HashBagEncoder()
    results = evaluate(encoder, "sts12-16", data_dir=data_dir)
    year_means = []
    for year, result in results.items():
        datasets = load_sts_year(data_dir / "eval" / "sts", year)
        pearsons = []
        for ds in datasets:
            e1, e2 = encoder.encode(ds.sentences1), encoder.encode(ds.sentences2)
            cos = np.nan_to_num(paired_cosine(e1, e2))
            pearsons.append(pearsonr(cos, ds.scores).statistic)
            assert result.subset(ds.name)["paper_pearson"] == pytest.approx(pearsons[-1], abs=1e-12)
        default = result.subset("default")
        assert default["paper_pearson_mean"] == pytest.approx(np.mean(pearsons), abs=1e-12)
        assert default["n_pairs"] == sum(len(d) for d in datasets)  # mteb's pooled set
        assert result.paper_score == pytest.approx(100 * np.mean(pearsons))
        year_means.append(100 * np.mean(pearsons))
    assert paper_average(results) == pytest.approx(np.mean(year_means))


@pytest.mark.data
def test_other_tasks_run_subsampled(data_dir):
    results = evaluate(HashBagEncoder(), ["STSBenchmark", "STS17", "Tatoeba:fra,deu"], data_dir=data_dir,
                       max_pairs=50)
    assert [e["hf_subset"] for e in results["STS17"].scores["test"]][0] == "ar-ar"
    assert set(results["STSBenchmark"].scores) == {"validation", "test"}
    tatoeba = results["Tatoeba"].scores["test"]
    assert [e["hf_subset"] for e in tatoeba] == ["fra-eng", "deu-eng"]  # order as asked
    assert all(e["n_pairs"] == 50 and 0 <= e["error_xx2en"] <= 100 for e in tatoeba)
    assert paper_average(results) is None

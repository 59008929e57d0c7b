"""The sentence-transformers evaluator (STS suite) on a real SentenceTransformer and the real data."""

from __future__ import annotations

import pytest

st = pytest.importorskip("sentence_transformers")

from paranmt_hf.evaluation import evaluate, load_sts17  # noqa: E402
from paranmt_hf.evaluation.st_evaluator import STSSuiteEvaluator  # noqa: E402

pytestmark = pytest.mark.data  # every test here reads the shared real data


@pytest.fixture(scope="module")
def st_model(data_dir):
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    sentences = [s for t in load_sts17(data_dir / "eval" / "sts", ["en-en"]) for s in t.sentences1 + t.sentences2]
    vocab = {"[UNK]": 0, "[PAD]": 1}
    for s in sentences:
        for w in s.lower().replace(".", " ").split():
            vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return st.SentenceTransformer(modules=[StaticEmbedding(tok, embedding_dim=16)], device="cpu")


def test_default_is_sts17_en_en_pearson(st_model, data_dir):
    evaluator = STSSuiteEvaluator(data_dir=data_dir)
    metrics = evaluator(st_model)
    assert evaluator.primary_metric == "sts_mean_pearson" and evaluator.greater_is_better
    assert set(metrics) == {"sts_STS17_en-en_pearson", "sts_STS17_en-en_spearman", "sts_mean_pearson"}
    ours = evaluate(st_model, "STS17:en-en", data_dir=data_dir)["STS17"].subset("en-en")
    assert metrics["sts_mean_pearson"] == pytest.approx(ours["paper_pearson"], abs=1e-6)
    assert metrics["sts_STS17_en-en_spearman"] == pytest.approx(ours["cosine_spearman"], abs=1e-6)


def test_suite_with_years_and_spearman(st_model, data_dir):
    evaluator = STSSuiteEvaluator(["STS13", "STSBenchmark:validation"], data_dir=data_dir, metric="spearman",
                                  name="dev", max_pairs=100)
    metrics = evaluator(st_model)
    assert evaluator.primary_metric == "dev_mean_spearman"
    assert "dev_STS13_FNWN_pearson" in metrics and "dev_STSBenchmark_default_validation_spearman" in metrics
    # the primary metric: STS13's per-year mean (papers' protocol) and STS-B validation, averaged over the 2 tasks
    ours = evaluate(st_model, ["STS13", "STSBenchmark:validation"], data_dir=data_dir, max_pairs=100)
    year = ours["STS13"].subset("default")["paper_spearman_mean"]
    stsb = ours["STSBenchmark"].subset("default", "validation")["cosine_spearman"]
    assert metrics["dev_mean_spearman"] == pytest.approx((year + stsb) / 2, abs=1e-6)
    assert metrics["dev_STSBenchmark_default_validation_spearman"] == pytest.approx(stsb, abs=1e-6)
    assert evaluator.get_config_dict() == {"tasks": ["STS13", "STSBenchmark"], "metric": "spearman"}
    with pytest.raises(ValueError, match="STS tasks only"):
        STSSuiteEvaluator(["Tatoeba"], data_dir=data_dir)
    with pytest.raises(ValueError, match="metric"):
        STSSuiteEvaluator(metric="kendall", data_dir=data_dir)

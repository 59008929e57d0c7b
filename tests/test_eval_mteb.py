"""mteb integration: ModelMeta, EncoderProtocol, and agreement of mteb's Spearman with ours on the same data."""

from __future__ import annotations

import pytest

mteb = pytest.importorskip("mteb")
datasets = pytest.importorskip("datasets")

from paranmt_hf.evaluation import evaluate, load_sts_year, load_stsb  # noqa: E402
from paranmt_hf.evaluation.mteb_meta import MTEBWrapper, build_model_meta, meta_to_dict  # noqa: E402

pytestmark = pytest.mark.data  # every test here reads the shared real data


@pytest.fixture(scope="module")
def tiny_encoder(data_dir):
    from paranmt_hf import build_encoder

    corpus = [s for d in load_sts_year(data_dir / "eval" / "sts", "STS12") for s in d.sentences1 + d.sentences2]
    return build_encoder("word", corpus=corpus, vocab_size=3000, embedding_dim=32)


def _inject(task_name, split_data):
    task = mteb.get_task(task_name)
    task.dataset = datasets.DatasetDict(
        {split: datasets.Dataset.from_dict({"sentence1": p.sentences1, "sentence2": p.sentences2, "score": p.scores})
         for split, p in split_data.items()}
    )
    task.data_loaded = True
    return task


def test_model_meta_and_protocol(tiny_encoder):
    wrapped = MTEBWrapper(tiny_encoder, name="paranmt-hf/tiny-word", revision="0.0.1")
    meta = wrapped.mteb_model_meta
    assert isinstance(wrapped, mteb.EncoderProtocol)
    assert meta.name == "paranmt-hf/tiny-word" and meta.embed_dim == 32
    assert meta.training_datasets == set()  # explicit: zero-shot on every mteb task
    assert meta.n_parameters == sum(p.numel() for p in tiny_encoder.model.parameters())
    assert str(meta.similarity_fn_name.value) == "cosine"
    d = meta_to_dict(build_model_meta("me/x", 8, training_datasets={"STSBenchmark"}))
    assert d["name"] == "me/x" and d["training_datasets"] == ["STSBenchmark"]


@pytest.mark.filterwarnings("ignore:The task .* is superseded")
@pytest.mark.parametrize("task_name", ["STSBenchmark", "STS12"])
def test_mteb_spearman_agrees_with_ours(data_dir, tiny_encoder, task_name):
    sts = data_dir / "eval" / "sts"
    if task_name == "STSBenchmark":
        pairs = load_stsb(sts, "test")
        ours = evaluate(tiny_encoder, "STSBenchmark:test", data_dir=data_dir)["STSBenchmark"].subset("default")
    else:  # mteb's STS12 is the five datasets pooled: our "default" subset
        parts = load_sts_year(sts, "STS12")
        pairs = type(parts[0])("default", [s for p in parts for s in p.sentences1],
                               [s for p in parts for s in p.sentences2], [g for p in parts for g in p.scores])
        ours = evaluate(tiny_encoder, "STS12", data_dir=data_dir)["STS12"].subset("default")
    task = _inject(task_name, {"test": pairs})
    model = MTEBWrapper(tiny_encoder, name="paranmt-hf/tiny-word", revision="0.0.1")
    result = mteb.evaluate(model, [task], cache=None, show_progress_bar=False)
    theirs = result.task_results[0].scores["test"][0]
    assert theirs["hf_subset"] == "default"
    assert abs(theirs["cosine_spearman"] - ours["cosine_spearman"]) < 1e-6
    assert abs(theirs["cosine_pearson"] - ours["cosine_pearson"]) < 1e-6
    assert abs(theirs["main_score"] - ours["main_score"]) < 1e-6

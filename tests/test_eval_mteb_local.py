"""Stock mteb tasks run offline on a local copy of the shared data (``task.metadata.dataset`` -> a folder), through
``SentenceTransformer(dir)`` and through paranmt_hf's mteb wrapper, and score exactly as ``paranmt-hf eval``."""

from __future__ import annotations

import pytest

mteb = pytest.importorskip("mteb")

from sentence_transformers import SentenceTransformer  # noqa: E402

from paranmt_hf import ParaNMTEncoder, build_encoder  # noqa: E402
from paranmt_hf.evaluation import evaluate, load_sts_year  # noqa: E402
from paranmt_hf.evaluation.mteb_layout import mteb_scores  # noqa: E402
from paranmt_hf.evaluation.mteb_local import local_mteb_tasks  # noqa: E402
from paranmt_hf.evaluation.mteb_meta import MTEBWrapper  # noqa: E402

pytestmark = pytest.mark.data  # every test here reads the shared real data

TASKS = ["STSBenchmark", "STS12", "STS17", "Tatoeba"]


@pytest.fixture(scope="module")
def model_dir(data_dir, tmp_path_factory):
    corpus = [s for d in load_sts_year(data_dir / "eval" / "sts", "STS12") for s in d.sentences1 + d.sentences2]
    path = tmp_path_factory.mktemp("m") / "word"
    build_encoder("word", corpus=corpus, vocab_size=3000, embedding_dim=16).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def ours(data_dir, model_dir):
    results = evaluate(ParaNMTEncoder.from_pretrained(model_dir), TASKS, data_dir=data_dir)
    return {name: {e["hf_subset"]: e["main_score"] for e in mteb_scores(name, r.scores)["test"]}
            for name, r in results.items()}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("loader", ["sentence-transformers", "paranmt_hf"])
def test_stock_mteb_tasks_on_local_data_score_as_paranmt_eval(data_dir, model_dir, ours, tmp_path, loader):
    tasks = local_mteb_tasks(TASKS, data_dir=data_dir, cache_dir=tmp_path)
    assert tasks[0].metadata.dataset == {"path": str((tmp_path / "STSBenchmark").resolve()), "revision": "local"}
    if loader == "sentence-transformers":
        model = SentenceTransformer(str(model_dir), device="cpu", trust_remote_code=True)
        assert type(model[0]).__name__ == "ParaNMTInputModule"  # mteb runs the fast module
    else:
        model = MTEBWrapper(ParaNMTEncoder.from_pretrained(model_dir), name="paranmt-hf/tiny-word")
    result = mteb.evaluate(model, tasks, cache=None, show_progress_bar=False)
    theirs = {r.task_name: {e["hf_subset"]: e["main_score"] for e in r.scores["test"]} for r in result.task_results}
    assert set(theirs) == set(TASKS)
    for task in TASKS:
        assert set(theirs[task]) == set(ours[task]), task
        for subset, value in ours[task].items():
            assert abs(theirs[task][subset] - value) < 1e-6, (task, subset)

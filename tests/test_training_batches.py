"""The training data path: token ids once per distinct text, batches assembled from arrays, the trainer's loader."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainingArguments  # noqa: E402
from sentence_transformers.sentence_transformer.data_collator import SentenceTransformerDataCollator  # noqa: E402

from paranmt_hf import ParaNMTInputModule, build_encoder  # noqa: E402
from paranmt_hf.losses import MegaBatchMarginLoss  # noqa: E402
from paranmt_hf.training.batches import PairBatches, TextIds, distinct_texts  # noqa: E402

ANCHORS = ["a man plays a guitar .", "a dog runs .", "the cat sleeps .", "kids play soccer .",
           "a woman sings a song .", "the sun is hot .", "a zebra eats grass .", "two men talk .", "a dog runs .",
           "Ünïcödé wörds ▁ here", ""]
POSITIVES = ["a guy plays guitar .", "a dog is running .", "a cat is asleep .", "children play football .",
             "a lady is singing .", "it is a hot day .", "a striped horse grazes .", "two guys chat .",
             "the cat sleeps .", "a man plays a guitar .", "nothing"]


def model_of(kind: str, **options) -> SentenceTransformer:
    encoder = build_encoder(kind, corpus=ANCHORS[:6] + POSITIVES[:6], embedding_dim=8, seed=0, **options)
    return SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")


def assert_same_batch(ours: dict, reference: dict) -> None:
    assert list(ours) == list(reference)
    for key, value in reference.items():
        assert ours[key].dtype == value.dtype, key
        assert torch.equal(ours[key], value), key


@pytest.mark.parametrize("kind", ["word", "trigram", "sp", "word+trigram", "lstm"])
def test_array_assembled_batch_equals_the_stock_collation(kind):
    options = {"token_type": "sp", "vocab_size": 60} if kind in ("sp", "lstm") else {}
    model = model_of(kind, **options)
    data = Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES, "label": [0, 1] * 5 + [1]})
    batches = PairBatches.from_dataset(data, model[0].featurizer)
    collator = SentenceTransformerDataCollator(preprocess_fn=model.preprocess)
    for rows in ([3, 0, 8, 8, 10], [9], list(range(len(ANCHORS)))[::-1]):
        assert_same_batch(batches.__getitems__(rows), collator([data[i] for i in rows]))


def test_token_ids_are_computed_once_per_distinct_text():
    model = model_of("trigram")
    featurizer = model[0].featurizer
    seen: list[str] = []

    class Spy:
        flat, pad_token_id = featurizer.flat, featurizer.pad_token_id

        def __call__(self, texts):
            seen.extend(texts)
            return featurizer(texts)

    data = Dataset.from_dict({"anchor": ANCHORS * 3, "positive": POSITIVES * 3})
    batches = PairBatches.from_dataset(data, Spy())
    assert sorted(seen) == sorted(set(ANCHORS + POSITIVES))  # each text once, whatever its repeats and columns
    text_ids = batches.text_ids
    assert len(text_ids) == len(set(ANCHORS + POSITIVES))
    # rows that hold the same text point at the same ids
    assert batches.columns["anchor"][1] == batches.columns["anchor"][8] == batches.columns["anchor"][12]
    assert batches.columns["anchor"][2] == batches.columns["positive"][8]


def test_distinct_texts_keeps_first_occurrence_order_and_row_codes():
    import pyarrow as pa

    texts, codes = distinct_texts([pa.chunked_array([["b", "a"], ["b"]]), pa.chunked_array([["c", "a"]])])
    assert texts == ["b", "a", "c"]
    assert [c.tolist() for c in codes] == [[0, 1, 0], [2, 1]]


def test_text_ids_gather_any_order_with_repeats():
    model = model_of("word")
    text_ids = TextIds.build(["a dog runs .", "the cat", "a man plays a guitar ."], model[0].featurizer, chunk=2)
    assert text_ids.lengths.tolist() == [len(model[0].featurizer(["a dog runs ."])["input_ids"]), 2, 6]
    got = text_ids.features(np.array([2, 0, 2]))
    want = model[0].featurizer(["a man plays a guitar .", "a dog runs .", "a man plays a guitar ."])
    assert_same_batch(got, want)


def trainer_batches(trainer) -> list[dict]:
    return [dict(batch) for batch in trainer.get_train_dataloader()]


def test_trainer_loader_gives_the_stock_loaders_batches_in_its_order(tmp_path):
    from sentence_transformers import SentenceTransformerTrainer

    from paranmt_hf.training.hf_trainer import ParaNMTTrainer

    model = model_of("trigram")
    data = Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES})
    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=3, seed=7,
                                                use_cpu=True, report_to="none", save_strategy="no")
    loss = MegaBatchMarginLoss(model, megabatch_size=2)
    ours = ParaNMTTrainer(model=model, args=args, train_dataset=data, loss=loss)
    stock = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss)
    assert ours._pair_batches() is not None
    got, want = trainer_batches(ours), trainer_batches(stock)
    assert len(got) == len(want) == 4
    for a, b in zip(got, want, strict=True):
        assert_same_batch(a, b)


def test_trainer_takes_the_stock_loader_with_prompts(tmp_path):
    from paranmt_hf.training.hf_trainer import ParaNMTTrainer

    model = model_of("word")
    data = Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES})
    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=3, seed=0,
                                                use_cpu=True, report_to="none", save_strategy="no",
                                                prompts="query: ")
    trainer = ParaNMTTrainer(model=model, args=args, train_dataset=data, loss=MegaBatchMarginLoss(model))
    assert trainer._pair_batches() is None
    assert len(trainer_batches(trainer)) == 4


def test_gradient_norm_is_computed_for_logged_steps_only(tmp_path, monkeypatch):
    from paranmt_hf.training import hf_trainer
    from paranmt_hf.training.hf_trainer import ParaNMTTrainer

    calls: list[int] = []
    norm = hf_trainer.gradient_norm
    monkeypatch.setattr(hf_trainer, "gradient_norm", lambda params: calls.append(1) or norm(params))
    model = model_of("word")
    data = Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES})
    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=2, max_steps=5,
                                                use_cpu=True, report_to="none", save_strategy="no", logging_steps=2,
                                                max_grad_norm=0.0, seed=0)
    trainer = ParaNMTTrainer(model=model, args=args, train_dataset=data, loss=MegaBatchMarginLoss(model))
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "loss" in entry and "grad_norm" in entry]
    assert len(calls) == 3  # steps 2, 4 and the last (5)
    assert [entry["step"] for entry in logged] == [2, 4]
    assert all(entry["grad_norm"] > 0 for entry in logged)


def test_dense_tables_train_with_fused_adamw_as_the_per_tensor_one(tmp_path):
    from paranmt_hf.training.hf_trainer import ParaNMTTrainer, training_arguments
    from paranmt_hf.training.recipes import Schedule

    model = model_of("trigram")
    args = training_arguments(Schedule(4, 0.01, 1.0, "constant", 0.0), tmp_path, show_progress=False)
    trainer = ParaNMTTrainer(model=model, args=args, train_dataset=Dataset.from_dict({"anchor": ANCHORS,
                             "positive": POSITIVES}), loss=MegaBatchMarginLoss(model))
    fused = trainer.create_optimizer()
    assert fused.defaults["fused"] is True
    table = model[0].model.components[0].embedding.weight
    start = table.detach().clone()
    reference = torch.nn.Parameter(start.clone())
    per_tensor = torch.optim.AdamW([reference], lr=0.01, weight_decay=0.0, foreach=False)
    for step in range(3):
        grad = torch.randn(table.shape, generator=torch.Generator().manual_seed(step))
        table.grad, reference.grad = grad.clone(), grad.clone()
        fused.step()
        per_tensor.step()
    assert not torch.equal(table.detach(), start)
    torch.testing.assert_close(table.detach(), reference.detach(), atol=1e-6, rtol=1e-5)

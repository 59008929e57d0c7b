"""MegaBatchMarginLoss with the stock SentenceTransformerTrainer and with stock StaticEmbedding (flat) features."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from sentence_transformers import (  # noqa: E402
    SentenceTransformer,
    SentenceTransformerTrainer,
    SentenceTransformerTrainingArguments,
)
from sentence_transformers.sentence_transformer.modules import StaticEmbedding  # noqa: E402

from paranmt_hf import (
    ParaNMTInputModule,  # noqa: E402
    build_encoder,  # noqa: E402
)
from paranmt_hf.losses import MegaBatchMarginLoss  # noqa: E402

ANCHORS = ["a man plays a guitar .", "a dog runs .", "the cat sleeps .", "kids play soccer .",
           "a woman sings a song .", "the sun is hot .", "a zebra eats grass .", "two men talk ."]
POSITIVES = ["a guy plays guitar .", "a dog is running .", "a cat is asleep .", "children play football .",
             "a lady is singing .", "it is a hot day .", "a striped horse grazes .", "two guys chat ."]


@pytest.mark.parametrize("kind", ["word", "lstm"])
def test_trainer_run_changes_weights(tmp_path, kind):
    encoder = build_encoder(kind, corpus=ANCHORS + POSITIVES, embedding_dim=8, seed=0)
    module = ParaNMTInputModule.from_encoder(encoder)
    assert module.is_flat == (kind == "word")
    model = SentenceTransformer(modules=[module], device="cpu")
    before = [p.detach().clone() for p in model.parameters()]
    loss = MegaBatchMarginLoss(model, megabatch_size=2, sampling="MIX")
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=2, max_steps=4, learning_rate=0.05,
        use_cpu=True, report_to="none", save_strategy="no", logging_steps=1, seed=0,
    )
    data = Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES})
    SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss).train()
    assert loss.steps == 4 and len(loss.pool) == 1
    changed = [not torch.equal(b, p.detach()) for b, p in zip(before, model.parameters(), strict=True)]
    assert all(changed)


def test_stock_static_embedding_features_give_the_same_loss():
    encoder = build_encoder("word", corpus=ANCHORS + POSITIVES, embedding_dim=8, seed=1)
    ours = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu").train()
    weight = encoder.model.components[0].embedding.weight.detach().clone()
    static = StaticEmbedding(encoder.tokenizer, embedding_weights=weight)
    stock = SentenceTransformer(modules=[static], device="cpu").train()
    losses = [MegaBatchMarginLoss(m, megabatch_size=3, sampling="MAX") for m in (ours, stock)]
    values = []
    for loss, model in zip(losses, (ours, stock), strict=True):
        for start in range(0, 8, 3):
            features = [model.preprocess(ANCHORS[start:start + 3]), model.preprocess(POSITIVES[start:start + 3])]
            assert features[0]["input_ids"].dim() == 1 and "offsets" in features[0]
            value = loss(features)
        value.backward()
        values.append(value.item())
    assert values[0] == pytest.approx(values[1], abs=1e-6)
    ours_grad = encoder.model.components[0].embedding.weight.grad
    torch.testing.assert_close(ours_grad, static.embedding.weight.grad, atol=1e-6, rtol=1e-5)


def test_docstring_example_runs(tmp_path, monkeypatch):
    import textwrap

    monkeypatch.chdir(tmp_path)
    code = textwrap.dedent(MegaBatchMarginLoss.__doc__.split("Example:")[1].split("::", 1)[1])
    namespace: dict = {}
    exec(compile(code, "MegaBatchMarginLoss example", "exec"), namespace)  # noqa: S102
    assert namespace["loss"].steps == 2


def test_paranmt_trainer_logs_the_norm_of_sparse_gradients(tmp_path):
    """``ParaNMTTrainer`` overrides transformers' private ``Trainer._get_grad_norm`` (the stock one calls
    ``clip_grad_norm_``, which fails on sparse gradients). This pins what the override relies on: the method's
    signature, and that the training loop calls it at every optimizer step and logs what it returns."""
    import inspect
    import math

    from transformers import Trainer, TrainerCallback

    from paranmt_hf.training.hf_trainer import ParaNMTTrainer
    from paranmt_hf.training.optim import LazyAdam, set_sparse_embeddings

    assert list(inspect.signature(Trainer._get_grad_norm).parameters) == ["self", "model", "grad_norm"]
    encoder = build_encoder("word", corpus=ANCHORS + POSITIVES, embedding_dim=8, seed=0)
    set_sparse_embeddings(encoder.model, True)
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    seen: list[float] = []

    class DenseNorm(TrainerCallback):  # the norm of the gradients the optimizer is about to apply, computed densely
        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            grads = [p.grad.to_dense() for p in model.parameters() if p.grad is not None]
            assert any(p.grad is not None and p.grad.is_sparse for p in model.parameters())
            seen.append(math.sqrt(sum(float(g.pow(2).sum()) for g in grads)))

    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=2, max_steps=3, max_grad_norm=0.0,
        use_cpu=True, report_to="none", save_strategy="no", logging_steps=1, seed=0,
    )
    data = Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES})
    trainer = ParaNMTTrainer(model=model, args=args, train_dataset=data, callbacks=[DenseNorm()],
                             loss=MegaBatchMarginLoss(model, megabatch_size=2),
                             optimizers=(LazyAdam(model.parameters(), lr=0.05), None))
    trainer.train()
    logged = [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
    assert len(seen) == 3 and logged == pytest.approx(seen, rel=1e-5) and all(n > 0 for n in seen)


def test_paranmt_trainer_writes_checkpoint_files_from_the_saving_process_only(tmp_path, monkeypatch):
    """Under ``torchrun`` transformers calls ``_save`` on every rank; sentence-transformers' ``_save`` writes without
    checking ``args.should_save``, so two ranks wrote one checkpoint's files at once (a CI run failed on it).
    ``ParaNMTTrainer`` writes only where ``should_save`` holds (rank 0)."""
    from transformers import TrainingArguments

    from paranmt_hf.training.hf_trainer import ParaNMTTrainer

    encoder = build_encoder("word", corpus=ANCHORS + POSITIVES, embedding_dim=8, seed=0)
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path / "run"), use_cpu=True, report_to="none")
    data = Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES})
    trainer = ParaNMTTrainer(model=model, args=args, train_dataset=data,
                             loss=MegaBatchMarginLoss(model, megabatch_size=2))
    monkeypatch.setattr(TrainingArguments, "should_save", property(lambda self: False))  # a rank other than 0
    trainer._save(str(tmp_path / "other-rank"))
    assert not (tmp_path / "other-rank").exists()
    monkeypatch.setattr(TrainingArguments, "should_save", property(lambda self: True))  # rank 0
    trainer._save(str(tmp_path / "checkpoint-3"))
    saved = tmp_path / "checkpoint-3"
    assert (saved / "config.json").is_file() and (saved / "modules.json").is_file()
    assert (saved / "training_args.bin").is_file()
    assert not (saved / "README.md").exists()  # a checkpoint has no model card
    trainer.save_model(str(tmp_path / "final"))
    assert (tmp_path / "final" / "README.md").is_file() and (tmp_path / "final" / "modules.json").is_file()


def test_paranmt_trainer_trains_with_loaded_objects_out_of_full_collections(tmp_path):
    """The objects alive before ``train`` are frozen (``gc.freeze``) while it runs: transformers' loop starts with a
    full collection (accelerate's ``free_memory``) that would walk every imported library's objects. Unfrozen
    after; a caller's own freeze is left as it was."""
    import gc

    from transformers import TrainerCallback

    from paranmt_hf.training.hf_trainer import ParaNMTTrainer

    encoder = build_encoder("word", corpus=ANCHORS + POSITIVES, embedding_dim=8, seed=0)
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    frozen: list[int] = []

    class FreezeCount(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            frozen.append(gc.get_freeze_count())

    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4,
                                                max_steps=2, use_cpu=True, report_to="none", save_strategy="no")
    trainer = ParaNMTTrainer(model=model, args=args, callbacks=[FreezeCount()],
                             train_dataset=Dataset.from_dict({"anchor": ANCHORS, "positive": POSITIVES}),
                             loss=MegaBatchMarginLoss(model, megabatch_size=1))
    assert gc.get_freeze_count() == 0
    trainer.train()
    assert len(frozen) == 2 and min(frozen) > 100_000 and gc.get_freeze_count() == 0
    gc.freeze()  # the caller's own
    try:
        trainer.train()
        assert gc.get_freeze_count() > 100_000  # still frozen: not unfrozen by the trainer
    finally:
        gc.unfreeze()

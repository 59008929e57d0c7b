"""MegaBatchMarginLoss's one forward pass with gradient per step: the loss and gradients of three passes."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

from paranmt_hf import ParaNMTInputModule, build_encoder  # noqa: E402
from paranmt_hf.losses import MegaBatchMarginLoss, mega_batch_margin  # noqa: E402
from paranmt_hf.training.optim import set_sparse_embeddings  # noqa: E402

BATCHES = [
    (["a man plays a guitar .", "a dog runs .", "the cat sleeps ."],
     ["a guy plays guitar .", "a dog is running .", "a cat is asleep ."]),
    (["kids play soccer .", "a woman sings a song .", "a dog runs ."],
     ["children play football .", "a lady is singing .", "the dog is running fast ."]),
    (["the sun is hot .", "a zebra eats grass .", "two men talk ."],
     ["it is a hot day .", "a striped horse grazes .", "a dog runs ."]),
    (["a man plays a guitar .", "kids play soccer .", "two men talk ."],
     ["a boy plays guitar .", "kids play football .", "two guys chat ."]),
]
CORPUS = [s for a, b in BATCHES for s in a + b]


def model_of(kind: str, sparse: bool = False) -> SentenceTransformer:
    encoder = build_encoder(kind, corpus=CORPUS, embedding_dim=8, seed=0)
    set_sparse_embeddings(encoder.model, sparse)
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    model.train()
    return model


def steps(kind: str, one_pass: bool, monkeypatch, labels: bool = False, sparse: bool = False,
          **options) -> tuple[list, list]:
    """Loss values and gradients of four steps (an optimizer-free run: the gradients add up across steps)."""
    model = model_of(kind, sparse)
    calls: list[bool] = []  # per forward call: with gradient
    forward = model.forward
    monkeypatch.setattr(model, "forward",
                        lambda features, **kw: calls.append(torch.is_grad_enabled()) or forward(features, **kw))
    if not one_pass:  # the three-pass path: as if the forward drew random numbers
        monkeypatch.setattr(mega_batch_margin, "stochastic_forward", lambda module: True)
    loss = MegaBatchMarginLoss(model, **options)
    values, gradients = [], []
    for i, (anchors, positives) in enumerate(BATCHES):
        kinds = torch.tensor([1, 0, 1]) if labels and i % 2 else (torch.tensor([0, 0, 0]) if labels else None)
        value = loss([model.preprocess(anchors), model.preprocess(positives)], kinds)
        model.zero_grad()
        value.backward()
        values.append(value.item())
        gradients.append([p.grad.to_dense().clone() for p in model.parameters() if p.grad is not None])
    monkeypatch.undo()
    return values, gradients, calls


@pytest.mark.parametrize("kind", ["word", "trigram", "word+trigram"])
@pytest.mark.parametrize("options", [{"megabatch_size": 1}, {"megabatch_size": 3}, {"megabatch_size": 2, "anneal": 2},
                                     {"megabatch_size": 3, "sparse": True}, {"megabatch_size": 1, "sparse": True},
                                     {"megabatch_size": 3, "candidates": "other_side"},
                                     {"megabatch_size": 3, "sampling": "MIX"}])
def test_one_pass_equals_three_passes(kind, options, monkeypatch):
    torch.manual_seed(0)
    values, gradients, passes = steps(kind, True, monkeypatch, **options)
    torch.manual_seed(0)
    want_values, want_gradients, want_passes = steps(kind, False, monkeypatch, **options)
    assert values == pytest.approx(want_values, abs=1e-6)
    for got, want in zip(gradients, want_gradients, strict=True):
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w, atol=1e-6, rtol=1e-5)
    assert want_passes == [True] * 3 * len(BATCHES)
    # M = 1: one pass with gradient; a pool, annealed from M = 1 or not: the pairs embedded without gradient for
    # mining, then pairs and negatives in one pass with gradient
    assert passes == ([True] if options["megabatch_size"] == 1 else [False, True]) * len(BATCHES)


def test_one_pass_with_mixed_pair_kinds(monkeypatch):
    values, gradients, _ = steps("word", True, monkeypatch, labels=True, megabatch_size=3)
    want_values, want_gradients, _ = steps("word", False, monkeypatch, labels=True, megabatch_size=3)
    assert values == pytest.approx(want_values, abs=1e-6)
    for got, want in zip(gradients, want_gradients, strict=True):
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w, atol=1e-6, rtol=1e-5)


def test_a_random_forward_takes_three_passes():
    model = model_of("word")
    assert not mega_batch_margin.stochastic_forward(model)
    model[0].model.components[0].embedding_dropout.p = 0.1
    assert mega_batch_margin.stochastic_forward(model)
    model.eval()
    assert not mega_batch_margin.stochastic_forward(model)


def test_loss_of_a_fixed_batch_is_unchanged():
    """The loss of a fixed tiny batch and seed, as computed before the one-pass forward (three passes)."""
    torch.manual_seed(0)
    model = model_of("trigram")
    loss = MegaBatchMarginLoss(model, megabatch_size=2)
    values = [loss([model.preprocess(a), model.preprocess(p)]).item() for a, p in BATCHES[:2]]
    assert values == pytest.approx([1.164571, 1.296443], abs=1e-5)

"""MegaBatchMarginLoss: equality with a direct reference computation of the papers' formula, gradients, M=1."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from _megabatch_reference import embed, reference_loss  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

from paranmt_hf import (
    ParaNMTInputModule,  # noqa: E402
    build_encoder,  # noqa: E402
)
from paranmt_hf.losses import MegaBatchMarginLoss  # noqa: E402
from paranmt_hf.losses.features import Rows, features_from_rows, hash_rows, rows_from_features  # noqa: E402
from paranmt_hf.losses.mining import select_negatives  # noqa: E402

# three mini-batches of (anchor, positive) pairs; "a dog runs ." repeats across batches (identical texts)
BATCHES = [
    (["a man plays a guitar .", "a dog runs .", "the cat sleeps ."],
     ["a guy plays guitar .", "a dog is running .", "a cat is asleep ."]),
    (["kids play soccer .", "a woman sings a song .", "a dog runs ."],
     ["children play football .", "a lady is singing .", "the dog is running fast ."]),
    (["the sun is hot .", "a zebra eats grass .", "two men talk ."],
     ["it is a hot day .", "a striped horse grazes .", "a dog runs ."]),
]
CORPUS = [s for a, b in BATCHES for s in a + b]


def make_model(kind: str = "word", flat: bool = True, seed: int = 0) -> SentenceTransformer:
    encoder = build_encoder(kind, corpus=CORPUS, embedding_dim=8, seed=seed)
    module = ParaNMTInputModule.from_encoder(encoder)
    if not flat:
        module.featurizer.flat = False  # same model read through padded features
    model = SentenceTransformer(modules=[module], device="cpu")
    model.train()
    return model


def run_loss(model, loss, batches):
    value = None
    for anchors, positives in batches:
        value = loss([model.preprocess(anchors), model.preprocess(positives)])
    return value


def grads(model, value):
    model.zero_grad()
    value.backward()
    return [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]


@pytest.mark.parametrize(
    "kind,flat,candidates",
    [("word", True, "both"), ("word", True, "other_side"), ("word", False, "both"), ("word", False, "other_side"),
     ("lstm", False, "both")],
)
def test_equals_reference_value_and_gradient(kind, flat, candidates):
    model = make_model(kind, flat)
    loss = MegaBatchMarginLoss(model, margin=0.4, megabatch_size=3, candidates=candidates)
    value = run_loss(model, loss, BATCHES)  # no optimizer step: the pool embeddings equal current ones
    expected, negatives = reference_loss(model, BATCHES, candidates=candidates)
    assert value.item() == pytest.approx(expected.item(), abs=1e-5)
    # "a dog runs ." (pair 2 of the last batch) repeats in earlier batches: identical texts are never negatives
    assert negatives[0][2] != "a dog runs ." and negatives[1][2] != "a dog runs ."
    assert any(n in BATCHES[0][0] + BATCHES[0][1] for n in negatives[0] + negatives[1])  # pool reaches back
    for g, g_ref in zip(grads(model, value), grads(model, expected), strict=True):
        torch.testing.assert_close(g, g_ref, atol=1e-5, rtol=1e-4)


def test_gradients_flow_through_negatives():
    model = make_model("word")
    loss = MegaBatchMarginLoss(model, megabatch_size=3)
    value = run_loss(model, loss, BATCHES)
    _, negatives = reference_loss(model, BATCHES)
    tokenizer = model[0].tokenizer
    current = {t for s in BATCHES[-1][0] + BATCHES[-1][1] for t in tokenizer(s)["input_ids"]}
    only_negative = {t for s in negatives[0] + negatives[1] for t in tokenizer(s)["input_ids"]} - current
    assert only_negative, "fixture should pick negatives with words absent from the current mini-batch"
    grad = grads(model, value)[0]
    assert grad[sorted(only_negative)].abs().sum() > 0


def test_megabatch_one_is_in_batch_hardest_negative():
    model = make_model("word")
    anchors, positives = BATCHES[0]
    loss = MegaBatchMarginLoss(model, margin=0.3, megabatch_size=1, candidates="other_side")
    value = loss([model.preprocess(anchors), model.preprocess(positives)])
    s, t = embed(model, anchors), embed(model, positives)
    scores = F.normalize(s, dim=-1) @ F.normalize(t, dim=-1).T
    eye = torch.eye(len(anchors), dtype=torch.bool)
    hardest_st = scores.masked_fill(eye, -2).max(dim=1).values  # hardest positive of another pair, for each anchor
    hardest_ts = scores.T.masked_fill(eye, -2).max(dim=1).values
    direct = (F.relu(0.3 - scores.diag() + hardest_st) + F.relu(0.3 - scores.diag() + hardest_ts)).mean()
    assert value.item() == pytest.approx(direct.item(), abs=1e-6)
    for g, g_ref in zip(grads(model, value), grads(model, direct), strict=True):
        torch.testing.assert_close(g, g_ref, atol=1e-5, rtol=1e-4)
    assert len(loss.pool) == 0  # M=1 keeps no previous mini-batch


def test_annealing_grows_the_megabatch():
    model = make_model("word")
    loss = MegaBatchMarginLoss(model, megabatch_size=3, anneal=2)
    sizes = []
    for step in range(7):
        sizes.append(loss.current_megabatch_size)
        anchors, positives = BATCHES[step % 3]
        loss([model.preprocess(anchors), model.preprocess(positives)])
    assert sizes == [1, 1, 2, 2, 3, 3, 3]
    # with M=1 the first step equals the in-batch computation
    fresh = MegaBatchMarginLoss(model, megabatch_size=3, anneal=100)
    value = run_loss(model, fresh, BATCHES[:2])
    expected, _ = reference_loss(model, BATCHES[1:2])
    assert value.item() == pytest.approx(expected.item(), abs=1e-5)


def test_refresh_pool_matches_reference_after_updates():
    model = make_model("word")
    loss = MegaBatchMarginLoss(model, megabatch_size=3, refresh_pool=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
    for anchors, positives in BATCHES[:2]:
        optimizer.zero_grad()
        loss([model.preprocess(anchors), model.preprocess(positives)]).backward()
        optimizer.step()
    value = loss([model.preprocess(BATCHES[2][0]), model.preprocess(BATCHES[2][1])])
    expected, _ = reference_loss(model, BATCHES)  # mined with the current parameters
    assert value.item() == pytest.approx(expected.item(), abs=1e-5)


def test_eval_mode_uses_the_batch_and_keeps_the_pool():
    model = make_model("word")
    loss = MegaBatchMarginLoss(model, megabatch_size=3)
    run_loss(model, loss, BATCHES[:2])
    model.eval()
    with torch.no_grad():
        value = loss([model.preprocess(BATCHES[2][0]), model.preprocess(BATCHES[2][1])])
    expected, _ = reference_loss(model, BATCHES[2:])
    assert value.item() == pytest.approx(expected.item(), abs=1e-5)
    assert len(loss.pool) == 2 and loss.steps == 2


def test_compute_loss_from_embeddings_gradcheck():
    model = make_model("word")
    loss = MegaBatchMarginLoss(model, margin=0.4)
    torch.manual_seed(0)
    embeddings = [torch.randn(4, 5, dtype=torch.float64, requires_grad=True) for _ in range(4)]
    assert torch.autograd.gradcheck(lambda *e: loss.compute_loss_from_embeddings(list(e)), embeddings)
    s, t, tn, sn = embeddings
    cos = torch.nn.functional.cosine_similarity
    manual = (torch.relu(0.4 - cos(s, t) + cos(s, tn)) + torch.relu(0.4 - cos(s, t) + cos(t, sn))).mean()
    assert loss.compute_loss_from_embeddings(embeddings).item() == pytest.approx(manual.item())
    mask = torch.tensor([True, False, True, True, True, True, True, False])
    masked = loss.compute_loss_from_embeddings(embeddings, has_negative=mask)
    terms_a = torch.relu(0.4 - cos(s, t) + cos(s, tn)) * mask[:4]
    terms_b = torch.relu(0.4 - cos(s, t) + cos(t, sn)) * mask[4:]
    assert masked.item() == pytest.approx((terms_a + terms_b).mean().item())


def test_sampling_modes_respect_exclusions():
    torch.manual_seed(0)
    queries, candidates = torch.randn(6, 4), torch.randn(10, 4)
    allowed = torch.rand(6, 10) < 0.5
    allowed[0] = False  # a query with no allowed candidate
    allowed[1, :] = False
    allowed[1, 3] = True
    scores = F.normalize(queries, dim=-1) @ F.normalize(candidates, dim=-1).T
    hardest = scores.masked_fill(~allowed, -9).argmax(dim=1)
    index, has = select_negatives(queries, candidates, allowed, "MAX")
    assert has.tolist() == allowed.any(1).tolist()
    assert torch.equal(index[1:], hardest[1:])
    seen = set()
    for _ in range(200):
        index, has = select_negatives(queries, candidates, allowed, "RAND")
        assert bool(allowed[torch.arange(1, 6), index[1:]].all())
        seen.add(int(index[2]))
        index, _ = select_negatives(queries, candidates, allowed, "MIX")
        assert bool(allowed[torch.arange(1, 6), index[1:]].all())
    assert seen == set(torch.nonzero(allowed[2]).flatten().tolist())  # RAND covers every allowed candidate
    with pytest.raises(ValueError, match="sampling"):
        select_negatives(queries, candidates, allowed, "HARD")


def test_hash_rows_tells_apart_every_distinct_sentence_of_a_large_sample():
    generator = torch.Generator().manual_seed(0)
    sentences = {(), (0,), (0, 0), (5,), (5, 0), (0, 5), (6, 5)}
    while len(sentences) < 20_000:  # short sentences over a small vocabulary: near misses of each other
        length = int(torch.randint(0, 8, (1,), generator=generator))
        sentences.add(tuple(torch.randint(0, 4, (length,), generator=generator).tolist()))
    sentences = sorted(sentences)
    rows = Rows(torch.tensor([i for s in sentences for i in s], dtype=torch.long),
                torch.tensor([len(s) for s in sentences]))
    hashes = hash_rows(rows)
    assert len(set(hashes.tolist())) == len(sentences)  # no two distinct sentences share a fingerprint
    repeated = Rows.cat([rows, rows.select(torch.arange(len(sentences) - 1, -1, -1))])
    assert hash_rows(repeated).tolist() == hashes.tolist() + hashes.flip(0).tolist()  # a batch's order: same hash


def test_rows_round_trip_and_hash_identity():
    padded = {"input_ids": torch.tensor([[5, 6, 0], [7, 0, 0], [5, 6, 0]]),
              "attention_mask": torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 0]]), "modality": "text"}
    rows = rows_from_features(padded)
    assert rows.ids.tolist() == [5, 6, 7, 5, 6] and rows.lengths.tolist() == [2, 1, 2]
    hashes = hash_rows(rows)
    assert hashes[0] == hashes[2] and hashes[0] != hashes[1]
    assert hash_rows(Rows(torch.tensor([6, 5]), torch.tensor([2]))) != hashes[0]  # order matters
    picked = features_from_rows(rows.select(torch.tensor([1, 0])), padded)
    assert picked["input_ids"].tolist() == [[7, 0], [5, 6]] and picked["modality"] == "text"
    assert picked["attention_mask"].tolist() == [[1, 0], [1, 1]]
    flat = {"input_ids": torch.tensor([5, 6, 7]), "offsets": torch.tensor([0, 2, 2])}
    rows = rows_from_features(flat)
    assert rows.lengths.tolist() == [2, 0, 1]
    picked = features_from_rows(rows.select(torch.tensor([2, 1, 0])), flat)
    assert picked["input_ids"].tolist() == [7, 5, 6] and picked["offsets"].tolist() == [0, 1, 1]


def test_config_and_validation():
    model = make_model("word")
    loss = MegaBatchMarginLoss(model, margin=0.5, megabatch_size=4, anneal=10, sampling="MIX")
    assert loss.get_config_dict() == {
        "margin": 0.5, "megabatch_size": 4, "anneal": 10, "sampling": "MIX", "candidates": "both",
        "refresh_pool": False, "gather_across_devices": False,
    }
    assert "wieting-gimpel-2018-paranmt" in loss.citation
    with pytest.raises(ValueError, match="sampling"):
        MegaBatchMarginLoss(model, sampling="max")
    with pytest.raises(ValueError, match="megabatch_size"):
        MegaBatchMarginLoss(model, megabatch_size=0)
    features = model.preprocess(BATCHES[0][0])
    with pytest.raises(ValueError, match="2 text columns"):
        loss([features, features, features])


@pytest.mark.parametrize("candidates", ["both", "other_side"])
def test_mining_takes_the_pools_unit_embeddings_as_they_are(candidates, monkeypatch):
    """Pool embeddings are scaled to unit length once, when their mini-batch joins the pool, not at every step."""
    from paranmt_hf.losses import mega_batch_margin

    model = make_model()
    loss = MegaBatchMarginLoss(model, megabatch_size=3, candidates=candidates)
    calls = []

    def select(queries, candidates, allowed, sampling, unit=False):
        calls.append(unit)
        return select_negatives(queries, candidates, allowed, sampling, unit=unit)

    monkeypatch.setattr(mega_batch_margin, "select_negatives", select)
    value = run_loss(model, loss, BATCHES)
    assert calls and all(calls)
    for entry in loss.pool:
        for units in entry.units:
            torch.testing.assert_close(units.norm(dim=-1), torch.ones(len(units)))
    monkeypatch.undo()
    fresh = make_model()
    want = run_loss(fresh, MegaBatchMarginLoss(fresh, megabatch_size=3, candidates=candidates), BATCHES)
    assert value.item() == want.item()

"""MegaBatchMarginLoss with per-pair kinds: bitext and paraphrase pairs in one mega-batch (PRAS §3's two rules)."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

from paranmt_hf import (
    ParaNMTInputModule,  # noqa: E402
    build_encoder,  # noqa: E402
)
from paranmt_hf.losses import MegaBatchMarginLoss  # noqa: E402

# (anchor, positive, kind): 1 = translation (English first), 0 = English paraphrase pair
BATCHES = [
    [("a man plays a guitar .", "un hombre toca la guitarra .", 1), ("a dog runs .", "a dog is running .", 0),
     ("the cat sleeps .", "le chat dort .", 1)],
    [("kids play soccer .", "los niños juegan al fútbol .", 1), ("a woman sings .", "a lady is singing .", 0),
     ("a dog runs .", "der hund rennt .", 1)],
    [("the sun is hot .", "it is a hot day .", 0), ("a zebra eats grass .", "una cebra come hierba .", 1),
     ("two men talk .", "a man plays guitar .", 0)],
]
CORPUS = [s for batch in BATCHES for a, b, _ in batch for s in (a, b)]


def make_model(seed: int = 0) -> SentenceTransformer:
    encoder = build_encoder("word", corpus=CORPUS, embedding_dim=8, seed=seed)
    model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
    model.train()
    return model


def embed(model: SentenceTransformer, texts: list[str]) -> torch.Tensor:
    return model(model.preprocess(texts))["sentence_embedding"]


def feed(model, loss, batches, labels=True):
    value = None
    for batch in batches:
        kinds = torch.tensor([k for _, _, k in batch]) if labels else None
        value = loss([model.preprocess([a for a, _, _ in batch]), model.preprocess([b for _, b, _ in batch])], kinds)
    return value


def reference(model, batches, margin=0.4):
    """The loss with Python loops: a sentence of a translation pair takes only negatives of the other language
    (English vs. the foreign side of a translation pair); a sentence of a paraphrase pair takes any sentence."""
    pool = [pair for batch in batches for pair in batch]
    own_start = len(pool) - len(batches[-1])
    texts = [a for a, _, _ in pool] + [b for _, b, _ in pool]
    foreign = [False] * len(pool) + [k == 1 for _, _, k in pool]
    with torch.no_grad():
        emb = F.normalize(embed(model, texts), dim=-1)
    negatives = {0: [], 1: []}
    for i, (anchor, positive, kind) in enumerate(batches[-1]):
        own = own_start + i
        for side in (0, 1):
            q = own + side * len(pool)
            best, best_score = None, -2.0
            for j, text in enumerate(texts):
                if j % len(pool) == own or text in (anchor, positive):
                    continue
                if kind == 1 and foreign[j] == foreign[q]:
                    continue
                score = float(emb[q] @ emb[j])
                if score > best_score:
                    best, best_score = text, score
            negatives[side].append(best)
    s = embed(model, [a for a, _, _ in batches[-1]])
    t = embed(model, [b for _, b, _ in batches[-1]])
    pos = F.cosine_similarity(s, t)
    terms = []
    for side, query in ((0, s), (1, t)):
        has = torch.tensor([n is not None for n in negatives[side]])  # no allowed negative: no term
        chosen = embed(model, [n if n is not None else "." for n in negatives[side]])
        terms.append(F.relu(margin - pos + F.cosine_similarity(query, chosen)) * has)
    return (terms[0] + terms[1]).mean(), negatives


@pytest.mark.parametrize("candidates", ["both", "other_side"])
def test_mixed_kinds_equal_reference(candidates):
    model = make_model()
    loss = MegaBatchMarginLoss(model, megabatch_size=3, candidates=candidates)  # labels override the rule
    value = feed(model, loss, BATCHES)
    expected, negatives = reference(model, BATCHES)
    assert value.item() == pytest.approx(expected.item(), abs=1e-5)
    # the translation pair's English side took a foreign sentence, its foreign side an English one
    foreign = {b for batch in BATCHES for _, b, k in batch if k == 1}
    assert negatives[0][1] in foreign and negatives[1][1] not in foreign
    model.zero_grad()
    value.backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    expected.backward()
    for g, g_ref in zip(got, [p.grad for p in model.parameters()], strict=True):
        torch.testing.assert_close(g, g_ref, atol=1e-5, rtol=1e-4)


def test_single_kind_labels_equal_the_candidates_rules():
    translations = [[(a, b, 1) for a, b, _ in batch] for batch in BATCHES]
    paraphrases = [[(a, b, 0) for a, b, _ in batch] for batch in BATCHES]
    for batches, rule in ((translations, "other_side"), (paraphrases, "both")):
        for default in ("both", "other_side"):
            model = make_model()
            labelled = feed(model, MegaBatchMarginLoss(model, megabatch_size=3, candidates=default), batches)
            plain = feed(model, MegaBatchMarginLoss(model, megabatch_size=3, candidates=rule), batches, labels=False)
            assert labelled.item() == pytest.approx(plain.item(), abs=1e-6), (rule, default)


def test_refresh_and_eval_keep_the_kinds():
    model = make_model()
    loss = MegaBatchMarginLoss(model, megabatch_size=3, refresh_pool=True)
    value = feed(model, loss, BATCHES)
    assert value.item() == pytest.approx(reference(model, BATCHES)[0].item(), abs=1e-5)
    assert all(entry.translation is not None for entry in loss.pool)
    model.eval()
    with torch.no_grad():
        value = feed(model, loss, BATCHES[2:])
        expected, negatives = reference(model, BATCHES[2:])
    assert negatives[0][1] is None  # the zebra translation has no other foreign sentence in its own mini-batch
    assert value.item() == pytest.approx(expected.item(), abs=1e-5)


def test_bad_labels_are_refused():
    model = make_model()
    loss = MegaBatchMarginLoss(model, megabatch_size=2)
    features = [model.preprocess([a for a, _, _ in BATCHES[0]]), model.preprocess([b for _, b, _ in BATCHES[0]])]
    with pytest.raises(ValueError, match="pair kinds"):
        loss(features, torch.tensor([0.5, 1.0, 0.0]))
    with pytest.raises(ValueError, match="pair kinds"):
        loss(features, torch.tensor([1, 0]))

"""Test helper: the mega-batch margin loss of the papers computed directly, with Python loops, as a reference.

Used by tests/test_loss_megabatch.py and by the two processes of tests/test_loss_ddp.py (whose pool holds every
process's mini-batches).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812

Batch = tuple[Sequence[str], Sequence[str]]


def embed(model: Any, texts: Sequence[str]) -> torch.Tensor:
    """Sentence embeddings of ``texts`` by a SentenceTransformer (with gradients)."""
    return model(model.preprocess(list(texts)))["sentence_embedding"]


def reference_loss(
    model: Any, batches: Sequence[Batch], margin: float = 0.4, candidates: str = "both", own: int = -1
) -> tuple[torch.Tensor, dict[int, list[str]]]:
    """The loss of ``batches[own]``'s pairs with negatives mined from every pair of ``batches``.

    For each pair and side, the negative is the most similar text of the pool (anchors and positives; only the other
    side's with ``candidates="other_side"``) that is neither the pair itself nor a copy of its texts. Returns the mean
    of ``relu(margin - cos(s, t) + cos(s, t_neg)) + relu(margin - cos(s, t) + cos(t, s_neg))`` and the negatives'
    texts per side.
    """
    own = own % len(batches)
    pool = [(a, b) for anchors, positives in batches for a, b in zip(anchors, positives, strict=True)]
    own_start = sum(len(anchors) for anchors, _ in batches[:own])
    texts = [a for a, _ in pool] + [b for _, b in pool]
    with torch.no_grad():
        pool_emb = F.normalize(embed(model, texts), dim=-1)
    anchors, positives = batches[own]
    negative_texts: dict[int, list[str]] = {0: [], 1: []}
    for i in range(len(anchors)):
        mine = own_start + i
        for side in (0, 1):
            q = pool_emb[mine if side == 0 else len(pool) + mine]
            best, best_score = None, -2.0
            for j, text in enumerate(texts):
                if j % len(pool) == mine or text in (anchors[i], positives[i]):
                    continue
                if candidates == "other_side" and j // len(pool) == side:
                    continue
                score = float(q @ pool_emb[j])
                if score > best_score:
                    best, best_score = text, score
            negative_texts[side].append(best)
    s, t = embed(model, anchors), embed(model, positives)
    t_neg, s_neg = embed(model, negative_texts[0]), embed(model, negative_texts[1])
    pos = F.cosine_similarity(s, t)
    loss = F.relu(margin - pos + F.cosine_similarity(s, t_neg)) + F.relu(margin - pos + F.cosine_similarity(t, s_neg))
    return loss.mean(), negative_texts

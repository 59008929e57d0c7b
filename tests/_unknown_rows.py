"""Test helper: give a model non-zero unknown-token rows, so that tests can see whether the unknown row is used.

New models initialise each component's ``[UNK]`` row to zero, which is also what an empty sentence would embed to if
the unknown-row rule (a component with no token of a sentence, or only dropped unknown tokens, embeds it as its
``[UNK]`` row) were missing. Tests of that rule set the rows to random values first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def randomise_unknown_rows(model: torch.nn.Module, seed: int = 1) -> list[torch.Tensor]:
    """Set the unknown row of each component of a ``ParaNMTModel`` to random non-zero values; return copies of them.

    Each coordinate has an absolute value in [0.5, 1.5) times the root mean square of the table (the scale of the
    other rows, so that quantising the table keeps its precision) and a random sign: no coordinate is zero.
    """
    generator = torch.Generator().manual_seed(seed)
    rows = []
    with torch.no_grad():
        for component in model.components:
            weight = component.embedding.weight
            scale = float(weight.float().pow(2).mean().sqrt()) or 1.0
            magnitude = (torch.rand(weight.shape[1], generator=generator) + 0.5) * scale
            sign = torch.randint(0, 2, (weight.shape[1],), generator=generator) * 2 - 1
            weight[component.unk_token_id] = (magnitude * sign).to(weight.dtype)
            rows.append(weight[component.unk_token_id].detach().clone())
    return rows


def combined(model: torch.nn.Module, parts: Sequence[torch.Tensor]) -> torch.Tensor:
    """The sentence embedding made of one embedding per component (``concat`` or ``add``, as the model combines)."""
    if len(parts) == 1:
        return parts[0]
    if model.config.combination == "add":
        return torch.stack(list(parts)).sum(dim=0)
    return torch.cat(list(parts))


def unknown_only(model: torch.nn.Module, ids: Sequence[int]) -> list[bool]:
    """For each averaging component: whether a sentence of (global) token ``ids`` leaves it only its unknown token.

    True when the component gets no id of the sentence, only dropped unknown ids, or only its ``[UNK]`` id: then
    its part of the sentence embedding is its ``[UNK]`` row.
    """
    out = []
    for component, offset in zip(model.components, model.config.component_offsets(), strict=True):
        local = [i - offset for i in ids if offset <= i < offset + component.vocab_size]
        if component.drop_unknown:
            local = [t for t in local if t not in component.unknown_ids]
        out.append(all(t == component.unk_token_id for t in local))
    return out


def assert_unknown_rows(
    model: torch.nn.Module,
    rows: Sequence[torch.Tensor],
    sentence_ids: Sequence[Sequence[int]],
    embeddings: np.ndarray,
    atol: float = 1e-6,
) -> int:
    """Check that each sentence's part of each component that sees only unknown tokens equals that ``[UNK]`` row.

    ``concat`` models are checked per component; ``add`` models where every component sees only unknown tokens.
    Returns the number of sentences checked.
    """
    dims = [int(c.embedding.embedding_dim) for c in model.components]
    starts = np.cumsum([0, *dims])
    checked = 0
    for ids, embedding in zip(sentence_ids, embeddings, strict=True):
        parts = unknown_only(model, ids)
        if len(rows) > 1 and model.config.combination == "add":
            if all(parts):
                np.testing.assert_allclose(embedding, combined(model, rows).numpy(), rtol=0, atol=atol)
                checked += 1
            continue
        for k, row in enumerate(rows):
            if parts[k]:
                np.testing.assert_allclose(embedding[starts[k]:starts[k + 1]], row.numpy(), rtol=0, atol=atol)
        checked += any(parts)
    return checked

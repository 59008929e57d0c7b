"""Negative mining of the mega-batch margin loss (vectorised) and the cross-process gather it needs under DDP."""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812

SAMPLING = ("MAX", "MIX", "RAND")
"""``MAX``: the most similar allowed sentence; ``RAND``: a uniformly random allowed sentence; ``MIX``: per negative,
``MAX`` or ``RAND`` with probability 1/2 each (``-samplingtype`` of ParaNMT-50M's ``utils.get_pairs_fast``)."""

CANDIDATES = ("both", "other_side")
"""``both``: a negative may be any sentence of the mega-batch, of either column (ParaNMT-50M's code; PRAS for
paraphrase data). ``other_side``: negatives of anchors are positives and vice versa (PRAS's ``pairing.py``; the
paper's choice for bitext, where the two columns are in different languages). Per-pair kinds (the loss's labels)
mix the two rules in one mega-batch: see :func:`other_language`."""


def allowed_candidates(
    query_hashes: torch.Tensor,
    partner_hashes: torch.Tensor,
    own_positions: torch.Tensor,
    candidate_hashes: torch.Tensor,
    pair_of_candidate: torch.Tensor,
) -> torch.Tensor:
    """Which candidates may be the negative of each query [Q, C].

    A candidate is excluded when it belongs to the query's own pair (``pair_of_candidate == own_positions``) or when
    its text is identical (same token-id hash) to the query or to the query's partner.
    """
    same_pair = pair_of_candidate.unsqueeze(0) == own_positions.unsqueeze(1)
    same_text = (candidate_hashes.unsqueeze(0) == query_hashes.unsqueeze(1)) | (
        candidate_hashes.unsqueeze(0) == partner_hashes.unsqueeze(1)
    )
    return ~(same_pair | same_text)


def other_language(
    query_translation: torch.Tensor, query_foreign: torch.Tensor, candidate_foreign: torch.Tensor
) -> torch.Tensor:
    """Which candidates each query may take under PRAS's rule for a mega-batch of bitext and paraphrase pairs [Q, C].

    PRAS (§3): negatives "are selected from the sentences in the batch from the opposing language when training with
    bitext and from any sentence in the batch when using paraphrase data". A query of a translation pair
    (``query_translation``) may only take a candidate of the other language (English vs. not English: the foreign
    side of translation pairs is the only non-English text); a query of a paraphrase pair may take any candidate.

    Args:
        query_translation: [Q] bool, the query belongs to a translation pair.
        query_foreign: [Q] bool, the query is the non-English side of a translation pair.
        candidate_foreign: [C] bool, the candidate is the non-English side of a translation pair.
    """
    same_language = query_foreign.unsqueeze(1) == candidate_foreign.unsqueeze(0)
    return ~(query_translation.unsqueeze(1) & same_language)


def select_negatives(
    queries: torch.Tensor, candidates: torch.Tensor, allowed: torch.Tensor, sampling: str, unit: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pick one negative per query.

    Args:
        queries: [Q, D] query embeddings (detached).
        candidates: [C, D] candidate embeddings (detached).
        allowed: [Q, C] candidates each query may take.
        sampling: ``MAX``, ``MIX`` or ``RAND`` (see :data:`SAMPLING`).
        unit: the queries and candidates are unit length (float32) already: their products are the cosines.

    Returns:
        (index [Q] into the candidates, has_negative [Q]): queries with no allowed candidate get index 0 and
        ``has_negative=False``.
    """
    if sampling not in SAMPLING:
        raise ValueError(f"sampling={sampling!r} is not one of {SAMPLING}")
    has_negative = allowed.any(dim=1)
    if candidates.shape[0] == 0:
        return torch.zeros(queries.shape[0], dtype=torch.long, device=queries.device), has_negative
    hardest = random = None
    if sampling in ("MAX", "MIX"):
        if not unit:
            queries, candidates = F.normalize(queries.float(), dim=-1), F.normalize(candidates.float(), dim=-1)
        scores = queries @ candidates.T
        hardest = scores.masked_fill(~allowed, float("-inf")).argmax(dim=1)
    if sampling in ("RAND", "MIX"):
        noise = torch.rand(allowed.shape, device=allowed.device)
        random = noise.masked_fill(~allowed, -1.0).argmax(dim=1)
    if sampling == "MAX":
        index = hardest
    elif sampling == "RAND":
        index = random
    else:
        coin = torch.rand(queries.shape[0], device=queries.device) < 0.5
        index = torch.where(coin, hardest, random)
    return index.masked_fill(~has_negative, 0), has_negative


def distributed_ready() -> bool:
    """Whether a torch.distributed process group with more than one process is running."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def all_gather_dim0(tensor: torch.Tensor) -> list[torch.Tensor]:
    """Gather a tensor whose first dimension differs across processes: one tensor per rank, in rank order.

    Pads to the largest first dimension, gathers with ``torch.distributed.all_gather`` (no gradient) and trims.
    Without a process group of several processes, returns ``[tensor]``.
    """
    if not distributed_ready():
        return [tensor]
    import torch.distributed as dist

    world = dist.get_world_size()
    size = torch.tensor([tensor.shape[0]], dtype=torch.long, device=tensor.device)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size)
    longest = max(int(s) for s in sizes)
    padded = tensor.new_zeros((longest, *tensor.shape[1:]))
    padded[: tensor.shape[0]] = tensor
    gathered = [torch.zeros_like(padded) for _ in range(world)]
    dist.all_gather(gathered, padded.contiguous())
    return [g[: int(s)] for g, s in zip(gathered, sizes, strict=True)]

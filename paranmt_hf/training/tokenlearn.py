"""A static table learned from a teacher's sentence embeddings (model2vec's "tokenlearn" idea), on our sentences.

model2vec's distillation (:mod:`paranmt_hf.model.distill`) embeds each vocabulary piece alone with the teacher; its
sentence averages fall well short of the teacher on STS (``benchmarks/quality``). Fitting the table so that the
*mean of a sentence's rows* points where the teacher's *sentence embedding* points recovers much of that gap:

1. least squares: a ridge-regularised linear map ``W`` from the table's mean-pooled sentence vectors to the teacher's
   embeddings, folded into the table (``table @ W``: still a static table, now of the teacher's width);
2. cosine regression: the table alone trained with sparse Adam on ``1 - cos(mean of rows, teacher embedding)``.

Unknown and padding pieces are left out of the means (their rows stay zero). ``paranmt-hf train --recipe best`` runs
this on its training sentences (targets from :mod:`paranmt_hf.training.teacher_embeddings`, cached), then
concatenates the learned table with the trained trigram model (:mod:`paranmt_hf.training.teacher`)::

    learned = fit_table(distilled_subword_encoder, sentences, targets, epochs=6)
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TokenlearnSpec:
    """What fitting the distilled table to the teacher's sentence embeddings takes (:func:`learn_table`).

    The teacher pass's plan reads it too (:mod:`paranmt_hf.training.teacher_pass`).

    Attributes:
        teacher: the sentence-transformers teacher (the recipe's ``teacher``).
        precision: how it embeds the sentences on CPU (``teacher_precision``).
        sentences: at most this many unique training sentences, a seeded sample (``tokenlearn_sentences``;
            ``None``: all).
        epochs: epochs of the cosine regression (``tokenlearn_epochs``; ``0``: the least-squares map only).
        learning_rate: its sparse Adam learning rate (``tokenlearn_learning_rate``).
    """

    teacher: str
    precision: str = "float32"
    sentences: int | None = None
    epochs: float = 6.0
    learning_rate: float = 3e-3


def unique_sentences(texts: Iterable[str], limit: int | None = None, seed: int = 0) -> list[str]:
    """The distinct non-blank texts (first-seen order); at most ``limit`` of them, a seeded sample (in that order)."""
    unique = list(dict.fromkeys(t for t in texts if t.strip()))
    if limit is not None and len(unique) > limit:
        keep = sorted(random.Random(seed).sample(range(len(unique)), limit))
        unique = [unique[i] for i in keep]
    return unique


def _bags(encoder: Any, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sentence's known piece ids back to back (unknown / padding left out), bag starts and lengths."""
    component = encoder.model.components[0]
    flat, lengths = encoder.featurizer.token_ids(sentences)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    known = ~np.isin(flat, [encoder.config.pad_token_id, *component.unknown_ids])
    flat, owner = flat[known], owner[known]
    lengths = np.bincount(owner, minlength=len(sentences)).astype(np.int64)
    return flat, np.cumsum(lengths) - lengths, lengths


def least_squares_map(table: np.ndarray, bags: tuple[np.ndarray, ...], targets: np.ndarray,
                      ridge: float = 1e-3) -> np.ndarray:
    """The map ``W`` minimising ``||X W - Y||^2 + ridge * n * s * ||W||^2``: ``[table dim, target dim]``.

    ``X``: the mean-pooled rows of each sentence, ``s``: their mean square per dimension; float64 normal equations.
    """
    import torch
    import torch.nn.functional as F  # noqa: N812

    flat, starts, _ = bags
    with torch.no_grad():
        x = F.embedding_bag(torch.from_numpy(flat), torch.from_numpy(table), torch.from_numpy(starts),
                            mode="mean").double()
    y = torch.from_numpy(targets).double()
    scale = float(x.pow(2).sum(1).mean()) / x.shape[1]
    a = x.T @ x + ridge * x.shape[0] * scale * torch.eye(x.shape[1], dtype=torch.float64)
    return torch.linalg.solve(a, x.T @ y).float().numpy()


def regress_table(
    table: np.ndarray,
    bags: tuple[np.ndarray, ...],
    targets: np.ndarray,
    epochs: float = 6.0,
    learning_rate: float = 3e-3,
    batch_size: int = 256,
    seed: int = 0,
    show_progress: bool = True,
) -> np.ndarray:
    """The table trained on ``1 - cos(mean of a sentence's rows, its target)`` (sparse Adam; a copy is returned)."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    flat, starts, lengths = bags
    rows = np.flatnonzero(lengths > 0)  # a sentence with no known piece has no direction to learn
    weight = torch.nn.Parameter(torch.from_numpy(np.array(table, dtype=np.float32)))
    optimizer = torch.optim.SparseAdam([weight], lr=learning_rate)
    y = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32))
    flat_t = torch.from_numpy(flat)
    rng = np.random.default_rng(seed)
    per_epoch = -(-len(rows) // batch_size)
    total = int(round(epochs * per_epoch))
    bar = None
    if show_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="Learning the subword table", unit="step")
    step, loss_sum, started = 0, 0.0, time.perf_counter()
    try:
        while step < total:
            order = rows[rng.permutation(len(rows))]
            for begin in range(0, len(order), batch_size):
                if step >= total:
                    break
                batch = order[begin : begin + batch_size]
                sizes = lengths[batch]
                ends = np.cumsum(sizes)
                index = np.repeat(starts[batch] - (ends - sizes), sizes) + np.arange(int(ends[-1]))
                pred = F.embedding_bag(flat_t[torch.from_numpy(index)], weight, torch.from_numpy(ends - sizes),
                                       mode="mean", sparse=True)
                loss = (1 - F.cosine_similarity(pred, y[torch.from_numpy(batch)])).mean()
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                step += 1
                loss_sum += float(loss.detach())
                if bar is not None:
                    bar.update(1)
                if step % per_epoch == 0:
                    logger.info("tokenlearn epoch %d: mean loss %.4f (%.0f s)", step // per_epoch,
                                loss_sum / per_epoch, time.perf_counter() - started)
                    loss_sum = 0.0
    finally:
        if bar is not None:
            bar.close()
    return weight.detach().numpy().copy()


def fit_table(
    encoder: Any,
    sentences: Sequence[str],
    targets: np.ndarray,
    epochs: float = 6.0,
    learning_rate: float = 3e-3,
    batch_size: int = 256,
    ridge: float = 1e-3,
    seed: int = 0,
    show_progress: bool = True,
) -> Any:
    """A ``subword`` encoder whose table is fitted to the teacher's sentence embeddings ``targets``.

    It is a new ``ParaNMTEncoder``: same tokenizer, table ``[vocab, teacher_dim]``, padding and unknown rows zero.

    Args:
        encoder: a ``ParaNMTEncoder`` with one ``subword`` component (e.g. model2vec's distillation of the teacher).
        sentences: the training sentences.
        targets: the teacher's embeddings of ``sentences`` (``[n, teacher_dim]``).
        epochs: passes of the cosine regression over the sentences (0: least squares only).
        learning_rate: of the sparse Adam.
        batch_size: sentences per step.
        ridge: regularisation of the least-squares map (relative to the features' mean square).
        seed: batch order.
        show_progress: a tqdm bar over the steps.
    """
    from ..model.build import build_encoder
    from ..model.distill import load_subword_table

    kinds = [c.kind for c in encoder.model.components]
    if kinds != ["subword"]:
        raise ValueError(f"fit_table needs a single subword component, got {'+'.join(kinds)}")
    targets = np.asarray(targets, dtype=np.float32)
    if len(targets) != len(sentences):
        raise ValueError(f"{len(targets)} targets for {len(sentences)} sentences")
    started = time.perf_counter()
    bags = _bags(encoder, list(sentences))
    table = encoder.model.components[0].embedding.weight.detach().numpy().astype(np.float32)
    table = table @ least_squares_map(table, bags, targets, ridge)
    if epochs > 0:
        table = regress_table(table, bags, targets, epochs, learning_rate, batch_size, seed, show_progress)
    component = encoder.model.components[0]
    table[[encoder.config.pad_token_id, *component.unknown_ids]] = 0.0
    logger.info("tokenlearn: %d sentences, table %s, %.0f s", len(sentences), table.shape,
                time.perf_counter() - started)
    out = build_encoder(["subword"], list(sentences[:1]) or ["."], embedding_dim=[table.shape[1]],
                        subword_tokenizer=encoder.tokenizer, pooling=encoder.config.pooling)
    load_subword_table(out, table)
    return out


def learn_table(
    spec: TokenlearnSpec, table: Any, texts: list[str], seed: int = 0, show_progress: bool = True,
    stats: dict[str, Any] | None = None,
) -> Any:
    """The distilled ``subword`` encoder ``table`` fitted to the teacher's sentence embeddings of ``texts``.

    The unique texts (at most ``spec.sentences``, a seeded sample) are embedded by the teacher on every core
    (cached: :mod:`paranmt_hf.training.teacher_embeddings`), then :func:`fit_table`. ``stats`` gets
    ``tokenlearn_sentences``, ``teacher_pass`` (``cached``, ``seconds``, ``path``, ``engine``, ...) and
    ``tokenlearn_seconds``.
    """
    from .teacher_embeddings import teacher_embeddings

    sentences = unique_sentences(texts, spec.sentences, seed)
    teacher_pass: dict[str, Any] = {}
    targets = teacher_embeddings(sentences, spec.teacher, spec.precision, show_progress=show_progress,
                                 info=teacher_pass)
    started = time.perf_counter()
    learned = fit_table(table, sentences, targets, epochs=spec.epochs, learning_rate=spec.learning_rate, seed=seed,
                        show_progress=show_progress)
    if stats is not None:
        stats.update(tokenlearn_sentences=len(sentences), teacher_pass=teacher_pass,
                     tokenlearn_seconds=round(time.perf_counter() - started, 1))
    return learned


__all__ = ["TokenlearnSpec", "fit_table", "learn_table", "least_squares_map", "regress_table", "unique_sentences"]

"""A run's optimizer: ``LazyAdam``, when it runs, and the own learning rate of a teacher's tables.

``LazyAdam`` is Adam for embedding tables with sparse gradients (only used rows are updated); :class:`OptimizerSpec`
says when a run uses it and at which rates, :func:`run_optimizer` builds the run's optimizer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch


class LazyAdam(torch.optim.Optimizer):
    """Adam (Kingma & Ba) that handles sparse and dense gradients in one optimizer.

    Dense gradients get the standard Adam update. Sparse gradients (``nn.Embedding(sparse=True)``) update the moments
    and weights of the rows present in the gradient only ("lazy" Adam, as ``torch.optim.SparseAdam``): rows a step
    did not use keep their values and moments. With sparse gradients a step costs O(rows used), not O(vocabulary), so
    a 50K x 1024 table trains as fast as a small one. Bias correction uses the parameter's step count.
    As fast as ``torch.optim.SparseAdam`` on sparse tables (benchmarks/training_speed/README.md); kept because one
    optimizer also takes the dense gradients a run mixes in (the teacher's per-table rates).

    Args:
        params: parameters or parameter groups.
        lr: learning rate.
        betas: moment decay rates.
        eps: denominator term.
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        if lr < 0 or eps < 0 or not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"invalid LazyAdam hyper-parameters lr={lr}, betas={betas}, eps={eps}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps})

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """One update of every parameter that has a gradient."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
                step = float(state["step"])
                correction1, correction2 = 1 - beta1**step, 1 - beta2**step
                m, v = state["exp_avg"], state["exp_avg_sq"]
                if p.grad.is_sparse:
                    rows, values = summed_rows(p.grad)
                    block = max(1, BLOCK_BYTES // max(1, values.shape[1:].numel() * values.element_size()))
                    for begin in range(0, rows.shape[0], block):  # each block's temporaries stay in cache
                        _lazy_rows(p, m, v, rows[begin : begin + block], values[begin : begin + block],
                                   beta1, beta2, eps, -lr / correction1, correction2)
                else:
                    m.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                    v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                    p.addcdiv_(m, (v / correction2).sqrt_().add_(eps), value=-lr / correction1)
        return loss


BLOCK_BYTES = 512 * 1024
"""Bytes of gradient rows ``LazyAdam`` updates at a time: the block's passes (gathers, moments, update, scatters)
then run in the core's cache instead of memory, with the same values (every pass is per element)."""


def _lazy_rows(
    p: torch.Tensor, m: torch.Tensor, v: torch.Tensor, rows: torch.Tensor, values: torch.Tensor,
    beta1: float, beta2: float, eps: float, rate: float, correction2: float,
) -> None:
    """Adam's update of the table rows ``rows`` (distinct) with their gradients ``values``: moments and weights."""
    # index_select / index_copy_ (not m[rows]): the same values, a third of the gather's time
    m_rows = m.index_select(0, rows).mul_(beta1).add_(values, alpha=1 - beta1)
    v_rows = v.index_select(0, rows).mul_(beta2).addcmul_(values, values, value=1 - beta2)
    m.index_copy_(0, rows, m_rows)
    v.index_copy_(0, rows, v_rows)
    update = m_rows.div_(v_rows.div_(correction2).sqrt_().add_(eps))  # stored: the rows are free
    p.index_add_(0, rows, update, alpha=rate)


def summed_rows(grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows of a sparse gradient [V, D] and their gradients, one per row in increasing order.

    A gradient whose rows are already distinct and sorted (the averaging models' sparse tables give one row per used
    token) is taken as it is, without ``coalesce``'s sort and copy; any other is coalesced.
    """
    if not grad.is_coalesced():
        rows = grad._indices()[0]
        if rows.numel() > 1 and not bool((rows[1:] > rows[:-1]).all()):
            grad = grad.coalesce()
        else:
            return rows, grad._values()
    return grad.indices()[0], grad.values()


SPARSE_AUTO_MIN_PARAMETERS = 8_000_000
"""With ``optimizer="auto"``, embedding tables at least this large train with sparse gradients and LazyAdam (a dense
Adam step over e.g. 50K x 1024 rows costs more than the rest of the step); smaller ones with dense Adam."""

OPTIMIZERS = ("auto", "lazy_adam", "adam")


@dataclass(frozen=True)
class OptimizerSpec:
    """What choosing and building a run's optimizer takes (the recipe's fields of the same names).

    Attributes:
        optimizer: ``"auto"``, ``"lazy_adam"`` or ``"adam"`` (see :func:`uses_lazy_adam`).
        learning_rate: the rate of every parameter but the teacher's tables.
        max_grad_norm: gradient clipping (``0``: off); it needs dense gradients.
        table_rate: the own rate of the ``subword`` tables distilled from a teacher (``teacher_learning_rate``, or
            ``learning_rate`` when that is ``None``; ``0``: frozen); ``None``: no teacher table is trained.
        keep_norms: restore each table row's initial norm after every step.
    """

    optimizer: str = "auto"
    learning_rate: float = 1e-3
    max_grad_norm: float = 0.0
    table_rate: float | None = None
    keep_norms: bool = False


def optimizer_conflict(optimizer: str, max_grad_norm: float) -> str | None:
    """What a run cannot do with ``optimizer`` (None: nothing).

    ``"unknown"``: not one of :data:`OPTIMIZERS`; ``"clipping"``: gradient clipping (``max_grad_norm > 0``) with
    LazyAdam's sparse gradients. The one rule behind the training plan's
    :class:`~paranmt_hf.training.recipes.RecipeError` and :func:`uses_lazy_adam`'s ValueError (each words it for its
    caller).
    """
    if optimizer not in OPTIMIZERS:
        return "unknown"
    if optimizer == "lazy_adam" and max_grad_norm > 0:
        return "clipping"
    return None


def uses_lazy_adam(optimizer: str, max_grad_norm: float, model: Any) -> bool:
    """Whether a run with ``optimizer`` trains ``model`` (a ParaNMTModel) with LazyAdam and sparse gradients.

    ``"auto"`` chooses dense Adam when gradients are clipped (``max_grad_norm > 0``), whatever the table size.

    Raises:
        ValueError: an unknown optimizer, or gradient clipping with ``"lazy_adam"`` (the training plan refuses both
            first, as :class:`~paranmt_hf.training.recipes.RecipeError`).
    """
    conflict = optimizer_conflict(optimizer, max_grad_norm)
    if conflict == "unknown":
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if conflict == "clipping":
        raise ValueError("gradient clipping (max_grad_norm > 0) needs optimizer='adam' (dense gradients)")
    if optimizer != "auto":
        return optimizer == "lazy_adam"
    largest = max(encoder.embedding.weight.numel() for encoder in model.components)
    return largest >= SPARSE_AUTO_MIN_PARAMETERS and max_grad_norm <= 0  # clipping asked: dense gradients


def run_optimizer(spec: OptimizerSpec, model: Any) -> torch.optim.Optimizer | None:
    """The optimizer of a run training ``model`` (a ParaNMTModel), its embedding tables switched to match.

    The tables get sparse gradients when :func:`uses_lazy_adam` says so (else dense ones). Returns ``LazyAdam`` then,
    or with a teacher's tables (:func:`teacher_optimizer`); ``None`` otherwise: the Trainer's own AdamW.

    Raises:
        ValueError: an unknown optimizer, or gradient clipping with sparse gradients.
    """
    lazy = uses_lazy_adam(spec.optimizer, spec.max_grad_norm, model)
    set_sparse_embeddings(model, lazy)
    if spec.table_rate is not None:
        return teacher_optimizer(spec, model)
    return LazyAdam(model.parameters(), lr=spec.learning_rate) if lazy else None


def teacher_tables(model: Any) -> list[torch.nn.Parameter]:
    """The embedding tables of the ``subword`` components of a ParaNMTModel."""
    return [c.embedding.weight for c in model.components if c.kind == "subword"]


def teacher_optimizer(spec: OptimizerSpec, model: Any) -> torch.optim.Optimizer:
    """``LazyAdam`` (sparse or dense gradients) with the subword tables at their own rate.

    The tables train at ``spec.table_rate`` (``0``: frozen), the rest at ``spec.learning_rate``;
    ``spec.keep_norms`` restores the tables' row norms after every step.
    """
    tables = teacher_tables(model)
    rate = spec.learning_rate if spec.table_rate is None else spec.table_rate
    table_ids = {id(t) for t in tables}
    others = [p for p in model.parameters() if id(p) not in table_ids]
    groups: list[dict[str, Any]] = [{"params": others, "lr": spec.learning_rate}]
    if rate > 0:
        groups.append({"params": tables, "lr": rate})
    else:
        for table in tables:
            table.requires_grad_(False)
    optimizer = LazyAdam(groups, lr=spec.learning_rate)
    if spec.keep_norms and rate > 0:
        norms = [t.detach().norm(dim=1, keepdim=True).clone() for t in tables]
        optimizer.register_step_post_hook(lambda *_: _restore_norms(tables, norms))
    return optimizer


@torch.no_grad()
def _restore_norms(tables: list[torch.nn.Parameter], norms: list[torch.Tensor]) -> None:
    for table, norm in zip(tables, norms, strict=True):
        table.mul_(norm / table.norm(dim=1, keepdim=True).clamp_min(1e-12))


def set_sparse_embeddings(model: Any, sparse: bool) -> None:
    """Switch the embedding tables of a ParaNMTModel to sparse (or dense) gradients, config included."""
    model.config.sparse_embeddings = sparse
    for encoder in model.components:
        encoder.embedding.sparse = sparse

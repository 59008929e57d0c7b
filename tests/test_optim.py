"""LazyAdam: equals torch Adam on dense gradients and SparseAdam on sparse ones."""

from __future__ import annotations

import torch

from paranmt_hf.training.optim import LazyAdam, summed_rows


def _run(optimizer_cls, sparse, **kw):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(20, 4, sparse=sparse)
    lin = torch.nn.Linear(4, 1)
    opt = optimizer_cls([emb.weight], **kw) if sparse and optimizer_cls is torch.optim.SparseAdam else None
    params = [emb.weight] if opt is not None else [*emb.parameters(), *lin.parameters()]
    opt = opt or optimizer_cls(params, **kw)
    for step in range(5):
        opt.zero_grad()
        ids = torch.tensor([[1, 2, 3], [3, 4, 5]]) + step
        out = emb(ids).mean(1)
        loss = (out if sparse and optimizer_cls is torch.optim.SparseAdam else lin(out)).pow(2).sum()
        loss.backward()
        opt.step()
    return emb.weight.detach().clone()


def test_dense_gradients_match_torch_adam():
    torch.testing.assert_close(_run(LazyAdam, False, lr=0.01), _run(torch.optim.Adam, False, lr=0.01))


def test_sparse_gradients_match_sparse_adam_and_leave_unused_rows():
    torch.manual_seed(0)
    emb = torch.nn.Embedding(20, 4, sparse=True)
    ref = torch.nn.Embedding(20, 4, sparse=True)
    ref.load_state_dict(emb.state_dict())
    before = emb.weight.detach().clone()
    a, b = LazyAdam(emb.parameters(), lr=0.01), torch.optim.SparseAdam(ref.parameters(), lr=0.01)
    for step in range(5):
        for module, opt in ((emb, a), (ref, b)):
            opt.zero_grad()
            module(torch.tensor([[1, 2, 3], [3, 4, 5]]) + step).pow(2).sum().backward()
            opt.step()
    torch.testing.assert_close(emb.weight, ref.weight)
    torch.testing.assert_close(emb.weight[15:], before[15:])  # never used: untouched
    assert not torch.allclose(emb.weight[1:9], before[1:9])


def test_sparse_steps_follow_the_lazy_adam_formula_and_keep_their_moments():
    """Uncoalesced sparse gradients with repeated rows, five steps: the formula's weights and moments, row by row."""
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(30, 6))
    initial = weight.detach().clone()
    want, m, v = initial.clone(), torch.zeros(30, 6), torch.zeros(30, 6)
    lr, (beta1, beta2), eps = 0.05, (0.9, 0.999), 1e-8
    opt = LazyAdam([weight], lr=lr)
    for step in range(1, 6):
        ids = torch.randint(0, 12, (25,))
        grad = torch.sparse_coo_tensor(ids[None], torch.randn(25, 6), (30, 6))
        weight.grad = grad
        opt.step()
        coalesced = grad.coalesce()
        rows, values = coalesced.indices()[0], coalesced.values()
        m[rows] = beta1 * m[rows] + (1 - beta1) * values
        v[rows] = beta2 * v[rows] + (1 - beta2) * values * values
        denominator = (v[rows] / (1 - beta2**step)).sqrt() + eps
        want[rows] -= lr / (1 - beta1**step) * (m[rows] / denominator)
        torch.testing.assert_close(weight.detach(), want, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(opt.state[weight]["exp_avg"], m, atol=1e-7, rtol=1e-6)
    torch.testing.assert_close(opt.state[weight]["exp_avg_sq"], v, atol=1e-9, rtol=1e-6)
    assert torch.equal(weight.detach()[12:], initial[12:])  # rows no gradient named: untouched


def test_summed_rows_take_distinct_sorted_rows_as_they_are_and_coalesce_the_rest():
    values = torch.randn(3, 2)
    distinct = torch.sparse_coo_tensor(torch.tensor([[1, 4, 7]]), values, (9, 2))
    assert not distinct.is_coalesced()
    rows, got = summed_rows(distinct)
    assert rows.tolist() == [1, 4, 7] and got.data_ptr() == values.data_ptr()  # no sort, no copy
    for ids in ([7, 1, 4], [4, 1, 4]):  # unsorted, repeated: coalesced
        grad = torch.sparse_coo_tensor(torch.tensor([ids]), values, (9, 2))
        rows, got = summed_rows(grad)
        want = grad.coalesce()
        assert torch.equal(rows, want.indices()[0]) and torch.equal(got, want.values())


def test_sparse_steps_in_blocks_of_rows_equal_one_block_bit_for_bit(monkeypatch):
    """LazyAdam updates a sparse gradient's rows a cache-sized block at a time: the values of one whole-table pass."""
    from paranmt_hf.training import optim

    def trained(block_bytes: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        monkeypatch.setattr(optim, "BLOCK_BYTES", block_bytes)
        generator = torch.Generator().manual_seed(0)
        weight = torch.nn.Parameter(torch.randn(200, 16, generator=generator))
        opt = LazyAdam([weight], lr=0.05)
        for _ in range(4):
            rows = torch.randperm(200, generator=generator)[:90].sort().values
            weight.grad = torch.sparse_coo_tensor(rows[None], torch.randn(90, 16, generator=generator), (200, 16))
            opt.step()
        state = opt.state[weight]
        return weight.detach(), state["exp_avg"], state["exp_avg_sq"]

    whole = trained(1 << 40)
    for block_bytes in (16 * 4, 7 * 16 * 4):  # one row, seven rows (90 rows: a short last block)
        assert all(torch.equal(a, b) for a, b in zip(trained(block_bytes), whole, strict=True))
    blocks = []
    update = optim._lazy_rows
    monkeypatch.setattr(optim, "_lazy_rows", lambda p, m, v, rows, *rest: blocks.append(len(rows)) or update(
        p, m, v, rows, *rest))
    trained(7 * 16 * 4)
    assert blocks == [7] * 12 + [6] + [7] * 12 + [6] + [7] * 12 + [6] + [7] * 12 + [6]  # 4 steps of 90 rows


def test_a_sparse_gradient_without_rows_is_a_step_that_changes_nothing():
    """A table the step did not use (``zero_grad(set_to_none=False)``): an empty sparse gradient, no error."""
    table = torch.nn.Embedding(10, 4, sparse=True)
    opt = LazyAdam(table.parameters(), lr=0.1)
    table(torch.tensor([1, 2])).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=False)
    assert table.weight.grad._nnz() == 0
    before = table.weight.detach().clone()
    opt.step()
    assert torch.equal(table.weight.detach(), before)

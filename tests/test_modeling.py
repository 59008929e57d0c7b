"""ParaNMTModel semantics: pooling, masking, unknown tokens, recurrent encoders, GRAN, scrambling, combinations."""

from __future__ import annotations

import pytest
import torch
from _unknown_rows import combined, randomise_unknown_rows

from paranmt_hf import ParaNMTConfig, ParaNMTModel


def make(**kw) -> ParaNMTModel:
    torch.manual_seed(0)
    defaults = {"vocab_size": 12, "embedding_dim": 6}
    return ParaNMTModel(ParaNMTConfig(**{**defaults, **kw})).eval()


def pooled(model, ids, mask=None):
    ids = torch.tensor(ids)
    mask = None if mask is None else torch.tensor(mask)
    return model(input_ids=ids, attention_mask=mask).pooler_output


def both_layouts(model, rows):
    """Sentence embeddings of ``rows`` (lists of ids) from the padded layout and from the flat layout."""
    width = max(map(len, rows))
    ids = [r + [0] * (width - len(r)) for r in rows]
    padded = pooled(model, ids, [[1] * len(r) + [0] * (width - len(r)) for r in rows])
    lengths = torch.tensor([len(r) for r in rows])
    flat = model(input_ids=torch.tensor([t for r in rows for t in r]), offsets=torch.cumsum(lengths, 0) - lengths)
    return padded, flat.pooler_output


@pytest.mark.parametrize("kind", ["word", "trigram", "sp"])
def test_averaging_is_mean_of_embeddings_and_ignores_padding(kind):
    m = make(kind=kind)
    w = m.components[0].embedding.weight
    out = pooled(m, [[2, 3, 4, 0], [5, 0, 0, 0]], [[1, 1, 1, 0], [1, 0, 0, 0]])
    torch.testing.assert_close(out[0], w[[2, 3, 4]].mean(0))
    torch.testing.assert_close(out[1], w[5])
    assert m.config.hidden_size == 6


def test_max_pooling():
    m = make(kind="word", pooling="max")
    w = m.components[0].embedding.weight
    torch.testing.assert_close(pooled(m, [[2, 3, 0]], [[1, 1, 0]])[0], w[[2, 3]].max(0).values)


def test_unknown_tokens_embedded_or_dropped():
    keep = make(kind="sp")
    drop = make(kind="sp", drop_unknown_tokens=True, unknown_token_ids=[7])
    randomise_unknown_rows(keep)
    (unk,) = randomise_unknown_rows(drop)  # non-zero: new models start with a zero unknown row
    w = keep.components[0].embedding.weight
    torch.testing.assert_close(pooled(keep, [[2, 1, 3]])[0], w[[2, 1, 3]].mean(0))
    wd = drop.components[0].embedding.weight
    torch.testing.assert_close(pooled(drop, [[2, 1, 7, 3]])[0], wd[[2, 3]].mean(0))
    # nothing left after dropping -> the unknown token's embedding, in both layouts
    assert unk.abs().min() > 0
    torch.testing.assert_close(pooled(drop, [[1, 7]])[0], unk)
    flat = drop(input_ids=torch.tensor([2, 3, 1, 7]), offsets=torch.tensor([0, 2])).pooler_output
    torch.testing.assert_close(flat[1], unk)


@pytest.mark.parametrize("pooling", ["mean", "max"])
@pytest.mark.parametrize("drop", [False, True])
def test_empty_sentence_is_unknown_token(pooling, drop):
    """An empty sentence (or, dropping unknown tokens, one of unknown tokens only) embeds as the [UNK] row."""
    m = make(kind="word", pooling=pooling, drop_unknown_tokens=drop, unknown_token_ids=[7])
    (unk,) = randomise_unknown_rows(m)
    assert unk.abs().min() > 0
    no_padding = m(input_ids=torch.zeros((2, 0), dtype=torch.long)).pooler_output  # a batch of [B, 0] input
    for out in both_layouts(m, [[], [2, 3], [1, 7]]):  # empty, known tokens, unknown tokens only
        assert torch.isfinite(out).all()
        torch.testing.assert_close(out[0], unk)
        assert not torch.allclose(out[1], unk)
        if drop:
            torch.testing.assert_close(out[2], unk)
    torch.testing.assert_close(no_padding, unk.expand(2, -1))


@pytest.mark.parametrize("kind", ["lstm", "bilstm", "gran"])
def test_empty_sentence_is_read_as_the_unknown_token_by_recurrent_encoders(kind):
    m = make(kind=kind, rnn_hidden_size=5, drop_unknown_tokens=True, unknown_token_ids=[7])
    randomise_unknown_rows(m)
    as_unknown = pooled(m, [[1]])[0]
    out = pooled(m, [[0, 0], [1, 7], [2, 3]], [[0, 0], [1, 1], [1, 1]])
    torch.testing.assert_close(out[0], as_unknown)
    torch.testing.assert_close(out[1], as_unknown)
    # ... which differs from reading a zero embedding (the unknown row of a new model)
    with torch.no_grad():
        m.components[0].embedding.weight[1] = 0
    assert not torch.allclose(pooled(m, [[1]])[0], as_unknown)


def word_trigram_model(combination: str, pooling: str) -> ParaNMTModel:
    """A tiny word+trigram combination (trigram unknowns dropped), seeded, in eval mode."""
    config = ParaNMTConfig(
        components=[
            {"kind": "word", "vocab_size": 6},
            {"kind": "trigram", "vocab_size": 8, "drop_unknown_tokens": True},
        ],
        combination=combination,
        pooling=pooling,
        embedding_dim=4,
    )
    torch.manual_seed(0)
    return ParaNMTModel(config).eval()


@pytest.mark.parametrize("combination", ["concat", "add"])
@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_empty_component_of_a_combination_is_its_unknown_row(combination, pooling):
    """Each component of a combination with no token of a sentence embeds it as that component's [UNK] row."""
    m = word_trigram_model(combination, pooling)
    unk_word, unk_tri = randomise_unknown_rows(m)
    # ids 0-5: word component, 6-13: trigram component (its unknown token: 6 + 1 = 7)
    padded, flat = both_layouts(m, [[], [2, 3], [8, 9], [2, 7]])
    w_word, w_tri = (c.embedding.weight for c in m.components)

    def pool(rows_: torch.Tensor) -> torch.Tensor:
        return rows_.mean(0) if pooling == "mean" else rows_.max(0).values

    expected = torch.stack([
        combined(m, [unk_word, unk_tri]),  # empty: both components
        combined(m, [pool(w_word[[2, 3]]), unk_tri]),  # no trigram token
        combined(m, [unk_word, pool(w_tri[[2, 3]])]),  # no word token
        combined(m, [w_word[2], unk_tri]),  # the trigram component's only token is dropped as unknown
    ])
    torch.testing.assert_close(padded, expected)
    torch.testing.assert_close(flat, expected)


@pytest.mark.parametrize("kind", ["word", "trigram", "lstm"])
def test_new_models_start_with_zero_unknown_and_padding_rows(kind):
    m = make(kind=kind)
    weight = m.components[0].embedding.weight
    assert weight[m.config.unk_token_id].eq(0).all() and weight[m.config.pad_token_id].eq(0).all()
    assert weight[2:].abs().sum(dim=1).gt(0).all()  # every other row is initialised


def test_flat_layout_equals_padded_layout():
    m = make(kind="sp", drop_unknown_tokens=True, unknown_token_ids=[9])
    padded = pooled(
        m,
        [[2, 3, 9, 0], [1, 0, 0, 0], [0, 0, 0, 0], [4, 5, 6, 7]],
        [[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]],
    )
    flat = m(input_ids=torch.tensor([2, 3, 9, 1, 4, 5, 6, 7]), offsets=torch.tensor([0, 3, 4, 4])).pooler_output
    torch.testing.assert_close(flat, padded)


def test_lstm_is_mean_of_hidden_states_and_padding_free():
    m = make(kind="lstm", rnn_hidden_size=5)
    emb = m.components[0].embedding.weight[[2, 3, 4]].unsqueeze(0)
    states, _ = m.components[0].rnn(emb)
    torch.testing.assert_close(pooled(m, [[2, 3, 4]])[0], states[0].mean(0))
    # left padding / holes in the mask do not change the result
    torch.testing.assert_close(pooled(m, [[0, 2, 3, 0, 4]], [[0, 1, 1, 0, 1]])[0], states[0].mean(0))
    assert m.config.hidden_size == 5


@pytest.mark.parametrize("merge,size", [("mean", 5), ("concat", 10)])
def test_bilstm_merges_forward_and_backward(merge, size):
    m = make(kind="bilstm", rnn_hidden_size=5, bilstm_merge=merge)
    emb = m.components[0].embedding.weight[[2, 3, 4]].unsqueeze(0)
    states, _ = m.components[0].rnn(emb)
    f, b = states[0, :, :5].mean(0), states[0, :, 5:].mean(0)
    expected = (f + b) / 2 if merge == "mean" else torch.cat([f, b])
    out = pooled(m, [[2, 3, 4, 0]], [[1, 1, 1, 0]])[0]
    assert out.shape == (size,) and m.config.hidden_size == size
    torch.testing.assert_close(out, expected)


def test_gran_formula():
    m = make(kind="gran", rnn_hidden_size=4)
    enc = m.components[0]
    x = enc.embedding.weight[[2, 3, 4]].unsqueeze(0)
    h, _ = enc.rnn(x)
    a = x * torch.sigmoid(x @ enc.gate_x.weight.T + enc.gate_x.bias + h @ enc.gate_h.weight.T)
    torch.testing.assert_close(pooled(m, [[2, 3, 4]])[0], a[0].mean(0))
    assert m.config.hidden_size == 6


def test_scrambling_only_in_training_and_only_for_recurrent():
    lstm = make(kind="lstm", scramble_rate=1.0)
    ids = [[2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]
    eval_out = pooled(lstm, ids)
    torch.testing.assert_close(pooled(lstm, ids), eval_out)
    lstm.train()
    torch.manual_seed(1)
    assert not torch.allclose(pooled(lstm, ids), eval_out)
    avg = make(kind="word", scramble_rate=1.0)
    ref = pooled(avg, ids)
    avg.train()
    torch.testing.assert_close(pooled(avg, ids), ref)


def test_scrambling_permutes_tokens_of_a_sentence():
    lstm = make(kind="lstm", scramble_rate=1.0).train()
    rows = 16
    ids = torch.tensor([[2, 3, 4, 5, 6, 7, 0, 0]] * rows)
    valid = ids != 0
    torch.manual_seed(3)
    packed, packed_valid = lstm.components[0]._pack_front(ids, valid)
    for row, row_valid in zip(packed.tolist(), packed_valid.tolist(), strict=True):
        assert sorted(row[:6]) == [2, 3, 4, 5, 6, 7] and row_valid == [True] * 6 + [False] * 2  # a permutation
    scrambled = sum(row[:6] != [2, 3, 4, 5, 6, 7] for row in packed.tolist())
    assert scrambled >= rows - 1  # 1/720 chance per row of drawing the original order (seeded: 16 of 16)


def test_no_scrambling_at_rate_zero():
    lstm = make(kind="lstm", scramble_rate=0.0).train()
    ids = torch.tensor([[2, 3, 4, 5, 6, 7, 0, 0]] * 8)
    torch.manual_seed(3)
    packed, _ = lstm.components[0]._pack_front(ids, ids != 0)
    assert packed.tolist() == ids.tolist()


def test_embedding_dropout_only_in_training():
    m = make(kind="word", embedding_dropout=0.5)
    ref = pooled(m, [[2, 3, 4]])
    torch.testing.assert_close(pooled(m, [[2, 3, 4]]), ref)
    m.train()
    assert not torch.allclose(pooled(m, [[2, 3, 4]]), ref)


@pytest.mark.parametrize("combination", ["concat", "add"])
def test_combination_routes_ids_by_range(combination):
    torch.manual_seed(0)
    cfg = ParaNMTConfig(
        components=[
            {"kind": "trigram", "vocab_size": 10, "embedding_dim": 4},
            {"kind": "lstm", "vocab_size": 8, "embedding_dim": 3, "rnn_hidden_size": 4},
        ],
        combination=combination,
    )
    m = ParaNMTModel(cfg).eval()
    assert cfg.component_offsets() == [0, 10]
    out = pooled(m, [[2, 3, 12, 13, 0]], [[1, 1, 1, 1, 0]])[0]
    tri = m.components[0].embedding.weight[[2, 3]].mean(0)
    lstm_states, _ = m.components[1].rnn(m.components[1].embedding.weight[[2, 3]].unsqueeze(0))
    lstm = lstm_states[0].mean(0)
    expected = torch.cat([tri, lstm]) if combination == "concat" else tri + lstm
    torch.testing.assert_close(out, expected)
    assert cfg.hidden_size == expected.shape[0]


def test_bad_inputs_raise_clear_errors():
    m = make(kind="word")
    with pytest.raises(ValueError, match="outside its vocabulary"):
        pooled(m, [[2, 99]])
    with pytest.raises(ValueError, match="offsets"):
        m(input_ids=torch.tensor([1, 2]))
    lstm = make(kind="lstm")
    with pytest.raises(ValueError, match="flat"):
        lstm(input_ids=torch.tensor([1, 2]), offsets=torch.tensor([0]))
    combo = ParaNMTModel(
        ParaNMTConfig(
            components=[{"kind": "word", "vocab_size": 5}, {"kind": "word", "vocab_size": 5}], embedding_dim=2
        )
    )
    with pytest.raises(ValueError, match="outside every component"):
        pooled(combo, [[2, 11]])
    with pytest.raises(ValueError, match="outside every component"):
        combo(input_ids=torch.tensor([2, 11]), offsets=torch.tensor([0]))
    combo_lstm = ParaNMTModel(
        ParaNMTConfig(components=[{"kind": "word"}, {"kind": "lstm"}], vocab_size=5, embedding_dim=2)
    )
    with pytest.raises(ValueError, match="flat"):
        combo_lstm(input_ids=torch.tensor([1, 2]), offsets=torch.tensor([0]))


@pytest.mark.parametrize("combination", ["add", "concat"])
@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_combinations_take_the_flat_layout_with_the_padded_result(combination, pooling):
    m = word_trigram_model(combination, pooling)
    assert m.accepts_flat_input
    # ids 0-5: word component, 6-13: trigram component (its unknown token: 6 + 1 = 7)
    rows = [[2, 3, 8, 9, 10], [4, 7], [], [11, 12], [5, 1, 13, 7]]
    width = max(map(len, rows))
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    padded = pooled(m, ids.tolist(), mask.tolist())
    lengths = torch.tensor([len(r) for r in rows])
    flat = m(input_ids=torch.tensor([t for r in rows for t in r]), offsets=torch.cumsum(lengths, 0) - lengths)
    torch.testing.assert_close(flat.pooler_output, padded)
    assert flat.pooler_output.shape == (len(rows), 4 if combination == "add" else 8)


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"kind": "cnn"}, "kind"),
        ({"pooling": "sum"}, "pooling"),
        ({"scramble_rate": 1.5}, "scramble_rate"),
        (
            {"components": [{"kind": "word", "embedding_dim": 3}, {"kind": "word"}], "combination": "add"},
            "equal",
        ),
        ({"components": [{"kind": "word", "colour": 1}]}, "Unknown component field"),
        ({"unknown_token_ids": [50]}, "token ids"),
    ],
)
def test_config_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        ParaNMTConfig(**{"vocab_size": 12, "embedding_dim": 6, **kw})


def test_hidden_size_is_derived_not_taken():
    cfg = ParaNMTConfig(kind="word", embedding_dim=7, hidden_size=999)
    assert cfg.hidden_size == 7
    again = ParaNMTConfig.from_dict(cfg.to_dict())
    assert again.hidden_size == 7 and again.resolved_components() == cfg.resolved_components()


def test_padding_row_initialised_to_zero_and_embeddings_use_initializer_range():
    m = ParaNMTModel(ParaNMTConfig(kind="word", vocab_size=2000, embedding_dim=50, initializer_range=0.5))
    w = m.components[0].embedding.weight
    assert torch.count_nonzero(w[0]) == 0
    assert abs(w[1:].std().item() - 0.5) < 0.02


def test_flat_layout_with_dropout_in_training_matches_padded_statistics():
    m = make(kind="word", embedding_dropout=0.5).train()
    torch.manual_seed(0)
    flat = m(input_ids=torch.tensor([2, 3, 4, 5]), offsets=torch.tensor([0, 3])).pooler_output
    w = m.components[0].embedding.weight
    # each bag is the mean of its (dropped-out) token embeddings: zero or doubled coordinates
    torch.manual_seed(0)
    dropped = torch.nn.functional.dropout(w[[2, 3, 4, 5]], 0.5)
    torch.testing.assert_close(flat, torch.stack([dropped[:3].mean(0), dropped[3]]))


@pytest.mark.parametrize("kind", ["word", "lstm"])
def test_sparse_embeddings_give_sparse_gradients_and_same_outputs(kind):
    dense, sparse = make(kind=kind), make(kind=kind, sparse_embeddings=True)
    sparse.load_state_dict(dense.state_dict())
    ids, mask = [[2, 3, 4], [5, 6, 0]], [[1, 1, 1], [1, 1, 0]]
    torch.testing.assert_close(pooled(sparse, ids, mask), pooled(dense, ids, mask))
    pooled(sparse, ids, mask).sum().backward()
    assert sparse.components[0].embedding.weight.grad.is_sparse
    if kind == "word":
        sparse.zero_grad()
        sparse(input_ids=torch.tensor([2, 3, 4]), offsets=torch.tensor([0, 2])).pooler_output.sum().backward()
        assert sparse.components[0].embedding.weight.grad.is_sparse


def test_sparse_table_gradient_has_one_row_per_used_token_with_torch_backward_sums():
    """A sparse table's gradient: one row per used token (summed already), the sums torch's own backward gives."""
    model = make(kind="word", sparse_embeddings=True, vocab_size=40, embedding_dim=5).train()
    weight = model.components[0].embedding.weight
    torch.manual_seed(1)
    ids = torch.randint(1, 40, (60,))
    ids[::3] = 7  # a token repeated within and across bags
    offsets = torch.tensor([0, 4, 5, 20, 33, 59])
    coefficients = torch.randn(len(offsets), 5)
    (model(input_ids=ids, offsets=offsets).pooler_output * coefficients).sum().backward()
    grad = weight.grad
    assert grad.is_sparse
    assert torch.equal(grad._indices()[0], torch.unique(ids))  # torch's backward: one row per token occurrence
    reference = weight.detach().clone().requires_grad_(True)
    out = torch.nn.functional.embedding_bag(ids, reference, offsets, mode="mean", sparse=True)
    (out * coefficients).sum().backward()
    torch.testing.assert_close(grad.to_dense(), reference.grad.to_dense(), atol=1e-6, rtol=1e-5)

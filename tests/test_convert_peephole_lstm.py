"""The peephole LSTM (modeling/peephole_lstm.py) against Lasagne's equations, torch.nn.LSTM, and in training."""

from __future__ import annotations

import numpy as np
import paranmt50m_original as orig
import pytest
import torch

from paranmt_hf import ParaNMTConfig, ParaNMTEncoder, ParaNMTModel, build_encoder
from paranmt_hf.model.convert.lasagne import copy_lstm, read_lstm
from paranmt_hf.modeling.peephole_lstm import PeepholeLSTM

CORPUS = ["a man is playing a guitar .", "a woman slices an onion .", "two dogs run in the park .",
          "the cat sleeps on the sofa ."] * 5


@pytest.mark.parametrize("bidirectional", [False, True])
def test_matches_lasagne_scan_with_masks(bidirectional):
    """Right-padded batch of mixed lengths, Lasagne parameters copied by the converter, compared in float64."""
    rng = np.random.default_rng(0)
    layers = [orig.lstm_arrays(rng, 5, 4, dtype=np.float64) for _ in range(2 if bidirectional else 1)]
    module = PeepholeLSTM(5, 4, bidirectional=bidirectional).double()
    for direction, layer in enumerate(layers):
        copy_lstm(module, direction, read_lstm(layer, 5, "test"))
    layers = [orig.named(layer) for layer in layers]
    lengths = np.array([3, 7, 1, 5, 5, 2, 7])
    x = rng.normal(size=(len(lengths), 7, 5))
    mask = (np.arange(7)[None] < lengths[:, None]).astype(float)
    got = module(torch.from_numpy(x), torch.from_numpy(lengths)).detach().numpy()
    want = [orig.lasagne_lstm(x, mask, layers[0], False)]
    if bidirectional:
        want.append(orig.lasagne_lstm(x, mask, layers[1], True))
    want = np.concatenate(want, axis=-1) * mask[:, :, None]
    np.testing.assert_allclose(got, want, atol=1e-12, rtol=0)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_without_peepholes_equals_torch_lstm(bidirectional):
    """Zero peephole weights and initial states: the same function as torch.nn.LSTM (one bias = b_ih + b_hh)."""
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(6, 4, batch_first=True, bidirectional=bidirectional)
    module = PeepholeLSTM(6, 4, bidirectional=bidirectional)
    suffixes = ["", "_reverse"] if bidirectional else [""]
    with torch.no_grad():
        module.weight_peephole.zero_()
        for d, suffix in enumerate(suffixes):
            module.weight_ih[d] = getattr(lstm, f"weight_ih_l0{suffix}")
            module.weight_hh[d] = getattr(lstm, f"weight_hh_l0{suffix}")
            module.bias[d] = getattr(lstm, f"bias_ih_l0{suffix}") + getattr(lstm, f"bias_hh_l0{suffix}")
    lengths = torch.tensor([4, 1, 6, 3])
    x = torch.randn(4, 6, 6)
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    want, _ = torch.nn.utils.rnn.pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=6)
    torch.testing.assert_close(module(x, lengths), want, atol=1e-6, rtol=0)


def test_empty_batch_and_all_empty_rows():
    module = PeepholeLSTM(3, 2, bidirectional=True)
    assert module(torch.zeros(0, 4, 3), torch.zeros(0, dtype=torch.long)).shape == (0, 4, 4)
    assert not module(torch.ones(2, 3, 3), torch.zeros(2, dtype=torch.long)).any()


@pytest.mark.parametrize("kind", ["lstm", "bilstm", "gran"])
def test_config_field_builds_trains_and_round_trips(kind, tmp_path):
    """lstm_peepholes=True: gradients reach every trained weight; the initial states stay fixed; save/load exact."""
    encoder = build_encoder(kind, CORPUS, embedding_dim=6, rnn_hidden_size=5, lstm_peepholes=True, seed=0)
    rnn = encoder.model.components[0].rnn
    assert isinstance(rnn, PeepholeLSTM) and encoder.config.lstm_peepholes is True
    model = encoder.model.train()
    features = encoder.features(["a man is playing .", "the cat sleeps", "dogs"])
    model(**features).pooler_output.pow(2).sum().backward()
    for name in ("weight_ih", "weight_hh", "bias", "weight_peephole"):
        grad = getattr(rnn, name).grad
        assert grad is not None and grad.abs().sum() > 0, name
    assert rnn.cell_init.grad is None and not rnn.cell_init.requires_grad
    model.eval()
    encoder.save_pretrained(tmp_path, sentence_transformers=False)
    reloaded = ParaNMTEncoder.from_pretrained(tmp_path)
    assert isinstance(reloaded.model.components[0].rnn, PeepholeLSTM)
    texts = ["A man plays.", "", "unseen words here"]
    np.testing.assert_allclose(reloaded.encode(texts), encoder.encode(texts), atol=1e-6)


def test_default_is_torch_lstm_and_merges():
    config = ParaNMTConfig(kind="bilstm", vocab_size=10, embedding_dim=4, rnn_hidden_size=3)
    assert config.lstm_peepholes is False
    assert isinstance(ParaNMTModel(config).components[0].rnn, torch.nn.LSTM)
    for merge, size in (("sum", 3), ("max", 3), ("concat", 6), ("mean", 3)):
        config = ParaNMTConfig(kind="bilstm", vocab_size=10, embedding_dim=4, rnn_hidden_size=3,
                               bilstm_merge=merge, lstm_peepholes=True)
        model = ParaNMTModel(config).eval()
        assert model(input_ids=torch.tensor([[2, 3, 4]])).pooler_output.shape == (1, size)
    with pytest.raises(ValueError, match="lstm_peepholes"):
        ParaNMTConfig(kind="lstm", lstm_peepholes="yes")

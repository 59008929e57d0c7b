"""The peephole LSTM of Lasagne's ``LSTMLayer(peepholes=True)`` (ParaNMT-50M's LSTM models), batched over sentences.

ParaNMT-50M (jwieting/para-nmt-50m) builds its ``lstmavg``/``lstmmax``/``bilstmavg``/``bilstmmax`` models from
``lasagne.layers.LSTMLayer(..., peepholes=True, learn_init=False, mask_input=...)``. One step, for input ``x_t`` and
previous states ``h``, ``c`` (``*`` elementwise), from ``cell_init`` and ``hid_init`` (zeros unless learned)::

    i   = sigmoid(x_t W_xi + h W_hi + b_i + c   * w_ci)     # peephole from the previous cell
    f   = sigmoid(x_t W_xf + h W_hf + b_f + c   * w_cf)     # peephole from the previous cell
    c'  = f * c + i * tanh(x_t W_xc + h W_hc + b_c)
    o   = sigmoid(x_t W_xo + h W_ho + b_o + c'  * w_co)     # peephole from the new cell
    h'  = o * tanh(c')

A masked step keeps the previous states, so each sentence is read from its first token (forward) or its last
(``backwards=True``, outputs in input order). Hub remote code: imports only torch.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class PeepholeLSTM(nn.Module):
    """A one-layer (bidirectional) LSTM with Lasagne's peephole connections and initial states.

    Args:
        input_size: size of the input vectors (token embeddings).
        hidden_size: LSTM size ``H`` (Lasagne's ``num_units``).
        bidirectional: also run a backward LSTM (Lasagne ``backwards=True``); outputs are ``[forward, backward]``.

    Parameters, per direction ``d`` (gate blocks input, forget, cell, output, as Lasagne and ``torch.nn.LSTM``):
    ``weight_ih`` ``[d, 4H, input_size]`` / ``weight_hh`` ``[d, 4H, H]`` (Lasagne's ``W_in_to_<gate>`` /
    ``W_hid_to_<gate>``, transposed), ``bias`` ``[d, 4H]``, ``weight_peephole`` ``[d, 3, H]`` (``W_cell_to_ingate``,
    ``..._forgetgate``, ``..._outgate``), ``cell_init`` / ``hid_init`` ``[d, H]`` (not trained: ``learn_init=False``).
    """

    def __init__(self, input_size: int, hidden_size: int, bidirectional: bool = False) -> None:
        super().__init__()
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        self.bidirectional = bool(bidirectional)
        dirs, h = (2 if bidirectional else 1), self.hidden_size
        self.weight_ih = nn.Parameter(torch.empty(dirs, 4 * h, self.input_size))
        self.weight_hh = nn.Parameter(torch.empty(dirs, 4 * h, h))
        self.bias = nn.Parameter(torch.empty(dirs, 4 * h))
        self.weight_peephole = nn.Parameter(torch.empty(dirs, 3, h))
        self.cell_init = nn.Parameter(torch.zeros(dirs, h), requires_grad=False)
        self.hid_init = nn.Parameter(torch.zeros(dirs, h), requires_grad=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``torch.nn.LSTM``'s initialisation (uniform in +-1/sqrt(H)) for weights and biases; zero initial states."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        with torch.no_grad():
            for weight in (self.weight_ih, self.weight_hh, self.bias, self.weight_peephole):
                weight.uniform_(-bound, bound)
            self.cell_init.zero_()
            self.hid_init.zero_()

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Run over ``inputs`` ``[B, L, input_size]`` whose first ``lengths[b]`` positions are the tokens of row b.

        Returns the hidden states ``[B, L, num_directions * H]`` (forward, then backward), in input order; positions
        past a row's length are zero.
        """
        batch, width, _ = inputs.shape
        h_size, dirs = self.hidden_size, 2 if self.bidirectional else 1
        lengths = lengths.to(device=inputs.device, dtype=torch.long)
        steps = int(lengths.max()) if batch else 0
        if steps == 0:
            return inputs.new_zeros(batch, width, dirs * h_size)
        order = torch.argsort(lengths, descending=True, stable=True)
        lengths = lengths[order]
        x = inputs[order, :steps]
        pos = torch.arange(steps, device=inputs.device)
        inside = pos < lengths[:, None]
        if self.bidirectional:
            # position of the t-th token read backwards (padding maps to itself and is never read)
            reverse = torch.where(inside, lengths[:, None] - 1 - pos, pos)
            x = torch.stack([x, x.gather(1, reverse[..., None].expand_as(x))])
        else:
            x = x.unsqueeze(0)
        running = inside.sum(dim=0).tolist()  # sentences still running at each step (a prefix: sorted by length)
        w_ih, w_hh = self.weight_ih.transpose(1, 2), self.weight_hh.transpose(1, 2)
        bias = self.bias.unsqueeze(1)
        w_ci, w_cf, w_co = (w.unsqueeze(1) for w in self.weight_peephole.unbind(1))
        h = self.hid_init.unsqueeze(1).expand(dirs, batch, h_size)
        c = self.cell_init.unsqueeze(1).expand(dirs, batch, h_size)
        states = x.new_zeros(dirs, batch, steps, h_size)
        for t, n in enumerate(running):
            h, c = h[:, :n], c[:, :n]
            gates = torch.baddbmm(torch.baddbmm(bias, x[:, :n, t], w_ih), h, w_hh)
            i, f, g, o = gates.chunk(4, dim=-1)
            i = torch.sigmoid(i + c * w_ci)
            f = torch.sigmoid(f + c * w_cf)
            c = f * c + i * torch.tanh(g)
            h = torch.sigmoid(o + c * w_co) * torch.tanh(c)
            states[:, :n, t] = h
        out = states[0]
        if self.bidirectional:
            backward = states[1].gather(1, reverse[..., None].expand(-1, -1, h_size))
            out = torch.cat([out, backward], dim=-1)
        unsorted = torch.empty_like(out)
        unsorted[order] = out
        if steps < width:
            unsorted = nn.functional.pad(unsorted, (0, 0, 0, width - steps))
        return unsorted


__all__ = ["PeepholeLSTM"]

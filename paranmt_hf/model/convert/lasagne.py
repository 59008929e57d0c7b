"""Lasagne ``LSTMLayer(peepholes=True)`` parameters (as ``get_all_param_values`` lists them) -> ``PeepholeLSTM``.

``lasagne.layers.get_all_param_values(final_layer)`` walks the layers in topological order (inputs first, the
incomings of a merge layer in order) and lists each layer's parameters in the order the layer created them. An
``LSTMLayer(num_units=H, peepholes=True)`` reading ``D``-dimensional inputs creates 17 (:data:`LASAGNE_LSTM_PARAMS`):
``W_in_to_<gate>`` ``(D, H)``, ``W_hid_to_<gate>`` ``(H, H)`` and ``b_<gate>`` ``(H,)`` for the gates ingate,
forgetgate, cell, outgate in turn; the peepholes ``W_cell_to_{ingate,forgetgate,outgate}`` ``(H,)``; ``cell_init``
and ``hid_init`` ``(1, H)`` (listed although ``learn_init=False`` leaves them untrained).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ...modeling.peephole_lstm import PeepholeLSTM
from .errors import ConversionError

GATES = ("ingate", "forgetgate", "cell", "outgate")
"""Lasagne's gate order, also the order of ``torch.nn.LSTM`` and of ``PeepholeLSTM``'s 4H blocks."""

LASAGNE_LSTM_PARAMS = (
    *(f"{kind}_{gate}" for gate in GATES for kind in ("W_in_to", "W_hid_to", "b")),
    "W_cell_to_ingate", "W_cell_to_forgetgate", "W_cell_to_outgate", "cell_init", "hid_init",
)
"""Parameter order of one Lasagne ``LSTMLayer(peepholes=True)`` in ``get_all_param_values``."""


def lstm_shapes(input_size: int, hidden_size: int) -> dict[str, tuple[int, ...]]:
    """The shape of each Lasagne LSTM parameter for ``input_size`` inputs and ``hidden_size`` units."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name in LASAGNE_LSTM_PARAMS:
        if name.startswith("W_in_to_"):
            shapes[name] = (input_size, hidden_size)
        elif name.startswith("W_hid_to_"):
            shapes[name] = (hidden_size, hidden_size)
        elif name in ("cell_init", "hid_init"):
            shapes[name] = (1, hidden_size)
        else:
            shapes[name] = (hidden_size,)
    return shapes


def read_lstm(arrays: Sequence[np.ndarray], input_size: int, what: str) -> dict[str, np.ndarray]:
    """Name the 17 arrays of one Lasagne LSTM layer, checking every shape; ``what`` names the layer in errors."""
    if len(arrays) != len(LASAGNE_LSTM_PARAMS):
        raise ConversionError(f"{what}: expected the {len(LASAGNE_LSTM_PARAMS)} arrays of a Lasagne "
                              f"LSTMLayer(peepholes=True), got {len(arrays)}")
    first = np.shape(arrays[0])
    if len(first) != 2:
        raise ConversionError(f"{what}: W_in_to_ingate must be 2-D (input size x units), got shape {first}")
    hidden = int(first[1])
    shapes = lstm_shapes(input_size, hidden)
    named = dict(zip(LASAGNE_LSTM_PARAMS, arrays, strict=True))
    for name, array in named.items():
        if tuple(np.shape(array)) != shapes[name]:
            raise ConversionError(
                f"{what}: {name} has shape {tuple(np.shape(array))}, expected {shapes[name]} (inputs of size "
                f"{input_size}, {hidden} units; parameters in Lasagne's get_all_param_values order: "
                f"{', '.join(LASAGNE_LSTM_PARAMS)})"
            )
    return named


@torch.no_grad()
def copy_lstm(rnn: PeepholeLSTM, direction: int, named: dict[str, np.ndarray]) -> None:
    """Copy one Lasagne LSTM layer (:func:`read_lstm`) into direction ``direction`` of ``rnn``."""

    def tensor(array: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(array), dtype=rnn.weight_ih.dtype)

    rnn.weight_ih[direction] = tensor(np.concatenate([named[f"W_in_to_{g}"] for g in GATES], axis=1).T)
    rnn.weight_hh[direction] = tensor(np.concatenate([named[f"W_hid_to_{g}"] for g in GATES], axis=1).T)
    rnn.bias[direction] = tensor(np.concatenate([named[f"b_{g}"] for g in GATES]))
    rnn.weight_peephole[direction] = tensor(
        np.stack([named["W_cell_to_ingate"], named["W_cell_to_forgetgate"], named["W_cell_to_outgate"]])
    )
    rnn.cell_init[direction] = tensor(named["cell_init"][0])
    rnn.hid_init[direction] = tensor(named["hid_init"][0])


__all__ = ["LASAGNE_LSTM_PARAMS", "GATES", "lstm_shapes", "read_lstm", "copy_lstm"]

"""The paraphrastic sentence encoders of Wieting & Gimpel as a transformers ``PreTrainedModel``.

ParaNMT-50M (ACL 2018), EMNLP 2017, Paraphrastic Representations at Scale (2021): word / trigram / sentencepiece
averaging, LSTM, BiLSTM, GRAN, and their combinations by addition or concatenation.

This file is Hub remote code: it imports only torch, transformers and its siblings.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn
from transformers import PreTrainedModel
from transformers.modeling_outputs import BaseModelOutputWithPooling

from .configuration_paranmt import ParaNMTConfig
from .kinds_paranmt import ENCODER_KIND_SPECS
from .peephole_lstm import PeepholeLSTM


def masked_pool(states: torch.Tensor, valid: torch.Tensor, mode: str) -> torch.Tensor:
    """Pool ``states`` [B, L, D] over the positions where ``valid`` [B, L] is True (every row has one)."""
    if mode == "max":
        return states.masked_fill(~valid.unsqueeze(-1), float("-inf")).max(dim=1).values
    weights = valid.to(states.dtype).unsqueeze(-1)
    return (states * weights).sum(dim=1) / weights.sum(dim=1)


class _BagMean(torch.autograd.Function):
    """``F.embedding_bag`` (mean) of a sparse table whose backward pass gives each used row its gradient at once.

    torch's own backward expands the bags' gradients to one row per token (the token count x D, where a mini-batch
    repeats frequent tokens hundreds of times) and leaves the sum to a sparse coalesce or a dense scatter. Here the
    backward is the forward transposed: each used row is a bag of the sentences it occurs in, weighted by one over
    their lengths, summed by ``F.embedding_bag`` itself into one row per used token (the same values as the sparse
    product (used rows x bags) @ (bags x D), without its zero-filled output). Same sums up to float rounding as
    torch's; for sparse tables in CPU training (``_bag_lookup``; dense tables keep torch's backward, which is faster
    for them).
    """

    @staticmethod
    def forward(ctx: Any, weight: torch.Tensor, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(ids, offsets)
        ctx.rows = weight.shape[0]
        return F.embedding_bag(ids, weight, offsets, mode="mean")

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        ids, offsets = ctx.saved_tensors
        lengths = torch.diff(offsets, append=offsets.new_tensor([ids.shape[0]]))
        bag = torch.repeat_interleave(torch.arange(offsets.shape[0], device=ids.device), lengths,
                                      output_size=ids.shape[0])
        order = torch.argsort(ids, stable=True)
        rows, counts = torch.unique_consecutive(ids[order], return_counts=True)
        bags = bag[order]  # per used row (in row order), the sentences it occurs in
        values = F.embedding_bag(bags, grad.contiguous(), torch.cumsum(counts, 0) - counts, mode="sum",
                                 per_sample_weights=(1.0 / lengths.to(grad.dtype))[bags])
        table = torch.sparse_coo_tensor(rows.unsqueeze(0), values, (ctx.rows, grad.shape[1]), is_coalesced=True,
                                        check_invariants=False)
        return table, None, None


def _merge_directions(forward: torch.Tensor, backward: torch.Tensor, merge: str) -> torch.Tensor:
    """A BiLSTM's sentence embedding from its pooled forward and backward states (``bilstm_merge``)."""
    if merge == "concat":
        return torch.cat([forward, backward], dim=-1)
    if merge == "sum":
        return forward + backward
    if merge == "max":
        return torch.maximum(forward, backward)
    return (forward + backward) / 2


class ParaNMTComponent(nn.Module):
    """One encoder of a ParaNMT model: an embedding table plus, for recurrent kinds, an LSTM (and GRAN gate)."""

    def __init__(self, spec: dict[str, Any], config: ParaNMTConfig) -> None:
        super().__init__()
        self.kind = spec["kind"]
        self.vocab_size = int(spec["vocab_size"])
        self.unk_token_id = int(spec["unk_token_id"])
        self.pad_token_id = int(config.pad_token_id)
        self.drop_unknown = bool(spec["drop_unknown_tokens"])
        self.pooling = config.pooling
        self.bilstm_merge = spec["bilstm_merge"]
        self.scramble_rate = float(config.scramble_rate)
        self.embedding = nn.Embedding(self.vocab_size, int(spec["embedding_dim"]), sparse=config.sparse_embeddings)
        self.embedding.unk_token_id = self.unk_token_id  # read by the weight initialisation (zero row)
        self.embedding_dropout = nn.Dropout(config.embedding_dropout)
        # Kept as plain ids, not a buffer: transformers 5 does not restore non-persistent buffers on from_pretrained.
        self.unknown_ids = sorted({self.unk_token_id, *(int(i) for i in spec["unknown_token_ids"])})
        self._unknown_cache: dict[torch.device, torch.Tensor] = {}
        kind = ENCODER_KIND_SPECS[self.kind]
        self.bidirectional, self.gated = kind.bidirectional, kind.gated
        if kind.averaging:
            self.rnn = None
        else:
            dim, hidden = int(spec["embedding_dim"]), int(spec["rnn_hidden_size"])
            if spec["lstm_peepholes"]:  # ParaNMT-50M's Lasagne LSTM (peephole_lstm.py)
                self.rnn = PeepholeLSTM(dim, hidden, bidirectional=kind.bidirectional)
            else:
                self.rnn = nn.LSTM(dim, hidden, batch_first=True, bidirectional=kind.bidirectional)
            if kind.gated:  # a_t = x_t * sigmoid(W_x x_t + W_h h_t + b)
                self.gate_x = nn.Linear(dim, dim)
                self.gate_h = nn.Linear(hidden, dim, bias=False)

    @property
    def is_averaging(self) -> bool:
        """Whether this component averages token embeddings (no recurrence)."""
        return self.rnn is None

    def is_unknown(self, ids: torch.Tensor) -> torch.Tensor:
        """Boolean mask of the ids treated as unknown (``unk_token_id`` and ``unknown_token_ids``)."""
        table = self._unknown_cache.get(ids.device)
        if table is None:
            table = torch.tensor(self.unknown_ids, dtype=ids.dtype, device=ids.device)
            self._unknown_cache[ids.device] = table
        return torch.isin(ids, table)

    def _check_ids(self, ids: torch.Tensor) -> None:
        if not ids.numel():
            return
        low, high = (int(v) for v in torch.aminmax(ids))
        if low < 0 or high >= self.vocab_size:
            raise ValueError(
                f"{self.kind} encoder got token ids in [{low}, {high}] outside its vocabulary "
                f"[0, {self.vocab_size}): was the input made by this model's tokenizer?"
            )

    def prepare(self, ids: torch.Tensor, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Apply the unknown-token rules: drop unknown tokens if asked, and give empty rows the unknown token."""
        if self.drop_unknown:
            valid = valid & ~self.is_unknown(ids)
        empty = ~valid.any(dim=1)
        if bool(empty.any()):
            if ids.shape[1] == 0:
                ids = ids.new_full((ids.shape[0], 1), self.pad_token_id)
                valid = valid.new_zeros((ids.shape[0], 1))
            first = torch.zeros_like(valid)
            first[:, 0] = empty
            ids = torch.where(first, torch.full_like(ids, self.unk_token_id), ids)
            valid = valid | first
        return ids, valid

    def forward(
        self, ids: torch.Tensor, valid: torch.Tensor, max_len: int | None = None
    ) -> tuple[torch.Tensor | None, torch.Tensor]:
        """(token states, sentence embedding) of padded local ids [B, L] with validity mask [B, L].

        Averaging reads the valid ids as one embedding bag per row (token states ``None``). ``max_len`` keeps the
        first ``max_len`` valid tokens of each row.
        """
        self._check_ids(ids)
        if self.is_averaging:
            lengths = valid.sum(dim=1)
            return None, self.forward_flat(ids[valid], torch.cumsum(lengths, 0) - lengths, max_len)
        ids = ids.masked_fill(~valid, self.pad_token_id)
        ids, valid = self.prepare(ids, valid)
        ids, valid = self._pack_front(ids, valid)
        if max_len is not None and ids.shape[1] > max_len:
            ids, valid = ids[:, :max_len], valid[:, :max_len]
        embeds = self.embedding_dropout(self.embedding(ids))
        lengths = valid.sum(dim=1)
        if isinstance(self.rnn, PeepholeLSTM):
            states = self.rnn(embeds, lengths)
        else:
            packed = nn.utils.rnn.pack_padded_sequence(embeds, lengths.cpu(), batch_first=True, enforce_sorted=False)
            output, _ = self.rnn(packed)
            states, _ = nn.utils.rnn.pad_packed_sequence(output, batch_first=True, total_length=ids.shape[1])
        if self.gated:
            states = embeds * torch.sigmoid(self.gate_x(embeds) + self.gate_h(states))
        if self.bidirectional:
            forward_states, backward_states = states.chunk(2, dim=-1)
            pooled_f = masked_pool(forward_states, valid, self.pooling)
            pooled_b = masked_pool(backward_states, valid, self.pooling)
            return states, _merge_directions(pooled_f, pooled_b, self.bilstm_merge)
        return states, masked_pool(states, valid, self.pooling)

    def _pack_front(self, ids: torch.Tensor, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Move valid tokens to the front of each row (order kept), scrambling rows at ``scramble_rate`` in training.

        Word scrambling (ParaNMT-50M): with probability ``scramble_rate`` a training sentence is read in a random
        word order, which makes recurrent encoders rely less on order.
        """
        positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids).to(torch.float32)
        keys = positions
        if self.training and self.scramble_rate > 0:
            scramble = torch.rand(ids.shape[0], 1, device=ids.device) < self.scramble_rate
            keys = torch.where(scramble, torch.rand_like(positions) * ids.shape[1], positions)
        keys = torch.where(valid, keys, positions + 2 * ids.shape[1])
        order = torch.argsort(keys, dim=1, stable=True)
        return ids.gather(1, order), valid.gather(1, order)

    def forward_flat(
        self, ids: torch.Tensor, offsets: torch.Tensor, max_len: int | None = None,
        lengths: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """EmbeddingBag path for averaging encoders: flat ids [N] and bag start offsets [B] (no padding).

        ``max_len`` keeps the first ``max_len`` ids of each bag. ``lengths`` [B]: the number of ids of each bag, when
        the caller has them (else they follow from ``offsets``).
        """
        self._check_ids(ids)
        num_bags = offsets.shape[0]
        if lengths is None:
            lengths = torch.diff(offsets, append=offsets.new_tensor([ids.shape[0]]))
        if max_len is not None and bool((lengths > max_len).any()):
            keep = torch.arange(ids.shape[0], device=ids.device) - torch.repeat_interleave(offsets, lengths) < max_len
            ids, lengths = ids[keep], lengths.clamp(max=max_len)
            offsets = torch.cumsum(lengths, 0) - lengths
        if self.drop_unknown or bool((lengths == 0).any()):
            bag = torch.repeat_interleave(torch.arange(num_bags, device=ids.device), lengths)
            keep = ~self.is_unknown(ids) if self.drop_unknown else torch.ones_like(ids, dtype=torch.bool)
            ids, bag = ids[keep], bag[keep]
            empty = torch.bincount(bag, minlength=num_bags) == 0
            ids = torch.cat([ids, ids.new_full((int(empty.sum()),), self.unk_token_id)])
            bag = torch.cat([bag, torch.nonzero(empty).flatten()])
            order = torch.argsort(bag, stable=True)
            ids = ids[order]
            counts = torch.bincount(bag, minlength=num_bags)
            offsets = torch.cumsum(counts, 0) - counts
        if self.training and self.embedding_dropout.p > 0:  # dropout per token occurrence, as in the padded path
            states = self.embedding_dropout(self.embedding(ids))
            bag = torch.repeat_interleave(
                torch.arange(num_bags, device=ids.device),
                torch.diff(offsets, append=offsets.new_tensor([ids.shape[0]])),
            )
            if self.pooling == "max":
                init = states.new_full((num_bags, states.shape[1]), float("-inf"))
                return init.scatter_reduce(0, bag[:, None].expand_as(states), states, "amax")
            sums = states.new_zeros((num_bags, states.shape[1])).index_add_(0, bag, states)
            return sums / torch.bincount(bag, minlength=num_bags).clamp(min=1).unsqueeze(1).to(states.dtype)
        return self._bag_lookup(ids, offsets)

    def _bag_lookup(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        """The bags' mean (or max) of the table; a sparse table on CPU with gradient: :class:`_BagMean`'s backward."""
        weight = self.embedding.weight
        if (self.embedding.sparse and self.pooling == "mean" and weight.requires_grad and torch.is_grad_enabled()
                and weight.device.type == "cpu" and ids.numel()):
            return _BagMean.apply(weight, ids, offsets)
        return F.embedding_bag(ids, weight, offsets, mode=self.pooling, sparse=self.embedding.sparse)


WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")


class WeightsMismatchError(ValueError):
    """A weights file whose tensors do not match the model's configuration (missing, unexpected or misshapen)."""


def _weights_file(name_or_path: Any, subfolder: str = "") -> str:
    """The weights file of a local model directory (for messages), else the name as given."""
    base = os.path.join(os.fspath(name_or_path), subfolder)
    found = [os.path.join(base, n) for n in WEIGHT_FILES if os.path.isfile(os.path.join(base, n))]
    return found[0] if found else os.fspath(name_or_path)


def check_loaded_weights(source: str, loading_info: dict[str, Any]) -> None:
    """Raise :class:`WeightsMismatchError` naming ``source`` and the keys unless a load was exact (no random rows)."""
    parts = []
    for what, field in (("missing", "missing_keys"), ("unexpected", "unexpected_keys"),
                        ("wrong shape", "mismatched_keys")):
        keys = sorted(str(k[0] if isinstance(k, tuple) else k) for k in loading_info.get(field) or ())
        if keys:
            parts.append(f"{what} {', '.join(keys[:6])}" + (f" and {len(keys) - 6} more" if len(keys) > 6 else ""))
    if not parts:
        return
    raise WeightsMismatchError(
        f"{source}: the weights do not match the model's config.json ({'; '.join(parts)}): a weights file of another "
        "model, or tensors renamed by another version. Nothing was loaded (the missing tensors would have been "
        "random)."
    )


class ParaNMTPreTrainedModel(PreTrainedModel):
    """Base class: config class, weight initialisation and loading hooks."""

    config_class = ParaNMTConfig
    base_model_prefix = "paranmt"
    main_input_name = "input_ids"
    supports_gradient_checkpointing = False
    legacy_key_mapping = {r"^encoders\.": "components."}
    """Weight names of earlier releases (the components were called ``encoders``), renamed on load."""

    @classmethod
    def from_pretrained(cls, *args: Any, **kwargs: Any) -> ParaNMTPreTrainedModel:
        """``PreTrainedModel.from_pretrained`` (earlier weight names too), exact: the file holds the model's tensors.

        Raises:
            WeightsMismatchError: missing, unexpected or misshapen tensors (the file and the keys are named).
        """
        kwargs.setdefault("key_mapping", cls.legacy_key_mapping)
        wants_info = kwargs.pop("output_loading_info", False)
        model, info = super().from_pretrained(*args, output_loading_info=True, **kwargs)
        name = args[0] if args else kwargs.get("pretrained_model_name_or_path", "")
        check_loaded_weights(_weights_file(name, kwargs.get("subfolder") or ""), info)
        return (model, info) if wants_info else model

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=self.config.initializer_range)
            with torch.no_grad():
                module.weight[self.config.pad_token_id].zero_()
                # an unknown token that the training data never shows then adds nothing (with mean pooling it only
                # rescales the embedding: the same cosines as leaving it out)
                unk = getattr(module, "unk_token_id", None)
                if unk is not None:
                    module.weight[unk].zero_()
        elif isinstance(module, (nn.LSTM, PeepholeLSTM, nn.Linear)):
            module.reset_parameters()
        else:
            super()._init_weights(module)


class ParaNMTModel(ParaNMTPreTrainedModel):
    """Paraphrastic sentence encoder (word / trigram / sp averaging, LSTM, BiLSTM, GRAN, or a combination).

    ``pooler_output`` is the sentence embedding of padded ``input_ids`` [B, L] + ``attention_mask``, or of flat
    ``input_ids`` [N] + bag ``offsets`` [B] (averaging; ``StaticEmbedding``'s layout). ``last_hidden_state`` holds a
    single recurrent encoder's token states (:attr:`has_token_states`), else the sentence embedding at every position.

    Example:
    ```python
    >>> import torch
    >>> from paranmt_hf import ParaNMTConfig, ParaNMTModel
    >>> model = ParaNMTModel(ParaNMTConfig(kind="word", vocab_size=10, embedding_dim=4)).eval()
    >>> model(input_ids=torch.tensor([[2, 3, 4]])).pooler_output.shape
    torch.Size([1, 4])
    ```
    """

    def __init__(self, config: ParaNMTConfig) -> None:
        super().__init__(config)
        self.components = nn.ModuleList(ParaNMTComponent(spec, config) for spec in config.resolved_components())
        self._averaging = all(encoder.is_averaging for encoder in self.components)
        self._offsets = config.component_offsets()  # read once: the config's attribute access is slow per batch
        self.post_init()

    def get_input_embeddings(self) -> nn.Module:
        """The embedding table of the first component."""
        return self.components[0].embedding

    def set_input_embeddings(self, value: nn.Module) -> None:
        """Replace the embedding table of the first component."""
        self.components[0].embedding = value

    @property
    def accepts_flat_input(self) -> bool:
        """Whether the model takes the flat ``input_ids`` + ``offsets`` layout: every component averages."""
        return self._averaging

    @property
    def has_token_states(self) -> bool:
        """Whether ``last_hidden_state`` holds token states (a single recurrent encoder, padded input)."""
        return len(self.components) == 1 and not self.components[0].is_averaging

    @property
    def embedding_dim(self) -> int:
        """Size of the sentence embedding (``pooler_output``)."""
        return int(self.config.hidden_size)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        offsets: torch.Tensor | None = None,
        component_lengths: torch.Tensor | None = None,
        return_dict: bool | None = None,
        **kwargs: Any,
    ) -> BaseModelOutputWithPooling | tuple[torch.Tensor, ...]:
        """Embed a batch (the class docstring has the two input layouts); extra keyword inputs are ignored.

        ``component_lengths`` [B, K] (optional, flat layout of a combination, ids in component order as the featuriser
        emits them): each sentence's number of ids per component, so the model slices instead of testing ranges.
        """
        if offsets is not None or input_ids.dim() == 1:
            if offsets is None:
                raise ValueError("flat input_ids [N] need `offsets` [B] (start of each sentence)")
            pooled, last, positions = self._forward_flat(input_ids, offsets, component_lengths), None, 1
        else:
            (pooled, last), positions = self._forward_padded(input_ids, attention_mask), input_ids.shape[1]
        if last is None or not self.has_token_states:  # no token states: the sentence embedding at every position
            last = pooled.unsqueeze(1).expand(-1, positions, -1)
        if return_dict is False:
            return (last, pooled)
        return BaseModelOutputWithPooling(last_hidden_state=last, pooler_output=pooled)

    def _forward_flat(
        self, input_ids: torch.Tensor, offsets: torch.Tensor, component_lengths: torch.Tensor | None = None
    ) -> torch.Tensor:
        if not self.accepts_flat_input:
            raise ValueError("the flat (input_ids + offsets) layout is only for averaging encoders")
        max_len = self.config.max_seq_length
        if len(self.components) == 1:
            return self.components[0].forward_flat(input_ids, offsets, max_len)
        if component_lengths is not None:
            return self._combine(self._sliced_components(input_ids, offsets, component_lengths, max_len))
        # a combination: each component averages its own id range, as in the padded path
        num_bags = offsets.shape[0]
        lengths = torch.diff(offsets, append=offsets.new_tensor([input_ids.shape[0]]))
        bag = torch.repeat_interleave(torch.arange(num_bags, device=input_ids.device), lengths)
        pooled_parts = []
        for encoder, offset, mine in self._component_masks(input_ids, torch.ones_like(input_ids, dtype=torch.bool)):
            counts = torch.bincount(bag[mine], minlength=num_bags)
            pooled_parts.append(
                encoder.forward_flat(input_ids[mine] - offset, torch.cumsum(counts, 0) - counts, max_len)
            )
        return self._combine(pooled_parts)

    def _sliced_components(
        self, input_ids: torch.Tensor, offsets: torch.Tensor, component_lengths: torch.Tensor, max_len: int | None
    ) -> list[torch.Tensor]:
        """Each component's pooled embedding, its ids sliced by ``component_lengths`` (see :meth:`forward`)."""
        lengths = component_lengths.to(offsets.dtype)
        if lengths.shape != (offsets.shape[0], len(self.components)) or int(lengths.sum()) != input_ids.shape[0]:
            raise ValueError(f"component_lengths {tuple(lengths.shape)} do not match {offsets.shape[0]} sentences of "
                             f"{len(self.components)} components and {input_ids.shape[0]} ids")
        block_starts = offsets.unsqueeze(1) + torch.cumsum(lengths, 1) - lengths  # [B, K]
        parts = []
        for k, (encoder, offset) in enumerate(zip(self.components, self._offsets, strict=True)):
            count = lengths[:, k]
            total = int(count.sum())
            starts = torch.cumsum(count, 0) - count
            index = torch.repeat_interleave(block_starts[:, k] - starts, count, output_size=total)
            index += torch.arange(total, device=input_ids.device)
            parts.append(encoder.forward_flat(input_ids[index] - offset, starts, max_len, count))
        return parts

    def _component_masks(
        self, input_ids: torch.Tensor, valid: torch.Tensor
    ) -> list[tuple[ParaNMTComponent, int, torch.Tensor]]:
        """Each component with its id offset and the ``valid`` positions in its range (``ValueError``: in none)."""
        parts = []
        covered = torch.zeros_like(valid)
        for encoder, offset in zip(self.components, self._offsets, strict=True):
            mine = valid & (input_ids >= offset) & (input_ids < offset + encoder.vocab_size)
            covered |= mine
            parts.append((encoder, offset, mine))
        if bool((valid & ~covered).any()):
            total = sum(e.vocab_size for e in self.components)
            raise ValueError(f"token ids outside every component's range (total vocabulary {total})")
        return parts

    def _combine(self, pooled_parts: list[torch.Tensor]) -> torch.Tensor:
        """The sentence embedding of a combination: sum (``add``) or concatenation of the components' embeddings."""
        if self.config.combination == "add":
            return torch.stack(pooled_parts).sum(dim=0)
        return torch.cat(pooled_parts, dim=-1)

    def _forward_padded(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be [batch, length], got shape {tuple(input_ids.shape)}")
        valid = torch.ones_like(input_ids, dtype=torch.bool) if attention_mask is None else attention_mask.bool()
        max_len = self.config.max_seq_length
        if len(self.components) == 1:
            states, pooled = self.components[0](input_ids, valid, max_len)
            return pooled, states
        pooled_parts = [
            encoder(torch.where(mine, input_ids - offset, torch.zeros_like(input_ids)), mine, max_len)[1]
            for encoder, offset, mine in self._component_masks(input_ids, valid)
        ]
        return self._combine(pooled_parts), None


__all__ = ["ParaNMTModel", "ParaNMTPreTrainedModel"]

# save_pretrained writes the auto_map entry and copies this file and configuration_paranmt.py (Hub remote code).
ParaNMTModel.register_for_auto_class("AutoModel")

"""Configuration of the ParaNMT paraphrastic sentence encoders.

This file is Hub remote code: it imports only ``transformers`` (and the standard library) so that
``AutoConfig.from_pretrained(dir, trust_remote_code=True)`` works where ``paranmt_hf`` is not installed.
"""

from __future__ import annotations

from typing import Any

from transformers import PretrainedConfig

from .kinds_paranmt import (
    COMPONENT_DEFAULTS,
    ENCODER_KIND_SPECS,
    ENCODER_KINDS,
    renamed_fields,
    resolve_components,
)

POOLING_MODES = ("mean", "max")
COMBINATIONS = ("concat", "add")
BILSTM_MERGES = ("mean", "concat", "sum", "max")

COMBINATION_SUMMARY_FIELDS = ("kind", "vocab_size", "embedding_dim")
"""Top-level fields a combination's config does not save: its components hold their own."""


class ParaNMTConfig(PretrainedConfig):
    r"""Configuration of a [`ParaNMTModel`]: one paraphrastic encoder, or several combined (*components*).

    Each component is an encoder with an embedding table over its own vocabulary; the tokenizer shifts component
    ``k``'s ids by the vocabulary sizes before it, so one ``input_ids`` row carries every component. Top-level
    component fields (``COMPONENT_DEFAULTS``) are every component's defaults; with ``components``, the top-level
    ``kind``, ``vocab_size``, ``embedding_dim`` describe the whole (``"sp+word"``, the summed vocabulary, ``None``)
    and are not saved. Fields are described on :meth:`__init__`'s parameters; ``hidden_size`` (derived): output size.

    Example:
    ```python
    >>> from paranmt_hf import ParaNMTConfig
    >>> ParaNMTConfig(kind="sp", vocab_size=1000, embedding_dim=64).hidden_size
    64
    ```
    """

    model_type = "paranmt"

    def __init__(
        self,
        # encoder kind (kinds_paranmt.py): word / trigram / sp / subword averaging, lstm, bilstm or gran
        kind: str = COMPONENT_DEFAULTS["kind"],
        vocab_size: int = COMPONENT_DEFAULTS["vocab_size"],  # rows of the embedding table
        embedding_dim: int = COMPONENT_DEFAULTS["embedding_dim"],  # token embedding size (300; PRAS: 1024)
        rnn_hidden_size: int | None = None,  # LSTM size of recurrent kinds (None: embedding_dim)
        # BiLSTM: "mean" (the papers' BiLSTM-Avg), "concat", or "sum" / "max" (ParaNMT-50M's -axis 1 Avg / Max)
        bilstm_merge: str = COMPONENT_DEFAULTS["bilstm_merge"],
        lstm_peepholes: bool = COMPONENT_DEFAULTS["lstm_peepholes"],  # Lasagne's LSTM (peephole_lstm.py)
        # several encoders trained jointly: dicts of `kind` and any other COMPONENT_DEFAULTS field
        components: list[dict[str, Any]] | None = None,
        combination: str = "concat",  # how component embeddings combine: "concat" or "add" (equal sizes)
        pooling: str = "mean",  # over tokens (averaging) or hidden states (recurrent): "mean" or "max"
        scramble_rate: float = 0.0,  # training: chance a recurrent encoder reads a sentence shuffled (ParaNMT-50M)
        embedding_dropout: float = 0.0,  # training: dropout on token embeddings
        # leave unknown tokens out of the average (PRAS's "zero_unk"; an emptied sentence is the unknown token).
        # False: use the unknown row, as ParaNMT-50M; new models start it at zero (same cosines, StaticEmbedding)
        drop_unknown_tokens: bool = COMPONENT_DEFAULTS["drop_unknown_tokens"],
        unknown_token_ids: list[int] | None = None,  # more unknown ids: pieces a converted model had no row for
        pad_token_id: int = 0,  # of every component's local vocabulary
        unk_token_id: int = COMPONENT_DEFAULTS["unk_token_id"],  # of every component's local vocabulary
        # training: sparse gradients, for torch.optim.SparseAdam / paranmt_hf's LazyAdam (rows a batch used)
        sparse_embeddings: bool = False,
        max_seq_length: int | None = None,  # tokens read per sentence and component (None, the papers: all)
        initializer_range: float = 1.0,  # std of the embeddings' normal init (nn.Embedding's default)
        **kwargs: Any,
    ) -> None:
        kwargs.pop("hidden_size", None)  # derived, never taken from the caller
        if "encoder" in kwargs:  # the field's earlier name: config.json files are read by from_dict
            raise TypeError("ParaNMTConfig has no field 'encoder': the encoder kind is `kind`")
        self.kind = kind
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.rnn_hidden_size = rnn_hidden_size
        self.bilstm_merge = bilstm_merge
        self.lstm_peepholes = lstm_peepholes
        self.components = None
        if components is not None:
            given = {"kind": kind, "vocab_size": vocab_size, "embedding_dim": embedding_dim}
            self.components = [given | dict(c) for c in components]
            kind = "+".join(str(c["kind"]) for c in self.components)
            vocab_size = sum(int(c["vocab_size"]) for c in self.components)
            embedding_dim = None
            self.kind, self.vocab_size, self.embedding_dim = kind, vocab_size, embedding_dim
        self.combination = combination
        self.pooling = pooling
        self.scramble_rate = scramble_rate
        self.embedding_dropout = embedding_dropout
        self.drop_unknown_tokens = drop_unknown_tokens
        self.unknown_token_ids = list(unknown_token_ids) if unknown_token_ids is not None else None
        self.unk_token_id = unk_token_id
        self.sparse_embeddings = sparse_embeddings
        self.max_seq_length = max_seq_length
        self.initializer_range = initializer_range
        super().__init__(pad_token_id=pad_token_id, **kwargs)
        self._validate_paranmt()
        sizes = self.component_output_sizes()
        self.hidden_size = sum(sizes) if combination == "concat" else sizes[0]

    @classmethod
    def from_dict(cls, config_dict: dict[str, Any], **kwargs: Any) -> ParaNMTConfig:
        """The config of ``config.json``'s fields, read with today's names (:func:`renamed_fields`)."""
        return super().from_dict(renamed_fields(config_dict), **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """The config as a dict (``config.json``); a combination's without the summary fields its components hold."""
        out = super().to_dict()
        if self.components is not None:
            for name in COMBINATION_SUMMARY_FIELDS:
                out.pop(name, None)
        return out

    def resolved_components(self) -> list[dict[str, Any]]:
        """Every component with all of its fields filled in (top-level values as defaults; ``resolve_components``)."""
        top = {name: getattr(self, name) for name in COMPONENT_DEFAULTS}
        return resolve_components({**top, "components": self.components})

    def component_output_sizes(self) -> list[int]:
        """Size of the sentence embedding that each component produces."""
        return [ENCODER_KIND_SPECS[c["kind"]].output_size(c) for c in self.resolved_components()]

    def component_offsets(self) -> list[int]:
        """First global token id of each component (components are laid out one after another)."""
        offsets, start = [], 0
        for c in self.resolved_components():
            offsets.append(start)
            start += c["vocab_size"]
        return offsets

    def _validate_paranmt(self) -> None:
        for name, value, allowed in (
            ("combination", self.combination, COMBINATIONS),
            ("pooling", self.pooling, POOLING_MODES),
        ):
            if value not in allowed:
                raise ValueError(f"{name}={value!r} is not one of {allowed}")
        if not 0.0 <= self.scramble_rate <= 1.0:
            raise ValueError(f"scramble_rate must be in [0, 1], got {self.scramble_rate}")
        if self.max_seq_length is not None and (isinstance(self.max_seq_length, bool) or int(self.max_seq_length) < 1):
            raise ValueError(f"max_seq_length must be a positive number of tokens or None, got {self.max_seq_length}")
        if not 0.0 <= self.embedding_dropout < 1.0:
            raise ValueError(f"embedding_dropout must be in [0, 1), got {self.embedding_dropout}")
        components = self.resolved_components()
        if not components:
            raise ValueError("components must hold at least one encoder")
        for c in components:
            self._validate_component(c)
        sizes = self.component_output_sizes()
        if self.combination == "add" and len(set(sizes)) > 1:
            raise ValueError(f"combination='add' needs components of equal output size, got {sizes}")

    def _validate_component(self, c: dict[str, Any]) -> None:
        if c["kind"] not in ENCODER_KIND_SPECS:
            raise ValueError(f"kind={c['kind']!r} is not one of {ENCODER_KINDS}")
        if c["bilstm_merge"] not in BILSTM_MERGES:
            raise ValueError(f"bilstm_merge={c['bilstm_merge']!r} is not one of {BILSTM_MERGES}")
        if not isinstance(c["lstm_peepholes"], bool):
            raise ValueError(f"lstm_peepholes must be a bool, got {c['lstm_peepholes']!r}")
        for field in ("vocab_size", "embedding_dim", "rnn_hidden_size"):
            if int(c[field]) < 1:
                raise ValueError(f"{field} must be positive, got {c[field]}")
        ids = [self.pad_token_id, c["unk_token_id"], *c["unknown_token_ids"]]
        if any(not 0 <= int(i) < c["vocab_size"] for i in ids):
            raise ValueError(f"token ids {ids} must lie in [0, vocab_size={c['vocab_size']})")


__all__ = ["ParaNMTConfig"]

# save_pretrained writes the auto_map entry and copies this file (Hub remote code).
ParaNMTConfig.register_for_auto_class()

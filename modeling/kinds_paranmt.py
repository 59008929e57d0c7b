"""The encoder kinds of the papers, one spec each: the one place that says what a kind is.

Read by the config, the model, the library's builder, the CLI, the model card and training. This file is Hub
remote code: it imports the standard library only (so the CLI can read it without transformers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EncoderKind:
    """One encoder kind of the papers.

    ``name``; ``description`` (model cards, ``--help``); ``tokens``: what an averaging kind reads (the builders of
    ``paranmt_hf.model.tokenization``; ``None``: recurrent, reading ``token_type``); recurrent kinds: ``bidirectional``
    (merged by ``bilstm_merge``), ``gated`` (GRAN: ``a_t = x_t * sigmoid(W_x x_t + W_h h_t + b)``).
    """

    name: str
    description: str
    tokens: str | None = None
    bidirectional: bool = False
    gated: bool = False

    @property
    def averaging(self) -> bool:
        """Whether the kind averages token embeddings (no recurrence: the flat EmbeddingBag layout)."""
        return self.tokens is not None

    def output_size(self, component: dict[str, Any]) -> int:
        """Size of the sentence embedding of a component of this kind (its resolved fields)."""
        if self.averaging or self.gated:  # GRAN's gated outputs have the size of the token embeddings
            return int(component["embedding_dim"])
        hidden = int(component["rnn_hidden_size"])
        return hidden * 2 if self.bidirectional and component["bilstm_merge"] == "concat" else hidden


ENCODER_KIND_SPECS: dict[str, EncoderKind] = {spec.name: spec for spec in (  # the papers' encoders
    EncoderKind("word", "word averaging", tokens="word"),
    EncoderKind("trigram", "character-trigram averaging", tokens="trigram"),
    EncoderKind("sp", "SentencePiece (unigram) averaging", tokens="sp"),
    EncoderKind("subword", "subword (WordPiece / BPE / unigram pieces of a tokenizers tokenizer) averaging",
                tokens="subword"),
    EncoderKind("lstm", "LSTM (pooled hidden states)"),
    EncoderKind("bilstm", "BiLSTM (pooled hidden states of both directions)", bidirectional=True),
    EncoderKind("gran", "gated recurrent averaging network (GRAN)", gated=True),
)}

ENCODER_KINDS = tuple(ENCODER_KIND_SPECS)
AVERAGING_KINDS = tuple(name for name, spec in ENCODER_KIND_SPECS.items() if spec.averaging)
RECURRENT_TOKENS = ("word", "sp")
"""Tokens a recurrent encoder can read (``token_type``)."""

COMPONENT_DEFAULTS: dict[str, Any] = {
    "kind": "sp", "vocab_size": 50002, "embedding_dim": 300, "rnn_hidden_size": None, "bilstm_merge": "mean",
    "lstm_peepholes": False, "unk_token_id": 1, "unknown_token_ids": None, "drop_unknown_tokens": False,
}
"""The fields a component may set, with their defaults; a field a component leaves out takes the config's value."""
COMPONENT_FIELDS = tuple(COMPONENT_DEFAULTS)


def renamed_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config.json``'s fields (a whole config or one component) with today's names: the loader's one rename rule.

    Earlier folders name a component's kind ``encoder``; loaders (``ParaNMTConfig.from_dict``, ``StaticEncoder``)
    read it as ``kind``, and saving writes ``kind``.
    """
    out = dict(config)
    if "encoder" in out and "kind" not in out:
        out["kind"] = out.pop("encoder")
    if out.get("components") is not None:
        out["components"] = [renamed_fields(c) for c in out["components"]]
    return out


def resolve_components(top: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every component of a config with all of its fields filled in (top-level values, then defaults).

    ``top``: ``config.json`` as a dict, or a ``ParaNMTConfig``'s attributes (``components`` ``None``: one component
    of the top-level fields). Raises ``ValueError`` for a component field that is not in :data:`COMPONENT_FIELDS`.
    """
    specs = top.get("components")
    if specs is None:
        specs = [{"kind": top.get("kind", COMPONENT_DEFAULTS["kind"])}]
    resolved = []
    for spec in specs:
        unknown = set(spec) - set(COMPONENT_FIELDS)
        if unknown:
            raise ValueError(f"Unknown component field(s) {sorted(unknown)}; allowed: {COMPONENT_FIELDS}")
        full = {name: spec.get(name, top.get(name, default)) for name, default in COMPONENT_DEFAULTS.items()}
        if full["rnn_hidden_size"] is None:
            full["rnn_hidden_size"] = full["embedding_dim"]
        full["unknown_token_ids"] = list(full["unknown_token_ids"] or [])
        resolved.append(full)
    return resolved


def parse_kinds(kind: str | list[str] | tuple[str, ...]) -> list[str]:
    """``"trigram+word"`` or ``["trigram", "word"]`` -> ``["trigram", "word"]`` (validated)."""
    kinds = kind.split("+") if isinstance(kind, str) else list(kind)
    for k in kinds:
        if k not in ENCODER_KIND_SPECS:
            raise ValueError(f"unknown encoder kind {k!r}; choose from {ENCODER_KINDS} (combine with '+')")
    return kinds


__all__ = ["EncoderKind", "ENCODER_KIND_SPECS", "ENCODER_KINDS", "AVERAGING_KINDS", "RECURRENT_TOKENS",
           "COMPONENT_DEFAULTS", "COMPONENT_FIELDS", "parse_kinds", "renamed_fields", "resolve_components"]

"""The encoder kinds of the papers, one spec each: the one place that says what a kind is.

Read by the config (validation, output sizes), the model (which module a component builds), the library's builder
(which tokenizer a kind reads), the CLI (``--kind`` help), the model card and training. Adding an encoder kind is an
entry here, its module in ``modeling_paranmt.py`` where it needs a new one, and a tokenizer builder in
``paranmt_hf/model/tokenization/`` where it reads a new kind of token.

This file is Hub remote code: it imports the standard library only (so the CLI can read it without transformers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EncoderKind:
    """One encoder kind of the papers.

    Attributes:
        name: the kind's name (``ParaNMTConfig.kind``, ``components[k]["kind"]``).
        description: what it is, in a few words (model cards, ``--help``).
        tokens: averaging kinds: the kind of tokens their tokenizer emits (``"word"``, ``"trigram"``, ``"sp"``,
            ``"subword"``: the builders of ``paranmt_hf.model.tokenization``). ``None``: a recurrent encoder, which
            reads the tokens of the config's ``token_type`` (``"word"`` or ``"sp"``).
        bidirectional: recurrent: an LSTM in both directions (pooled states merged by ``bilstm_merge``).
        gated: recurrent: GRAN's gate on the token embeddings, ``a_t = x_t * sigmoid(W_x x_t + W_h h_t + b)``.
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


ENCODER_KIND_SPECS: dict[str, EncoderKind] = {spec.name: spec for spec in (
    EncoderKind("word", "word averaging", tokens="word"),
    EncoderKind("trigram", "character-trigram averaging", tokens="trigram"),
    EncoderKind("sp", "SentencePiece (unigram) averaging", tokens="sp"),
    EncoderKind("subword", "subword (WordPiece / BPE / unigram pieces of a tokenizers tokenizer) averaging",
                tokens="subword"),
    EncoderKind("lstm", "LSTM (pooled hidden states)"),
    EncoderKind("bilstm", "BiLSTM (pooled hidden states of both directions)", bidirectional=True),
    EncoderKind("gran", "gated recurrent averaging network (GRAN)", gated=True),
)}
"""Encoders of the papers. ``word``/``trigram``/``sp`` average token embeddings; ``lstm``/``bilstm``/``gran`` are
recurrent encoders whose hidden states are pooled. ``subword`` averages the pieces of any ``tokenizers`` tokenizer
(WordPiece, BPE, Unigram), e.g. a transformer teacher's, whose table can be distilled from that teacher."""

ENCODER_KINDS = tuple(ENCODER_KIND_SPECS)
AVERAGING_KINDS = tuple(name for name, spec in ENCODER_KIND_SPECS.items() if spec.averaging)
RECURRENT_KINDS = tuple(name for name, spec in ENCODER_KIND_SPECS.items() if not spec.averaging)
RECURRENT_TOKENS = ("word", "sp")
"""Tokens a recurrent encoder can read (``token_type``)."""

COMPONENT_DEFAULTS: dict[str, Any] = {
    "kind": "sp",
    "vocab_size": 50002,
    "embedding_dim": 300,
    "rnn_hidden_size": None,
    "bilstm_merge": "mean",
    "lstm_peepholes": False,
    "unk_token_id": 1,
    "unknown_token_ids": None,
    "drop_unknown_tokens": False,
}
"""The fields a component of a model may set, with the config's top-level defaults (``ParaNMTConfig``'s signature).
A component that does not set a field takes the top-level value of the config."""
COMPONENT_FIELDS = tuple(COMPONENT_DEFAULTS)


def renamed_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config.json``'s fields (a whole config or one component) with today's names: the loader's one rename rule.

    Folders saved before commit 161fee2 name a component's kind ``encoder``; it is read as ``kind`` (at the top level
    and in every component), silently: the folder loads with the embeddings it gave, and saving it again writes
    ``kind``. Only loaders apply it (``ParaNMTConfig.from_dict``, ``StaticEncoder``): ``ParaNMTConfig(encoder=...)``
    is refused.
    """
    out = dict(config)
    if "encoder" in out and "kind" not in out:
        out["kind"] = out.pop("encoder")
    if out.get("components") is not None:
        out["components"] = [renamed_fields(c) for c in out["components"]]
    return out


def resolve_components(top: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every component of a config with all of its fields filled in (top-level values, then defaults).

    ``top`` is a config's fields (``config.json`` as a dict, or a ``ParaNMTConfig``'s attributes): its
    ``components`` list, or ``None`` for one component made of the top-level fields. Stdlib only, so that the
    torch-free inference path (``paranmt_hf.model.static``) reads configs exactly as ``ParaNMTConfig`` does.

    Raises:
        ValueError: a component sets a field that is not in :data:`COMPONENT_FIELDS`.
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


__all__ = ["EncoderKind", "ENCODER_KIND_SPECS", "ENCODER_KINDS", "AVERAGING_KINDS", "RECURRENT_KINDS",
           "RECURRENT_TOKENS", "COMPONENT_DEFAULTS", "COMPONENT_FIELDS", "parse_kinds", "renamed_fields",
           "resolve_components"]

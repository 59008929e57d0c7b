"""Convert a "Paraphrastic Representations at Scale" (PRAS) checkpoint (``.pt`` + sentencepiece ``.model``).

The original inference (PRAS ``embed_sentences.py`` ``batcher`` and ``utils.Example``): optionally Moses-tokenise,
lower-case, ``sp.EncodeAsPieces``, join the pieces with spaces, ``strip().lower().split()``, look every piece up in
the checkpoint's own ``vocab`` (a dict piece -> row built from the training data, so it also holds the text of
unknown-character runs and is larger than the sentencepiece model, PRAS issue #6), drop pieces missing from it when
``args.zero_unk`` (else use ``UUUNKKK``), use ``UUUNKKK`` when nothing is left, and mean- (or max-) pool the
embeddings (``Averaging``) or the states of a bidirectional ``nn.LSTM`` (``LSTM``).

The converted model is laid out in the order of the converted tokenizer: id 0 ``[PAD]`` (zero row), id 1 ``[UNK]``
(``UUUNKKK``'s row; also every unknown run missing from ``vocab``), then the sentencepiece pieces, then the
unknown-run strings of ``vocab``. Pieces whose text is not in ``vocab`` become ``unknown_token_ids``. Rows of
``vocab`` that no token can produce are left out (counted in the report).
"""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ...utils.integrity import DamagedFileError
from ...utils.safe_pickle import load_torch_checkpoint
from ..tokenization.fast import to_transformers
from .errors import ConversionError
from .sentencepiece import (
    build_sentencepiece_tokenizer,
    is_unknown_run,
    pieces_with_unknown_chars,
    read_sentencepiece_model,
    surface,
)

if TYPE_CHECKING:
    from ..encoder import ParaNMTEncoder

logger = logging.getLogger(__name__)

UNK_STRING = "UUUNKKK"
"""The unknown token of the original vocabularies (PRAS ``utils.unk_string``, ParaNMT-50M ``'UUUNKKK'``)."""

PRAS_SAFE_GLOBALS = (argparse.Namespace,)
"""The only non-tensor class a PRAS checkpoint holds: its ``args`` (``argparse.Namespace``)."""


@dataclass
class ConversionReport:
    """What a conversion kept, mapped and left out (saved as ``conversion_report.json``)."""

    source: str
    kind: str
    vocab_size: int
    embedding_dim: int
    checkpoint_rows: int
    pieces_without_row: int = 0
    unknown_runs_mapped: int = 0
    unreachable_rows: int = 0
    unreachable_examples: list[str] = field(default_factory=list)
    inexact_pieces: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return asdict(self)


def load_pras_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a PRAS ``.pt`` checkpoint safely (``weights_only=True``, only ``argparse.Namespace`` allowed).

    Returns the checkpoint dict (``state_dict``, ``vocab``, ``vocab_fr``, ``args``, ``optimizer``, ``epoch``).

    Raises:
        UnsafePickleError: the checkpoint names code (nothing ran).
        DamagedFileError: the file is no readable torch checkpoint, or one of something else than a PRAS model.
    """
    ckpt = load_torch_checkpoint(path, PRAS_SAFE_GLOBALS)
    missing = {"state_dict", "vocab", "args"} - set(ckpt if isinstance(ckpt, dict) else ())
    if missing:
        raise DamagedFileError(f"{os.fspath(path)} is not a PRAS checkpoint: missing {sorted(missing)}")
    if not isinstance(ckpt["vocab"], dict) or UNK_STRING not in ckpt["vocab"]:
        raise DamagedFileError(f"{os.fspath(path)} is not a PRAS checkpoint: its `vocab` must be a dict holding "
                               f"{UNK_STRING!r}")
    return ckpt


def _arg(args: Any, name: str, default: Any) -> Any:
    return getattr(args, name, default) if args is not None else default


def _row_of_piece(text: str, vocab: dict[str, int], lower: bool) -> tuple[int | None, bool]:
    """Checkpoint row of one piece as ``Example`` finds it, and whether one token id can express it exactly."""
    parts = (text.lower() if lower else text).split()
    if len(parts) != 1:  # a piece holding Python whitespace splits into 0 or several lookups
        return (vocab.get(parts[0]) if parts else None), False
    return vocab.get(parts[0]), True


def convert_pras(
    checkpoint: str | os.PathLike[str],
    sp_model: str | os.PathLike[str],
    ignore_moses: bool = False,
) -> tuple[ParaNMTEncoder, ConversionReport]:
    """Convert a PRAS checkpoint and its sentencepiece model into a :class:`~paranmt_hf.ParaNMTEncoder`.

    Args:
        checkpoint: the ``.pt`` file (e.g. ``model.para.lc.100.pt``).
        sp_model: its sentencepiece model (e.g. ``paranmt.model``).
        ignore_moses: convert a checkpoint trained with ``--tokenize 1`` anyway (the converted tokenizer does not
            Moses-tokenise; embeddings then equal the original only on already tokenised text).

    Returns:
        ``(encoder, report)``.
    """
    from ...modeling.configuration_paranmt import ParaNMTConfig
    from ...modeling.modeling_paranmt import ParaNMTModel
    from ..encoder import ParaNMTEncoder

    ckpt = load_pras_checkpoint(checkpoint)
    args, vocab, state = ckpt["args"], ckpt["vocab"], ckpt["state_dict"]
    kind = _arg(args, "model", "avg")
    if kind not in ("avg", "lstm"):
        raise ConversionError(f"{checkpoint}: unknown PRAS model type args.model={kind!r} (expected 'avg' or 'lstm')")
    if _arg(args, "ngrams", 0):
        raise ConversionError(f"{checkpoint}: PRAS checkpoints with --ngrams > 0 are not supported (the PRAS code "
                              "itself asserts 0)")
    if _arg(args, "tokenize", 0) and not ignore_moses:
        raise ConversionError(
            f"{checkpoint} was trained with --tokenize 1: the original inference Moses-tokenises text first, which "
            "the converted tokenizer cannot reproduce. Pass ignore_moses=True to convert anyway; embeddings then "
            "equal the original only on already Moses-tokenised text."
        )
    lower = bool(_arg(args, "lower_case", 1))
    zero_unk = bool(_arg(args, "zero_unk", 1))
    pool = _arg(args, "pool", "mean")
    if "embedding.weight" not in state:
        raise ConversionError(f"{checkpoint}: its state_dict has no embedding.weight")
    weight = state["embedding.weight"].detach().to(torch.float32)
    if weight.shape[0] != len(vocab) or not all(0 <= int(r) < weight.shape[0] for r in vocab.values()):
        raise ConversionError(f"{checkpoint}: embedding.weight has {weight.shape[0]} rows; vocab ({len(vocab)} "
                              "entries) must index them")

    sp = read_sentencepiece_model(sp_model)
    runs = sorted(k for k in vocab if is_unknown_run(k, sp))
    backend = build_sentencepiece_tokenizer(sp, lowercase=lower, unknown_runs=runs)
    tokens = [t for t, _ in sorted(backend.get_vocab().items(), key=lambda kv: kv[1])]
    unk_row = vocab[UNK_STRING]
    rows = np.full(len(tokens), unk_row, dtype=np.int64)
    unknown_ids, inexact, used = [], [], {unk_row}
    for i, token in enumerate(tokens[2:], start=2):
        row, exact = _row_of_piece(surface(token), vocab, lower)
        if not exact:
            inexact.append(token)
        if row is None:
            unknown_ids.append(i)
        else:
            rows[i] = row
            used.add(row)
    new_weight = weight[torch.from_numpy(rows)]
    new_weight[0] = 0.0  # [PAD]
    unreachable = [k for k, r in vocab.items() if r not in used]
    report = ConversionReport(
        source=os.fspath(checkpoint),
        kind="sp" if kind == "avg" else "bilstm",
        vocab_size=len(tokens),
        embedding_dim=int(weight.shape[1]),
        checkpoint_rows=len(vocab),
        pieces_without_row=len(unknown_ids),
        unknown_runs_mapped=len(runs),
        unreachable_rows=len(unreachable),
        unreachable_examples=sorted(unreachable)[:20],
        inexact_pieces=inexact[:20],
    )
    if ckpt.get("vocab_fr") is not None or "embedding_fr.weight" in state:
        report.notes.append("vocab_fr / embedding_fr (second language side) left out: inference uses `embedding`")
    odd = pieces_with_unknown_chars(sp)
    if odd:
        report.notes.append(f"{len(odd)} pieces hold characters that are no piece themselves (e.g. {odd[:3]}): "
                            "texts with those characters may segment differently")
    if inexact:
        report.notes.append(f"{len(inexact)} pieces contain whitespace for Python's str.split (not exact)")
    config_kwargs: dict[str, Any] = {
        "kind": report.kind,
        "vocab_size": len(tokens),
        "embedding_dim": int(weight.shape[1]),
        "pooling": pool,
        # zero_unk: pieces missing from vocab are dropped; otherwise they take UUUNKKK's row (already in `rows`)
        "drop_unknown_tokens": zero_unk,
        "unknown_token_ids": unknown_ids if zero_unk else None,
    }
    if kind == "lstm":
        config_kwargs.update(rnn_hidden_size=int(_arg(args, "hidden_dim", 150)), bilstm_merge="concat")
    model = ParaNMTModel(ParaNMTConfig(**config_kwargs))
    with torch.no_grad():
        model.components[0].embedding.weight.copy_(new_weight)
        if kind == "lstm":
            _copy_lstm(model.components[0].rnn, state)
    tokenizer = to_transformers(backend)
    logger.info("converted %s: %s", checkpoint, report)
    return ParaNMTEncoder(model, tokenizer), report


def _copy_lstm(rnn: torch.nn.LSTM, state: dict[str, torch.Tensor]) -> None:
    """Copy PRAS's ``lstm.*`` (a 1-layer bidirectional ``nn.LSTM``) into ``rnn`` (same parameter layout)."""
    for name, param in rnn.named_parameters():
        key = f"lstm.{name}"
        if key not in state:
            raise ConversionError(f"the checkpoint misses {key} (expected a 1-layer bidirectional nn.LSTM named "
                                  "`lstm`)")
        if tuple(state[key].shape) != tuple(param.shape):
            raise ConversionError(f"the checkpoint's {key} has shape {tuple(state[key].shape)}, expected "
                                  f"{tuple(param.shape)}")
        param.copy_(state[key].to(torch.float32))


__all__ = ["convert_pras", "load_pras_checkpoint", "ConversionReport", "UNK_STRING", "PRAS_SAFE_GLOBALS"]

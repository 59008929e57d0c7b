"""Subword tokenizers (the ``subword`` encoder kind): the pieces of any ``tokenizers`` tokenizer, ParaNMT-style.

A ``subword`` model averages the pieces of a WordPiece, BPE, Unigram or WordLevel ``tokenizers`` tokenizer, typically
a transformer teacher's, so that its embedding table can be distilled from that teacher (``paranmt_hf.model.distill``).
:func:`adapt_tokenizer` brings such a tokenizer to the conventions every ParaNMT model shares:

- ``[PAD]`` is id 0 and ``[UNK]`` id 1 (the teacher's pad/unknown tokens are renamed and moved there, or added);
- the other special tokens (``[CLS]``, ``[SEP]``, ``[MASK]``, ``<s>``, ...) are removed: an average over the pieces
  of a sentence must not include sentence markers;
- no post-processor, no padding, no truncation;
- the normalizer, pre-tokenizer, model and decoder are the teacher's, so a text is cut into the same pieces.

The other pieces keep their order; :class:`AdaptedTokenizer` records, for each new id, the teacher's id (to move
embedding rows). With no tokenizer to start from, :func:`train_wordpiece_tokenizer` learns a lower-cased WordPiece
vocabulary from a corpus.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from ...modeling.segmentation_paranmt import PAD_TOKEN, UNK_TOKEN
from .errors import TokenizerSourceError
from .fast import to_transformers

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

MODEL_TYPES = ("WordPiece", "BPE", "Unigram", "WordLevel")
"""``tokenizers`` models a subword tokenizer may use."""

_PAD_GUESSES = ("[PAD]", "<pad>", "<PAD>", "<|pad|>", "[pad]")


@dataclass
class AdaptedTokenizer:
    """A tokenizer brought to the ParaNMT conventions and where its ids came from.

    Attributes:
        tokenizer: the adapted ``tokenizers.Tokenizer`` (``[PAD]`` = 0, ``[UNK]`` = 1, no special tokens added).
        source_ids: for each new id, the id of the same piece in the original tokenizer, or -1 for ``[PAD]``/``[UNK]``
            when the original had no such token.
    """

    tokenizer: Tokenizer
    source_ids: np.ndarray

    def to_transformers(self) -> PreTrainedTokenizerFast:
        """The adapted tokenizer as a transformers fast tokenizer (what a ``subword`` model directory holds)."""
        return to_transformers(self.tokenizer)


def load_tokenizer(source: Any) -> tuple[Tokenizer, str | None]:
    """A ``tokenizers.Tokenizer`` (and its pad token, when known) from many kinds of source.

    Args:
        source: a ``tokenizers.Tokenizer``, a transformers fast tokenizer, a ``tokenizer.json`` path, a model
            directory holding one, or a Hub model id (loaded with ``AutoTokenizer``).

    Raises:
        TokenizerSourceError: a file that is not a ``tokenizer.json``, or a model without a fast tokenizer.
        FileNotFoundError: a missing local path, or a Hub id the Hub (offline: its cache) does not give.
    """
    if isinstance(source, Tokenizer):
        return Tokenizer.from_str(source.to_str()), None
    backend = getattr(source, "backend_tokenizer", None)
    if backend is not None:
        return Tokenizer.from_str(backend.to_str()), getattr(source, "pad_token", None)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if os.path.isfile(path):
            return _from_file(path), None
        if os.path.isfile(os.path.join(path, "tokenizer.json")):
            return _from_file(os.path.join(path, "tokenizer.json")), _pad_from_config(path)
        return _from_transformers(path)
    raise TypeError(f"cannot read a tokenizer from a {type(source).__name__}")


def _from_file(path: str) -> Tokenizer:
    try:
        return Tokenizer.from_file(path)
    except Exception as err:  # tokenizers raises a bare Exception
        raise TokenizerSourceError(f"{path} is not a tokenizer.json that the tokenizers library reads ({err}): give "
                                   "a tokenizer.json, a model folder or a Hub id") from None


def _from_transformers(path: str) -> tuple[Tokenizer, str | None]:
    """The fast tokenizer of a model folder or Hub id (the Hub's failures said as every loader says them)."""
    from transformers import AutoTokenizer

    from ...utils.integrity import check_model_path
    from ..locate import hub_failure_said

    check_model_path(path)  # a missing local folder is named, not asked of the Hub
    with hub_failure_said(path):
        fast = AutoTokenizer.from_pretrained(path, use_fast=True)
    if getattr(fast, "backend_tokenizer", None) is None:
        raise TokenizerSourceError(f"{path}: no fast (tokenizers) tokenizer to build a subword model from")
    return Tokenizer.from_str(fast.backend_tokenizer.to_str()), fast.pad_token


def _pad_from_config(directory: str) -> str | None:
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                pad = json.load(f).get("pad_token")
            if isinstance(pad, dict):
                pad = pad.get("content")
            if isinstance(pad, str):
                return pad
    return None


def _pieces(model: dict[str, Any]) -> list[str]:
    """The model's vocabulary in id order."""
    if model["type"] == "Unigram":
        return [piece for piece, _ in model["vocab"]]
    vocab = model["vocab"]
    return [token for token, _ in sorted(vocab.items(), key=lambda kv: kv[1])]


def _unk_piece(model: dict[str, Any], pieces: list[str]) -> str | None:
    if model["type"] == "Unigram":
        unk_id = model.get("unk_id")
        return pieces[unk_id] if unk_id is not None else None
    return model.get("unk_token")


def adapt_tokenizer(source: Any, pad_token: str | None = None) -> AdaptedTokenizer:
    """Bring any WordPiece / BPE / Unigram / WordLevel tokenizer to the ParaNMT conventions (module docstring).

    Args:
        source: see :func:`load_tokenizer`.
        pad_token: the original's padding token (default: the one the source names, else a ``[PAD]``/``<pad>``
            piece when there is one; otherwise ``[PAD]`` is added).

    Raises:
        ValueError: for other ``tokenizers`` models, or when ``[PAD]``/``[UNK]`` already name other pieces.
    """
    tok, source_pad = load_tokenizer(source)
    config = json.loads(tok.to_str())
    model = config["model"]
    if model["type"] not in MODEL_TYPES:
        raise ValueError(f"subword tokenizers must use one of {MODEL_TYPES}, got a {model['type']} model")
    pieces = _pieces(model)
    index = {p: i for i, p in enumerate(pieces)}
    added = config.get("added_tokens") or []
    specials = {t["content"] for t in added if t.get("special")}
    unk = _unk_piece(model, pieces)
    pad = pad_token or source_pad or next((p for p in _PAD_GUESSES if p in index or p in specials), None)
    for reserved, own in ((PAD_TOKEN, pad), (UNK_TOKEN, unk)):
        if reserved in index and reserved != own and reserved not in specials:
            raise ValueError(f"the tokenizer has an ordinary piece {reserved!r}: cannot use it as the special token")
    drop = specials | {pad, unk, PAD_TOKEN, UNK_TOKEN}
    kept = [p for p in pieces if p not in drop]
    new_pieces = [PAD_TOKEN, UNK_TOKEN, *kept]
    source_ids = np.array([index.get(pad, -1), index.get(unk, -1), *(index[p] for p in kept)], dtype=np.int64)
    if model["type"] == "Unigram":
        scores = dict(model["vocab"])
        floor = min(scores.values(), default=0.0)
        model["vocab"] = [[PAD_TOKEN, 0.0], [UNK_TOKEN, scores.get(unk, floor)], *([p, scores[p]] for p in kept)]
        model["unk_id"] = 1
    else:
        model["vocab"] = {p: i for i, p in enumerate(new_pieces)}
        model["unk_token"] = UNK_TOKEN
    ordinary = [t for t in added if not t.get("special") and t["content"] not in index]
    config["added_tokens"] = [
        _added(0, PAD_TOKEN),
        _added(1, UNK_TOKEN),
        *({**t, "id": len(new_pieces) + k} for k, t in enumerate(ordinary)),
    ]
    if ordinary:  # added non-special tokens have no row in the original model's vocabulary either
        source_ids = np.concatenate([source_ids, [-1] * len(ordinary)])
    config["post_processor"] = None
    config["padding"] = None
    config["truncation"] = None
    adapted = Tokenizer.from_str(json.dumps(config))
    return AdaptedTokenizer(adapted, source_ids)


def _added(i: int, content: str) -> dict[str, Any]:
    return {
        "id": i,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }


def train_wordpiece_tokenizer(
    corpus: Iterable[str], vocab_size: int = 30_000, lowercase: bool = True, show_progress: bool = False
) -> PreTrainedTokenizerFast:
    """Train a BERT-style WordPiece tokenizer on sentences (``[PAD]`` = 0, ``[UNK]`` = 1, no other specials).

    Args:
        corpus: training sentences (iterated once).
        vocab_size: number of pieces including ``[PAD]`` and ``[UNK]``.
        lowercase: lower-case (and strip accents) as uncased BERT does.
        show_progress: show the trainer's progress bar.
    """
    tok = Tokenizer(models.WordPiece(unk_token=UNK_TOKEN, continuing_subword_prefix="##"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=None if lowercase else False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD_TOKEN, UNK_TOKEN],
        continuing_subword_prefix="##",
        show_progress=show_progress,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    return to_transformers(tok)


def subword_tokenizer(
    source: Any = None, corpus: Iterable[str] | None = None, vocab_size: int | None = None
) -> PreTrainedTokenizerFast:
    """The tokenizer of a ``subword`` model: ``source`` adapted (:func:`adapt_tokenizer`), else a WordPiece one.

    Args:
        source: a tokenizer to adapt (see :func:`load_tokenizer`), or None.
        corpus: sentences to train a WordPiece vocabulary on when ``source`` is None.
        vocab_size: size of the trained vocabulary (default 30,000); must be None with ``source``.
    """
    if source is not None:
        if vocab_size is not None:
            raise ValueError("vocab_size applies to a trained WordPiece tokenizer, not to an adapted one")
        return adapt_tokenizer(source).to_transformers()
    if corpus is None:
        raise ValueError("a subword tokenizer needs a tokenizer to adapt or a corpus to train WordPiece on")
    return train_wordpiece_tokenizer(corpus, vocab_size=vocab_size or 30_000)

"""Sentencepiece-compatible unigram tokenizers ("SP" models of Paraphrastic Representations at Scale).

Trained with ``tokenizers``' ``UnigramTrainer`` (``paranmt-hf build-tokenizer --kind sp``) or built from the pieces
and scores of an existing sentencepiece model (conversion). Text is lower-cased as in the paper, spaces become the
``▁`` meta-symbol and a ``▁`` is prepended, as sentencepiece does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from ..modeling.tokenization_paranmt import PAD_TOKEN, UNK_TOKEN
from .fast import to_transformers

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

logger = logging.getLogger(__name__)


def unigram_normalizer(lowercase: bool = True) -> normalizers.Normalizer:
    """NFKC, optional lower-casing, and whitespace collapsed/stripped (sentencepiece's default normalisation)."""
    steps = [normalizers.NFKC()]
    if lowercase:
        steps.append(normalizers.Lowercase())
    steps += [normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip()]
    return normalizers.Sequence(steps)


def _configure(tok: Tokenizer, lowercase: bool) -> Tokenizer:
    tok.normalizer = unigram_normalizer(lowercase)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    return tok


def train_unigram_tokenizer(
    corpus: Iterable[str],
    vocab_size: int = 50_000,
    lowercase: bool = True,
    max_piece_length: int = 16,
    show_progress: bool = True,
) -> PreTrainedTokenizerFast:
    """Train a unigram (sentencepiece-style) tokenizer on sentences.

    Args:
        corpus: training sentences (iterated once).
        vocab_size: number of pieces including ``[PAD]`` and ``[UNK]`` (PRAS used 50K).
        lowercase: lower-case text first (the paper does).
        max_piece_length: longest piece, in characters.
        show_progress: show the trainer's progress bar.

    Returns:
        A ``transformers`` fast tokenizer; ``[PAD]`` is id 0, ``[UNK]`` id 1. Its size can be smaller than
        ``vocab_size``: the trainer stops when the corpus offers no more pieces (a warning then gives both sizes;
        ``len(tokenizer)`` is the real one).
    """
    tok = _configure(Tokenizer(models.Unigram()), lowercase)
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD_TOKEN, UNK_TOKEN],
        unk_token=UNK_TOKEN,
        max_piece_length=max_piece_length,
        show_progress=show_progress,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    if tok.get_vocab_size() < vocab_size:
        logger.warning("unigram tokenizer: asked for %d pieces, the corpus gave %d (the trainer finds no more pieces "
                       "in it); the vocabulary has %d", vocab_size, tok.get_vocab_size(), tok.get_vocab_size())
    return to_transformers(tok)


def unigram_tokenizer_from_pieces(pieces: list[tuple[str, float]], lowercase: bool = True) -> PreTrainedTokenizerFast:
    """A unigram tokenizer whose id ``i`` is ``pieces[i]`` (pieces[0:2] must be ``[PAD]``, ``[UNK]``).

    Args:
        pieces: ``(piece, log-probability score)`` in id order, e.g. from a sentencepiece model.
        lowercase: lower-case text first.
    """
    if [p for p, _ in pieces[:2]] != [PAD_TOKEN, UNK_TOKEN]:
        raise ValueError(f"pieces must start with {PAD_TOKEN} and {UNK_TOKEN}")
    tok = _configure(Tokenizer(models.Unigram(list(pieces), unk_id=1, byte_fallback=False)), lowercase)
    tok.add_special_tokens([PAD_TOKEN, UNK_TOKEN])
    return to_transformers(tok)

"""Sentencepiece-compatible unigram tokenizers ("SP" models of Paraphrastic Representations at Scale).

Trained with ``tokenizers``' ``UnigramTrainer`` (``paranmt-hf build-tokenizer --kind sp``) or built from the pieces
and scores of an existing sentencepiece model (conversion). Text is lower-cased as in the paper, spaces become the
``▁`` meta-symbol and a ``▁`` is prepended, as sentencepiece does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from ...modeling.segmentation_paranmt import PAD_TOKEN, UNK_TOKEN
from .errors import VocabularyError
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

    Raises:
        VocabularyError: ``vocab_size`` is smaller than the corpus's distinct characters (plus ``[PAD]``/``[UNK]``).

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
    try:
        tok.train_from_iterator(corpus, trainer=trainer)
    except Exception as err:  # tokenizers raises a bare Exception
        if "vocabulary is not large enough" not in str(err):
            raise
        raise VocabularyError(f"vocab_size={vocab_size} is smaller than the number of distinct characters of the "
                              "corpus (every character must be a piece, with [PAD] and [UNK]): give a larger "
                              "vocab_size") from None
    if tok.get_vocab_size() < vocab_size:
        logger.warning("unigram tokenizer: asked for %d pieces, the corpus gave %d (the trainer finds no more pieces "
                       "in it); the vocabulary has %d", vocab_size, tok.get_vocab_size(), tok.get_vocab_size())
    return unigram_tokenizer_from_pieces(canonical_pieces(json.loads(tok.to_str())["model"]["vocab"]), lowercase)


SCORE_DECIMALS = 9
"""Scores are rounded to this many decimals before the pieces are ordered (see :func:`canonical_pieces`)."""
_CHAR_PENALTY = 1e-4
"""``UnigramTrainer`` appends the required characters it did not keep with scores ``min - k * 1e-4``."""


def canonical_pieces(vocab: list[tuple[str, float]] | list[list]) -> list[tuple[str, float]]:
    """The trainer's pieces in a reproducible id order: ``[PAD]``, ``[UNK]``, then by score (high first), then text.

    Two ``UnigramTrainer`` runs on the same sentences give the same pieces but not the same ids: its EM statistics
    are summed in parallel (scores differ in the last bits, so pieces of near-equal score swap places), and the
    required characters it appends (scores stepping down by 1e-4 from the first one) come in hash-set order. A model
    built from the same seed then differs. Here the appended characters (:func:`_appended_characters`) are put in
    text order on the same scores, every score is rounded to :data:`SCORE_DECIMALS` decimals (a log-probability
    change < 1e-9), and ties are broken by the piece's text.
    """
    special = {PAD_TOKEN, UNK_TOKEN}
    pieces = [(str(p), float(s)) for p, s in vocab if p not in special]
    appended = _appended_characters(pieces)
    if appended:  # text order on the trainer's scores
        scores = sorted((pieces[i][1] for i in appended), reverse=True)
        chars = sorted(pieces[i][0] for i in appended)
        for i, char, score in zip(sorted(appended, key=lambda i: -pieces[i][1]), chars, scores, strict=True):
            pieces[i] = (char, score)
    rest = sorted(((p, round(s, SCORE_DECIMALS)) for p, s in pieces), key=lambda item: (-item[1], item[0]))
    return [(PAD_TOKEN, 0.0), (UNK_TOKEN, 0.0), *rest]


def _appended_characters(pieces: list[tuple[str, float]]) -> list[int]:
    """Positions of the characters the trainer appended: single characters on its score ladder ``s0 - k * 1e-4``.

    ``s0`` is the highest single-character score with another single character 1e-4 below it; the ladder is followed
    down while a step holds a single character (a step may hold two: the trainer repeats its last score). Learned
    pieces whose scores fall between the steps are not on it.
    """
    singles = sorted(((s, i) for i, (p, s) in enumerate(pieces) if len(p) == 1), reverse=True)

    def near(score: float) -> list[int]:
        return [i for s, i in singles if abs(s - score) < 1e-9]

    heads = [s for s, _ in singles if near(s - _CHAR_PENALTY)]
    if not heads:
        return []
    out: list[int] = []
    step = heads[0]
    while found := near(step):
        out += found
        step -= _CHAR_PENALTY
    return out


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

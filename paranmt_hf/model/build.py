"""Build a new (untrained) ParaNMT encoder from a corpus: tokenizer(s), config and model in one call."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from ..modeling.configuration_paranmt import ParaNMTConfig
from ..modeling.kinds_paranmt import ENCODER_KIND_SPECS, RECURRENT_TOKENS, parse_kinds
from ..modeling.modeling_paranmt import ParaNMTModel
from .encoder import ParaNMTEncoder
from .tokenization import VocabularyError, build_tokenizer, check_vocab_size
from .tokenization.combined import combine_tokenizers
from .tokenization.word import build_word_tokenizer, count_words, select_vocab
from .word_vectors import load_word_vectors


def _tokens(kind: str, token_type: str) -> str:
    """The tokens a component of ``kind`` reads: its own (averaging kinds) or ``token_type`` (recurrent kinds)."""
    return ENCODER_KIND_SPECS[kind].tokens or token_type


def _vector_vocab(
    corpus: list[str], vectors: tuple[list[str], np.ndarray], vocab_size: int | None, min_count: int, extra: int
) -> list[str]:
    """Corpus words that have a vector (most frequent first), then the first ``extra`` other vector words."""
    known = set(vectors[0])
    ranked = [w for w in select_vocab(count_words(corpus), None, min_count) if w in known]
    ranked = ranked[: vocab_size - 2] if vocab_size else ranked
    if extra:
        seen = set(ranked)
        ranked += [w for w in vectors[0][: extra + len(seen)] if w not in seen][:extra]
    return ranked


def build_encoder(
    kind: str | Sequence[str],
    corpus: Iterable[str],
    vocab_size: int | None = None,
    embedding_dim: int | Sequence[int] = 300,
    token_type: str = "word",
    min_count: int = 1,
    word_vectors: str | tuple[list[str], np.ndarray] | None = None,
    vector_vocab_size: int = 0,
    combination: str = "concat",
    seed: int = 0,
    lookup: str = "split",
    subword_tokenizer: Any = None,
    **config_kwargs: Any,
) -> ParaNMTEncoder:
    """Build tokenizer(s) from ``corpus`` and a freshly initialised model.

    Args:
        kind: an encoder kind (``kinds_paranmt``), or several (``"trigram+word"`` or a list) trained jointly.
        corpus: sentences to build vocabularies from (materialised once).
        vocab_size: per component, with ``[PAD]``/``[UNK]`` (``None``: all words/trigrams, 50K sp, 30K WordPiece).
        embedding_dim: token embedding size (``word_vectors``' when given), or one size per kind.
        token_type: tokens read by recurrent encoders: ``word`` (ParaNMT-50M) or ``sp`` (PRAS's LSTM).
        min_count: drop word/trigram tokens rarer than this.
        word_vectors: word rows from ``"glove-6b-50d"``, a GloVe file or ``(words, matrix)`` (corpus words with one).
        vector_vocab_size: with ``word_vectors``, also add this many of their most frequent words the corpus lacks.
        combination: ``concat`` or ``add`` for several kinds.
        seed: seed of the random initialisation.
        lookup: how word / trigram tokens read raw text: ``"split"`` or ``"paranmt50m"`` (``LOOKUP_RULES``).
        subword_tokenizer: ``subword`` components' tokenizer (object, path or Hub id; ``None``: WordPiece on corpus).
        **config_kwargs: more ``ParaNMTConfig`` fields (``pooling``, ``scramble_rate``, ``rnn_hidden_size``, ...).

    Raises:
        VocabularyError: a corpus with no sentence, or one a vocabulary cannot be built from as asked (no token seen
            ``min_count`` times, ``vocab_size`` below 3 or, for sp, below the corpus's characters).
    """
    kinds = parse_kinds(kind)
    if token_type not in RECURRENT_TOKENS:
        raise ValueError(f"token_type must be one of {RECURRENT_TOKENS}, got {token_type!r}")
    check_vocab_size(vocab_size)
    corpus = list(corpus)
    if not any(text.strip() for text in corpus):
        raise VocabularyError("the corpus has no sentence to build the vocabularies from; give a corpus with text")
    dims = [embedding_dim] * len(kinds) if isinstance(embedding_dim, int) else [int(d) for d in embedding_dim]
    if len(dims) != len(kinds):
        raise ValueError(f"embedding_dim gives {len(dims)} sizes for {len(kinds)} kinds {kinds}")
    vectors = load_word_vectors(word_vectors) if isinstance(word_vectors, str) else word_vectors
    torch.manual_seed(seed)
    tokenizers, components = [], []
    for k, kind_dim in zip(kinds, dims, strict=True):
        tok_type = _tokens(k, token_type)
        words = None
        if vectors is not None and tok_type == "word":
            words = _vector_vocab(corpus, vectors, vocab_size, min_count, vector_vocab_size)
            if not words:
                raise VocabularyError(f"no corpus word seen at least min_count={min_count} times has a word vector "
                                      "(and vector_vocab_size adds none): the word vocabulary would be empty")
            tok = build_word_tokenizer(vocab=words, lookup=lookup)
        else:
            tok = build_tokenizer(tok_type, corpus, vocab_size, min_count, lookup,
                                  subword_tokenizer if tok_type == "subword" else None)
        tokenizers.append(tok)
        dim = vectors[1].shape[1] if words is not None else kind_dim
        components.append(
            {"kind": k, "vocab_size": len(tok) if len(kinds) == 1 else _size(tok), "embedding_dim": dim}
        )
    tokenizer = tokenizers[0] if len(kinds) == 1 else combine_tokenizers(tokenizers)
    if len(kinds) == 1:
        config = ParaNMTConfig(**{**components[0], **config_kwargs})
    else:
        config = ParaNMTConfig(components=components, combination=combination, **config_kwargs)
    model = ParaNMTModel(config)
    if vectors is not None:
        _init_from_vectors(model, tokenizers, kinds, token_type, vectors)
    return ParaNMTEncoder(model, tokenizer)


def _size(tokenizer: Any) -> int:
    return ParaNMTEncoder.component_vocab_sizes(tokenizer)[0]


@torch.no_grad()
def _init_from_vectors(
    model: ParaNMTModel,
    tokenizers: list[Any],
    kinds: list[str],
    token_type: str,
    vectors: tuple[list[str], np.ndarray],
) -> None:
    index = {w: i for i, w in enumerate(vectors[0])}
    for encoder, tok, k in zip(model.components, tokenizers, kinds, strict=True):
        if _tokens(k, token_type) != "word":
            continue
        vocab = tok.get_vocab()
        rows = [(i, index[w]) for w, i in vocab.items() if w in index]
        if rows:
            target, source = zip(*rows, strict=True)
            encoder.embedding.weight[list(target)] = torch.from_numpy(vectors[1][list(source)])


@torch.no_grad()
def combine_encoders(
    encoders: Sequence[ParaNMTEncoder], scales: Sequence[float] | None = None, combination: str = "concat"
) -> ParaNMTEncoder:
    """One combination model from trained single-component averaging encoders (e.g. trigram + distilled subword).

    The sentence embedding is the concatenation (or sum) of each encoder's embedding times its scale: with mean
    pooling, scaling a table scales that encoder's average, which sets its weight in the cosine of the
    concatenation. The result is an ordinary ``trigram+subword``-style model (one tokenizer, one config).

    Args:
        encoders: single-component averaging encoders (word / trigram / sp / subword) with the same pooling.
        scales: one factor per encoder (default 1.0 each).
        combination: ``"concat"`` or ``"add"``.
    """
    if len(encoders) < 2:
        raise ValueError("combine_encoders needs at least two encoders")
    scales = [1.0] * len(encoders) if scales is None else [float(s) for s in scales]
    if len(scales) != len(encoders):
        raise ValueError(f"{len(scales)} scales for {len(encoders)} encoders")
    poolings = {e.config.pooling for e in encoders}
    specs = []
    for enc in encoders:
        parts = enc.config.resolved_components()
        if len(parts) != 1 or not ENCODER_KIND_SPECS[parts[0]["kind"]].averaging:
            raise ValueError(f"only single averaging encoders can be combined, got {enc!r}")
        specs.append({k: parts[0][k] for k in ("kind", "vocab_size", "embedding_dim", "unk_token_id",
                                               "unknown_token_ids", "drop_unknown_tokens")})
    if len(poolings) != 1:
        raise ValueError(f"encoders pool differently: {sorted(poolings)}")
    config = ParaNMTConfig(components=specs, combination=combination, pooling=poolings.pop())
    model = ParaNMTModel(config)
    for target, enc, scale in zip(model.components, encoders, scales, strict=True):
        target.embedding.weight.copy_(enc.model.components[0].embedding.weight * scale)
    return ParaNMTEncoder(model, combine_tokenizers([e.tokenizer for e in encoders]))

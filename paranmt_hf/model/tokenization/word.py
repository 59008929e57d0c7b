"""Word-level tokenizers (ParaNMT-50M's ``-wordtype words``), built with ``tokenizers`` and saved as tokenizer.json."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from tokenizers import Tokenizer, models, normalizers

from ...modeling.segmentation_paranmt import LOOKUP_RULES, PAD_TOKEN, UNK_TOKEN, paranmt50m_words, word_pre_tokenizer
from ...modeling.tokenization_paranmt import ParaNMTTokenizer
from .fast import to_transformers

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast


def word_normalizer(lowercase: bool = True) -> normalizers.Normalizer:
    """Lower-casing (the papers lower-case everything) or nothing."""
    return normalizers.Lowercase() if lowercase else normalizers.Sequence([])


def split_words(texts: Iterable[str], lowercase: bool = True) -> Iterable[list[str]]:
    """Split texts into words exactly as the word tokenizer does (same normalizer and pre-tokenizer)."""
    norm, split = word_normalizer(lowercase), word_pre_tokenizer()
    for text in texts:
        yield [w for w, _ in split.pre_tokenize_str(norm.normalize_str(text))]


def count_words(corpus: Iterable[str], lowercase: bool = True) -> Counter[str]:
    """Word frequencies of a corpus of sentences."""
    return count_tokens(corpus, lambda texts: split_words(texts, lowercase))


def count_tokens(corpus: Iterable[str], tokenize: Callable[[Iterable[str]], Iterable[Iterable[str]]]
                 ) -> Counter[str]:
    """Token frequencies of a corpus, each distinct sentence tokenized once.

    Training data repeats sentences (``@N`` sources, captions); ``tokenize`` maps sentences to their tokens.
    """
    repeats = Counter(corpus)
    by_count: dict[int, list[str]] = {}
    for text, n in repeats.items():
        by_count.setdefault(n, []).append(text)
    counts: Counter[str] = Counter()
    for n, texts in by_count.items():
        once: Counter[str] = Counter()
        for tokens in tokenize(texts):
            once.update(tokens)
        if n == 1:
            counts.update(once)
        else:
            counts.update({token: c * n for token, c in once.items()})
    return counts


def select_vocab(counts: Counter[str], max_size: int | None = None, min_count: int = 1) -> list[str]:
    """Most frequent tokens first (ties broken alphabetically, so the result is deterministic)."""
    ranked = sorted((tok for tok, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
    reserved = {PAD_TOKEN, UNK_TOKEN}
    ranked = [t for t in ranked if t not in reserved]
    return ranked[:max_size] if max_size is not None else ranked


def with_specials(vocab: Iterable[str]) -> list[str]:
    """``[PAD]``, ``[UNK]`` followed by ``vocab`` (without duplicates, order kept)."""
    out, seen = [PAD_TOKEN, UNK_TOKEN], {PAD_TOKEN, UNK_TOKEN}
    for token in vocab:
        if token not in seen:
            seen.add(token)
            out.append(token)
    return out


def build_word_tokenizer(
    vocab: Iterable[str] | None = None,
    corpus: Iterable[str] | None = None,
    max_size: int | None = None,
    min_count: int = 1,
    lowercase: bool = True,
    lookup: str = "split",
) -> PreTrainedTokenizerFast | ParaNMTTokenizer:
    """A word-level tokenizer from a vocabulary or a corpus: ``[PAD]`` id 0, ``[UNK]`` id 1 for unknown words.

    Returns a fast tokenizer (``tokenizer.json``) that lower-cases and splits Moses-style (``WORD_SPLIT_PATTERN``),
    or, with ``lookup="paranmt50m"``, a ``ParaNMTTokenizer`` reading text as ParaNMT-50M did (``LOOKUP_RULES``).

    Args:
        vocab: the words, most useful first; ``[PAD]``/``[UNK]`` are put in front when missing.
        corpus: sentences to count words from (used when ``vocab`` is None), split as ``lookup`` reads them.
        max_size: keep at most this many corpus words (most frequent first).
        min_count: keep corpus words seen at least this often.
        lowercase: lower-case text before splitting (``lookup="paranmt50m"`` always lower-cases).
        lookup: ``"split"`` or ``"paranmt50m"``.
    """
    if lookup not in LOOKUP_RULES:
        raise ValueError(f"lookup must be one of {LOOKUP_RULES}, got {lookup!r}")
    if lookup == "paranmt50m" and not lowercase:
        raise ValueError("lookup='paranmt50m' lower-cases text (as the original code): lowercase=False contradicts it")
    if vocab is None:
        if corpus is None:
            raise ValueError("build_word_tokenizer needs `vocab` or `corpus`")
        if lookup == "paranmt50m":
            counts: Counter[str] = Counter(w for text in corpus for w in paranmt50m_words(text))
        else:
            counts = count_words(corpus, lowercase)
        vocab = select_vocab(counts, max_size, min_count)
    tokens = with_specials(vocab)
    if lookup == "paranmt50m":
        return ParaNMTTokenizer(components=[{"kind": "word", "vocab": tokens, "lookup": lookup}])
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token=UNK_TOKEN))
    tok.normalizer = word_normalizer(lowercase)
    tok.pre_tokenizer = word_pre_tokenizer()
    return to_transformers(tok)

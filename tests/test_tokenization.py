"""Tokenizers: word-level, unigram (sentencepiece-style), character trigrams, combinations; AutoTokenizer."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

import paranmt_hf  # noqa: F401  (registers the Auto classes)
from paranmt_hf import build_trigram_tokenizer, build_word_tokenizer, combine_tokenizers, train_unigram_tokenizer
from paranmt_hf.modeling.segmentation_paranmt import char_trigrams
from paranmt_hf.modeling.tokenization_paranmt import ParaNMTTokenizer

CORPUS = [
    "A man is playing a guitar.",
    "I don't think it's 3.5 dollars.",
    "Two dogs run in the park!",
    "The coal-colored shadows spread.",
] * 5


def test_word_tokenizer_splits_like_moses_and_lowercases():
    tok = build_word_tokenizer(corpus=CORPUS)
    assert tok.tokenize("I don't think it's 3.5 dollars.") == [
        "i",
        "do",
        "n't",
        "think",
        "it",
        "'s",
        "3.5",
        "dollars",
        ".",
    ]
    assert tok.convert_tokens_to_ids(["[PAD]", "[UNK]"]) == [0, 1]
    ids = tok("A zebra", add_special_tokens=True)["input_ids"]
    assert ids == [tok.convert_tokens_to_ids("a"), 1]  # unknown word -> [UNK]; no special tokens added


def test_word_tokenizer_vocab_order_and_limits():
    tok = build_word_tokenizer(corpus=CORPUS, max_size=3)
    assert len(tok) == 5
    vocab = sorted(tok.get_vocab(), key=tok.get_vocab().get)
    assert vocab[:2] == ["[PAD]", "[UNK]"]
    assert vocab[2] == "."  # most frequent token first
    assert build_word_tokenizer(vocab=["b", "a"]).get_vocab() == {"[PAD]": 0, "[UNK]": 1, "b": 2, "a": 3}
    with pytest.raises(ValueError, match="vocab"):
        build_word_tokenizer()


def test_trigrams_of_padded_lowercased_sentence():
    assert char_trigrams(["a", "man"]) == [" a ", "a m", " ma", "man", "an "]
    tok = build_trigram_tokenizer(corpus=CORPUS)
    assert tok.tokenize("A Man") == [" a ", "a m", " ma", "man", "an "]
    # para-nmt-50m maps unknown trigrams to the unknown token
    assert tok("qqq")["input_ids"] == [1, 1, 1]


def test_vocabulary_counts_split_each_distinct_sentence_once(monkeypatch):
    """Training data repeats sentences (``@N`` sources): counts are the corpus's, each sentence split once."""
    from collections import Counter

    import paranmt_hf.model.tokenization.trigram as trigram
    import paranmt_hf.model.tokenization.word as word

    corpus = [*CORPUS, "A man is playing a guitar.", "One more, once."]
    words = [w for s in corpus for w in next(iter(word.split_words([s])))]
    trigrams = [t for s in corpus for t in char_trigrams(next(iter(word.split_words([s]))))]
    split, seen = word.split_words, []

    def recording(texts, lowercase=True):
        texts = list(texts)
        seen.extend(texts)
        return split(texts, lowercase)

    monkeypatch.setattr(word, "split_words", recording)
    monkeypatch.setattr(trigram, "split_words", recording)
    assert word.count_words(corpus) == Counter(words)
    assert sorted(seen) == sorted(set(corpus))
    seen.clear()
    assert trigram.count_trigrams(corpus) == Counter(trigrams)
    assert sorted(seen) == sorted(set(corpus))


def test_unigram_tokenizer_is_sentencepiece_style():
    tok = train_unigram_tokenizer(CORPUS * 10, vocab_size=80, show_progress=False)
    pieces = tok.tokenize("A man   playing")
    assert pieces[0].startswith("▁") and all(p == p.lower() for p in pieces)
    assert "".join(pieces).replace("▁", " ").strip() == "a man playing"
    assert tok.convert_tokens_to_ids(["[PAD]", "[UNK]"]) == [0, 1]


def test_combined_tokenizer_offsets_components():
    tri = build_trigram_tokenizer(corpus=CORPUS)
    word = build_word_tokenizer(corpus=CORPUS)
    combo = combine_tokenizers([tri, word])
    assert combo.component_vocab_sizes == [tri.vocab_size, len(word)]
    ids = combo("a man")["input_ids"]
    expected = tri("a man")["input_ids"] + [i + tri.vocab_size for i in word("a man")["input_ids"]]
    assert ids == expected == combo.encode_ids("a man")
    # equal strings of different components stay distinct
    assert combo.convert_tokens_to_ids("a") != combo.convert_tokens_to_ids("1|a")
    with pytest.raises(ValueError):
        combine_tokenizers([tri])


@pytest.mark.parametrize("kind", ["word", "sp", "trigram", "combined"])
def test_autotokenizer_round_trip(kind, tmp_path):
    if kind == "word":
        tok = build_word_tokenizer(corpus=CORPUS)
    elif kind == "sp":
        tok = train_unigram_tokenizer(CORPUS * 10, vocab_size=80, show_progress=False)
    elif kind == "trigram":
        tok = build_trigram_tokenizer(corpus=CORPUS)
    else:
        tok = combine_tokenizers([build_trigram_tokenizer(corpus=CORPUS), build_word_tokenizer(corpus=CORPUS)])
    tok.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    batch = ["A man is playing.", "Unseen wörds here!", ""]
    assert loaded(batch, padding=True)["input_ids"] == tok(batch, padding=True)["input_ids"]
    assert isinstance(loaded, ParaNMTTokenizer) == (kind in ("trigram", "combined"))


def test_paranmt_tokenizer_needs_a_vocabulary():
    with pytest.raises(ValueError, match="vocab_file"):
        ParaNMTTokenizer()
    with pytest.raises(ValueError, match="kind"):
        ParaNMTTokenizer(components=[{"kind": "bpe"}])
    with pytest.raises(ValueError, match="start with"):
        ParaNMTTokenizer(components=[{"kind": "trigram", "vocab": ["abc", "[PAD]", "[UNK]"]}])


def test_unigram_training_is_reproducible():
    """Two trainings on the same sentences give the same ids (the trainer's own order is not reproducible)."""
    import json

    from paranmt_hf.model.tokenization.unigram import canonical_pieces, train_unigram_tokenizer

    corpus = [f"Das ist ein Test; é à ü ß ñ ç ø å æ œ (1) [2] {{3}} & % $ # @ ! ? {i}" for i in range(50)]
    corpus += [f"a man number {i} plays a guitar while two dogs run in the snow ." for i in range(200)]
    vocabs = [json.loads(train_unigram_tokenizer(corpus, vocab_size=120, show_progress=False).backend_tokenizer
                         .to_str())["model"]["vocab"] for _ in range(6)]
    assert all(v == vocabs[0] for v in vocabs)
    # the appended characters (scores stepping by 1e-4, in hash order) come out in text order on the same scores
    # (a learned piece may score between the steps, as in the 50K multilingual vocabulary of the main job)
    raw = [["[PAD]", 0.0], ["[UNK]", 0.0], ["▁a", -2.0], ["▁b", -3.0], ["q", -9.0], ["&", -9.0001], ["▁mel", -9.00015],
           ["(", -9.0002], ["j", -9.0002]]
    swapped = raw[:4] + [["(", -9.0], ["j", -9.0001], ["▁mel", -9.00015], ["q", -9.0002], ["&", -9.0002]]
    assert canonical_pieces(raw) == canonical_pieces(swapped)
    assert [p for p, _ in canonical_pieces(raw)] == ["[PAD]", "[UNK]", "▁a", "▁b", "&", "(", "▁mel", "j", "q"]


@pytest.mark.parametrize("kind", ["trigram", "trigram+word"])
def test_paranmt_tokenizer_has_a_vocab_as_transformers_tokenizers_do(kind, tmp_path):
    """``vocab`` / ``get_vocab`` / ``len`` as transformers tokenizers have them: mteb sizes a model's embedding
    parameters from ``len(model.tokenizer.vocab)`` (it logged an error for ParaNMTTokenizer, which had none)."""
    from paranmt_hf import build_encoder

    encoder = build_encoder(kind, CORPUS, embedding_dim=4, seed=1)
    tok = encoder.tokenizer
    assert tok.vocab == tok.get_vocab() and len(tok.vocab) == len(tok) == tok.vocab_size
    assert sorted(tok.vocab.values()) == list(range(tok.vocab_size))
    model_meta = pytest.importorskip("mteb.models.model_meta")
    st = pytest.importorskip("sentence_transformers")
    encoder.save_pretrained(tmp_path)
    model = st.SentenceTransformer(str(tmp_path), device="cpu", trust_remote_code=True)
    count = model_meta.ModelMeta._get_n_embedding_parameters_from_sentence_transformers(model)
    assert count == tok.vocab_size * encoder.model.config.hidden_size

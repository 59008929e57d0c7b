"""The batched unigram search (paranmt_hf/model/unigram_search.py) gives ``tokenizers``' ``Unigram`` model's ids."""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

from paranmt_hf.model.unigram_search import MAX_CHARS, Segment, UnigramSegmenter


def _model_ids(model: models.Unigram) -> Segment:
    def ids(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        pieces = [model.tokenize(w) for w in words]
        flat = [t.id for p in pieces for t in p]
        return np.asarray(flat, dtype=np.int64), np.asarray([len(p) for p in pieces], dtype=np.int64)

    return ids


def _check(vocab, words: list[str], unk_id: int = 0) -> list[str]:
    """Asserts the batched ids equal the model's; returns the words the batched search left to the model."""
    model = models.Unigram(vocab, unk_id=unk_id)
    reference = _model_ids(model)
    left: list[str] = []

    def fallback(ws: list[str]) -> tuple[np.ndarray, np.ndarray]:
        left.extend(ws)
        return reference(ws)

    flat, counts = UnigramSegmenter(vocab).segment(words, fallback)
    want_flat, want_counts = reference(words)
    assert counts.tolist() == want_counts.tolist()
    assert flat.tolist() == want_flat.tolist()
    return left


def _corpus(seed: int = 0, n: int = 3000) -> list[str]:
    rng = random.Random(seed)
    stems = ["walk", "talk", "run", "play", "jump", "read", "writ", "sing", "danc", "cook", "paint", "swim", "climb"]
    ends = ["", "s", "ed", "ing", "er", "ers", "able", "ness", "ly"]
    other = ["the", "a", "man", "woman", "dog", "cat", "on", "in", "street", "park", "café", "naïve", "-", ",", "."]
    words = [s + e for s in stems for e in ends] + other
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(n)]


def _train(corpus: list[str], vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, unk_token="<unk>", special_tokens=["<unk>"],
                                      show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    return tok


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    return _train(_corpus(), 300)


def test_equals_the_trained_model_on_its_words_and_on_random_strings(trained):
    spec = json.loads(trained.to_str())["model"]
    vocab = [tuple(v) for v in spec["vocab"]]
    words = sorted({"▁" + w for s in _corpus(1, 500) for w in s.split()})
    alphabet = sorted({c for p, _ in vocab for c in p if len(p) == 1 or c == "▁"})
    rng = random.Random(2)
    noise = ["▁" + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))) for _ in range(3000)]
    left = _check(vocab, words + noise, spec["unk_id"])
    assert len(left) < len(words + noise) / 4  # most words are done in the batch, not by the model
    assert all(len(w) > MAX_CHARS for w in left)  # every character of these is a piece: only the long ones are left


def test_ties_resolve_as_in_tokenizers():
    # scores that add up exactly, so that many segmentations of one string tie
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("c", -2.0), ("ab", -2.0), ("bc", -3.0), ("abc", -4.0),
             ("ca", -3.0), ("bca", -4.0), ("aa", -2.0), ("cab", -5.0), ("abca", -5.0)]
    words = ["".join(t) for n in range(1, 8) for t in itertools.product("abc", repeat=n)]
    assert _check(vocab, words) == []


def test_a_piece_listed_twice_is_found_under_its_last_id():
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -3.0), ("ab", -1.5), ("ba", -2.5)]
    _check(vocab, ["ab", "aba", "bab", "abab", "b"])


def test_words_with_characters_that_are_not_pieces_go_to_the_model():
    vocab = [("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5), ("xy", -0.5)]
    words = ["ab", "axb", "xy", "ba", "a" * (MAX_CHARS + 1), "b" * MAX_CHARS]
    # "x" and "y" are no pieces of their own: the model inserts (and fuses) unknown tokens there; too long a word
    assert _check(vocab, words) == ["axb", "xy", "a" * (MAX_CHARS + 1)]


def test_sp_fast_path_segments_new_words_in_one_batch():
    from paranmt_hf import build_encoder

    sentences = _corpus(3, 400)
    encoder = build_encoder("sp", sentences, vocab_size=200, embedding_dim=8, seed=0)
    fast = encoder.featurizer.fast_ids
    fast.clear()
    many = [s + f" extra{i} more{i}" for i, s in enumerate(sentences)]  # 800 new chunks in one batch
    flat, lengths = fast(many)
    assert fast._unigram is not None  # the batched search ran
    want = encoder.featurizer.reference_ids(many)
    assert lengths.tolist() == [len(x) for x in want]
    assert flat.tolist() == [t for x in want for t in x]


@pytest.mark.data
def test_equals_the_model_on_every_sts_word(data_dir):
    """A unigram vocabulary trained on the ParaNMT sample; every distinct word of STS12-16 (45K) segmented at once."""
    import glob
    import gzip

    with gzip.open(data_dir / "train" / "paranmt5m-sample-10k.tsv.gz", "rt", encoding="utf-8") as f:
        corpus = [s for line in f for s in line.rstrip("\n").split("\t")[:2]]
    tok = _train(corpus, 8000)
    words: dict[str, None] = {}
    for path in sorted(glob.glob(str(data_dir / "eval" / "sts" / "STS1[2-6]-en-test" / "STS.input.*.txt"))):
        with open(path, encoding="utf-8") as f:
            words.update(dict.fromkeys("▁" + w for line in f for w in tok.normalizer.normalize_str(line).split()))
    spec = json.loads(tok.to_str())["model"]
    left = _check([tuple(v) for v in spec["vocab"]], list(words), spec["unk_id"])
    assert len(words) > 40_000 and len(left) < len(words) / 5  # left: a character the 10K pairs never had alone

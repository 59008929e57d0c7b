"""Trigram ids of ASCII sentences read off the batch's bytes (paranmt_hf/model/ascii_trigrams.py) equal the trigram
segmenter's ids, the sentences that path cannot read go to the chunk path, and the word cuts follow the words."""

from __future__ import annotations

import random

import numpy as np
import pytest
from _corpus import SENTENCES

from paranmt_hf import build_encoder
from paranmt_hf.model.ascii_trigrams import cut_places, trigram_ids, trigram_text
from paranmt_hf.model.token_ids import ChunkStore, TrigramIds

# ASCII pieces the word split treats apart: contractions, hyphens and dots inside words, punctuation runs, every
# whitespace byte, control characters, "_" (a \w character), upper case
PIECES = list("aAzZ09_.,'-!?\"()$&/ \t\n\x0b\x0c\r\x7f\x01") + "  |n't|N'T|'s|'ll|'re|t-shirt|3.5|u.s.|...".split("|")
PIECES += ["--", "don't", "it's", "can't", "a.b-c", "x'"]
READ_ELSEWHERE = ["nul\x00byte", "file\x1csep", "unit\x1fsep", "café", "中文", "emoji \U0001f600", "a\u00a0b", "▁x"]


def _ascii_fuzz(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(n)]


@pytest.fixture(scope="module")
def featurizer():
    return build_encoder("trigram", SENTENCES * 3, embedding_dim=8, seed=3).featurizer


def _flat_reference(featurizer, texts):
    ids = featurizer.reference_ids(texts)
    return [t for x in ids for t in x], [len(x) for x in ids]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_byte_path_reads_every_ascii_sentence_exactly(featurizer, seed):
    fast = featurizer.fast_ids
    assert isinstance(fast, TrigramIds)
    texts = ["", " ", "\t\n ", "x", " lead", "trail ", *SENTENCES, *_ascii_fuzz(400, seed)]
    text, left = trigram_text(texts, fast.classes, fast._cuts)
    assert left == []  # the byte path itself, not the chunk path, made these ids
    flat, lengths = trigram_ids(text, fast.ascii_table)
    assert flat.dtype == np.int64
    assert (flat.tolist(), lengths.tolist()) == _flat_reference(featurizer, texts)


def test_sentences_read_elsewhere_are_left_out_and_patched(featurizer):
    fast = featurizer.fast_ids
    texts = [*_ascii_fuzz(30, 5), *READ_ELSEWHERE, *_ascii_fuzz(30, 6)]
    _, left = trigram_text(texts, fast.classes, fast._cuts)
    assert left == list(range(30, 30 + len(READ_ELSEWHERE)))
    for batch in (texts, texts[::-1], READ_ELSEWHERE):
        flat, lengths = fast(batch)
        assert (flat.tolist(), lengths.tolist()) == _flat_reference(featurizer, batch)
        chunked = ChunkStore.__call__(fast, batch)  # the chunk path agrees too
        assert (chunked[0].tolist(), chunked[1].tolist()) == (flat.tolist(), lengths.tolist())
    assert [len(x) for x in (fast([]))] == [0, 0]


def test_cold_and_warm_chunk_cuts_agree(featurizer):
    fast = featurizer.fast_ids
    texts = _ascii_fuzz(300, 9)
    fast.clear()
    cold = fast(texts)
    warm = fast(texts)
    for a, b in zip(cold, warm, strict=True):
        np.testing.assert_array_equal(a, b)


def test_cut_places():
    words = ["do", "n't", "t-shirt", ".", ".", "x"]
    offsets, counts = cut_places(words, np.array([2, 0, 1, 2, 1]))  # "don't", "", "t-shirt", "..", "x"
    assert offsets.tolist() == [2, 1] and counts.tolist() == [1, 0, 0, 1, 0]

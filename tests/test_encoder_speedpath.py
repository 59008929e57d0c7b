"""The batched, cached token-id fast path (paranmt_hf.speedpath) gives exactly the tokenizer's ids, and ``encode``
gives exactly the model's forward on them."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from paranmt_hf import build_encoder

CORPUS = [
    "A man is playing a guitar.",
    "A woman is slicing an onion.",
    "I don't think it's 3.5 dollars.",
    "Two dogs run in the park!",
    "The coal-colored shadows spread.",
    "Café owners in São Paulo say ΣΟΦΙΑ is naïve.",
] * 3
TRICKY = [
    "",
    "   ",
    "A man plays the guitar.",
    "[UNK] is [PAD] here",
    "nul\x00byte",
    "meta▁space ▁lead",
    "sep\x1cfile\x1fchars",
    "tabs\tand\nnewlines\r\n",
    " leading and trailing ",
    "double  space",
    "ΣΑΣ İstanbul ǅemal",
    "e\u0301 combining, ﬁ ligature, ① circled",
    "nbsp\u00a0and\u2003em\u3000ideographic",
    "emoji \U0001f600 and more",
    "DON'T won't they'll",
    "x",
]
ALPHABET = list("aAbBzZ09 .,'-_!?\t\n") + ["é", "Σ", "ß", "İ", "\u00a0", "\x1c", "\x00", "▁", "ﬁ", "\u0301", "[UNK]"]


def _fuzz(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 25))) for _ in range(n)]


@pytest.fixture(scope="module", params=["word", "sp", "trigram"])
def encoder(request):
    extra = {"vocab_size": 60} if request.param == "sp" else {}
    return build_encoder(request.param, CORPUS, embedding_dim=8, seed=3, **extra)


def _reference(encoder, sentences):
    ids = encoder._reference_ids(sentences)
    return [t for x in ids for t in x], [len(x) for x in ids]


def test_fast_path_is_used(encoder):
    assert encoder._fast_ids(), "word/sp/trigram tokenizers must take the fast path"


@pytest.mark.parametrize("sentences", [TRICKY, CORPUS, _fuzz(300), _fuzz(300, seed=1)[::-1]])
def test_fast_ids_equal_tokenizer_ids(encoder, sentences):
    flat, lengths = encoder.flat_token_ids(sentences)
    assert flat.dtype == np.int64 and lengths.dtype == np.int64
    assert (flat.tolist(), lengths.tolist()) == _reference(encoder, sentences)


def test_each_sentence_alone_and_ascii_only_batches(encoder):
    for s in TRICKY + _fuzz(50, seed=2):
        flat, lengths = encoder.flat_token_ids([s])
        assert (flat.tolist(), lengths.tolist()) == _reference(encoder, [s]), repr(s)
    ascii_batch = [s for s in TRICKY + CORPUS if s.isascii()]
    flat, lengths = encoder.flat_token_ids(ascii_batch)
    assert (flat.tolist(), lengths.tolist()) == _reference(encoder, ascii_batch)


def test_cold_and_warm_cache_agree(encoder):
    sentences = _fuzz(200, seed=5) + CORPUS
    encoder._fast_ids().clear()
    cold = encoder.flat_token_ids(sentences)
    warm = encoder.flat_token_ids(sentences)
    np.testing.assert_array_equal(cold[0], warm[0])
    np.testing.assert_array_equal(cold[1], warm[1])


def test_token_ids_lists(encoder):
    assert encoder.token_ids(TRICKY) == encoder._reference_ids(TRICKY)
    assert encoder.token_ids([]) == []


def test_encode_equals_model_forward_exactly(encoder):
    sentences = TRICKY + _fuzz(100, seed=7)
    ids = encoder._reference_ids(sentences)
    width = max(1, max(map(len, ids)))
    padded = torch.zeros(len(ids), width, dtype=torch.long)
    mask = torch.zeros(len(ids), width, dtype=torch.long)
    for row, x in enumerate(ids):
        padded[row, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[row, : len(x)] = 1
    with torch.no_grad():
        expected = encoder.model(input_ids=padded, attention_mask=mask).pooler_output.numpy()
    for batch_size in (1, 7, 8192):
        got = encoder.encode(sentences, batch_size=batch_size, show_progress_bar=False)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    flat = encoder.encode(sentences, batch_size=8192)
    lengths = torch.tensor([len(x) for x in ids])
    offsets = torch.cumsum(lengths, 0) - lengths
    with torch.no_grad():
        bag = encoder.model(input_ids=torch.tensor([t for x in ids for t in x]), offsets=offsets).pooler_output
    np.testing.assert_array_equal(flat, bag.numpy())  # the flat layout is exactly what encode runs


def test_normalize_matches_torch(encoder):
    sentences = CORPUS + TRICKY
    raw = encoder.encode(sentences, convert_to_numpy=False)
    normed = encoder.encode(sentences, normalize=True, convert_to_numpy=False)
    torch.testing.assert_close(normed, torch.nn.functional.normalize(raw, dim=-1), rtol=0, atol=0)


def test_other_tokenizers_take_the_reference_path():
    combo = build_encoder("trigram+word", CORPUS, embedding_dim=4)
    assert combo._fast_ids() is False
    assert combo.token_ids(TRICKY) == combo._reference_ids(TRICKY)


def test_encode_restores_torch_threads(encoder):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        encoder.encode(CORPUS)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)

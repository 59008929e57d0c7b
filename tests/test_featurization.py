"""The batched, cached token-id fast path (paranmt_hf/model/token_ids.py, used by modeling/featurization_paranmt.py)
gives exactly the tokenizer's ids for every kind (word, sp, WordPiece subword, trigram, combinations), and ``encode``
gives exactly the model's forward on them."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from _corpus import SENTENCES as ENGLISH

from paranmt_hf import ParaNMTConfig, ParaNMTEncoder, ParaNMTModel, build_encoder
from paranmt_hf.modeling.featurization_paranmt import reference_token_ids

CORPUS = [*ENGLISH, "Café owners in São Paulo say ΣΟΦΙΑ is naïve."] * 3
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


def wordpiece_backend():
    """A BERT-style WordPiece tokenizer (BertNormalizer, BertPreTokenizer, ## pieces)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "man", "play", "##s", "##ing", "the", "gui", "##tar",
              ".", ",", "'", "!", "t", "##he", "d", "##o", "##g", "caf", "##e", "é", "σ", "##ο", "1", "##2", "3", "x"]
    backend = Tokenizer(models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]",
                                         max_input_chars_per_word=12))
    backend.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2),
                                                                                                     ("[SEP]", 3)])
    return backend


def wordpiece_encoder() -> ParaNMTEncoder:
    """The WordPiece tokenizer of :func:`wordpiece_backend` with an averaging model."""
    from transformers import PreTrainedTokenizerFast

    backend = wordpiece_backend()
    pieces = backend.get_vocab_size()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]")
    model = ParaNMTModel(ParaNMTConfig(kind="sp", vocab_size=pieces, embedding_dim=8))
    return ParaNMTEncoder(model, tokenizer)


KINDS = ["word", "sp", "trigram", "subword", "trigram+word", "sp+trigram", "trigram+subword"]


@pytest.fixture(scope="module", params=KINDS)
def encoder(request):
    if request.param == "subword":
        return wordpiece_encoder()
    if request.param == "trigram+subword":  # BertNormalizer (accents stripped) next to plain lower-casing
        return build_encoder("trigram+subword", CORPUS, embedding_dim=8, seed=3, subword_tokenizer=wordpiece_backend())
    extra = {"vocab_size": 60} if "sp" in request.param else {}
    return build_encoder(request.param, CORPUS, embedding_dim=8, seed=3, **extra)


def _reference(encoder, sentences):
    ids = reference_token_ids(encoder.tokenizer, sentences)
    return [t for x in ids for t in x], [len(x) for x in ids]


def test_fast_path_is_used(encoder):
    assert encoder.featurizer.fast_ids is not None, "every kind paranmt_hf builds must take the fast path"


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
    encoder.featurizer.fast_ids.clear()
    cold = encoder.flat_token_ids(sentences)
    warm = encoder.flat_token_ids(sentences)
    np.testing.assert_array_equal(cold[0], warm[0])
    np.testing.assert_array_equal(cold[1], warm[1])


def test_token_ids_lists(encoder):
    assert encoder.token_ids(TRICKY) == encoder.featurizer.reference_ids(TRICKY)
    assert encoder.token_ids([]) == []


def test_encode_equals_model_forward_exactly(encoder):
    sentences = TRICKY + _fuzz(100, seed=7)
    ids = reference_token_ids(encoder.tokenizer, sentences)
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
    raw = encoder.encode(sentences, convert_to_tensor=True)
    normed = encoder.encode(sentences, normalize_embeddings=True, convert_to_tensor=True)
    torch.testing.assert_close(normed, torch.nn.functional.normalize(raw, dim=-1), rtol=0, atol=1e-6)


def test_other_tokenizers_take_the_reference_path():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({"[PAD]": 0, "[UNK]": 1, "a": 2, "man": 3}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()  # not a configuration the fast path reproduces
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]")
    encoder = ParaNMTEncoder(ParaNMTModel(ParaNMTConfig(kind="word", vocab_size=4, embedding_dim=4)), tokenizer)
    assert encoder.featurizer.fast_ids is None
    assert encoder.token_ids(["a man", "A MAN x", ""]) == [[2, 3], [1, 1, 1], []]


@pytest.mark.parametrize("kind", ["trigram", "trigram+word"])
def test_tokenizer_call_gives_the_model_ids(kind):
    tokenizer = build_encoder(kind, CORPUS, embedding_dim=4).tokenizer
    texts = TRICKY + _fuzz(60, seed=9)
    assert tokenizer(texts)["input_ids"] == [tokenizer.encode_ids(t) for t in texts]


def test_padded_and_flat_inputs_give_the_same_embeddings_with_max_seq_length():
    encoder = build_encoder("trigram+word", CORPUS, embedding_dim=4, seed=1)
    texts = TRICKY + CORPUS
    for max_len in (None, 1, 4):
        encoder.model.config.max_seq_length = max_len
        flat = encoder.model(**encoder.featurizer(texts)).pooler_output
        batch = encoder.tokenizer(texts, padding=True, return_tensors="pt")
        padded = encoder.model(**batch).pooler_output
        torch.testing.assert_close(flat, padded, rtol=0, atol=1e-6)
    encoder.model.config.max_seq_length = None


def test_encode_restores_torch_threads(encoder):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        encoder.encode(CORPUS)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_combination_features_carry_component_lengths_that_change_nothing():
    encoder = build_encoder("trigram+word", CORPUS, embedding_dim=4, seed=2)
    texts = TRICKY + _fuzz(80, seed=11)
    features = encoder.featurizer(texts)
    assert features["component_lengths"].shape == (len(texts), 2)
    assert int(features["component_lengths"].sum()) == features["input_ids"].shape[0]
    with torch.no_grad():
        sliced = encoder.model(**features).pooler_output
        masked = encoder.model(input_ids=features["input_ids"], offsets=features["offsets"]).pooler_output
        torch.testing.assert_close(sliced, masked, rtol=0, atol=0)
        wrong = features["component_lengths"].flip(1)
        with pytest.raises(ValueError):
            encoder.model(input_ids=features["input_ids"], offsets=features["offsets"], component_lengths=wrong)


@pytest.mark.parametrize("kind", ["trigram", "trigram+word", "trigram+subword"])
def test_ids_stay_exact_when_the_caches_start_over(monkeypatch, kind):
    import paranmt_hf.model.token_ids as token_ids

    monkeypatch.setattr(token_ids, "_MAX_ENTRIES", 5)  # start over every few chunks, mid-batch included
    extra = {"subword_tokenizer": wordpiece_backend()} if "subword" in kind else {}
    encoder = build_encoder(kind, CORPUS, embedding_dim=4, seed=1, **extra)
    for batch in (TRICKY, _fuzz(120, seed=13), CORPUS):
        flat, lengths = encoder.flat_token_ids(batch)
        assert (flat.tolist(), lengths.tolist()) == _reference(encoder, batch)


def test_sentencepiece_words_are_cached_whatever_their_position():
    """SentencePiece ids come from a cache per word (``"▁" + word``, tokenised once per batch): a word has the same
    pieces first in a sentence and after a space with the Metaspace rule the fast path accepts
    (``prepend_scheme="always"``), cold and warm; a rule under which the first word's pieces differ
    (``prepend_scheme="never"``) takes the reference path, which keeps them."""
    from tokenizers import Tokenizer, pre_tokenizers

    from paranmt_hf.model.token_ids import fast_token_ids, ids_to_flat

    encoder = build_encoder("sp", CORPUS, embedding_dim=8, seed=3, vocab_size=60)
    always = Tokenizer.from_str(encoder.tokenizer.backend_tokenizer.to_str())
    never = Tokenizer.from_str(always.to_str())
    never.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=True)
    texts = ["man plays", "a man plays the guitar", "guitar man man", "man", "the guitar", "guitar"]

    def reference(tokenizer):
        return lambda batch: [e.ids for e in tokenizer.encode_batch(list(batch), add_special_tokens=False)]

    ids = reference(always)(texts)
    assert ids[3] == ids[0][: len(ids[3])] == ids[2][len(ids[2]) - len(ids[3]) :]  # "man" first == "man" later
    fast = fast_token_ids(always)
    assert fast is not None
    for _ in range(2):  # cold, then warm
        flat, lengths = fast(texts)
        assert (flat.tolist(), lengths.tolist()) == tuple(x.tolist() for x in ids_to_flat(ids))
    first_differs = reference(never)(["man"]) != reference(never)(["a man"])[0][-len(reference(never)(["man"])[0]) :]
    assert first_differs, "the fixture must have a word whose pieces depend on its position"
    fast_never = fast_token_ids(never)
    if fast_never is not None:
        flat, lengths = fast_never(texts)
        assert (flat.tolist(), lengths.tolist()) == tuple(x.tolist() for x in ids_to_flat(reference(never)(texts)))


def test_ragged_store_keeps_each_entry_across_growth():
    """The chunk cache's ragged store (token ids, word cuts): entries appended batch by batch, past the first sizes of
    both the per-entry and the value arrays, are gathered back exactly, in any order and repeated, as int64."""
    from paranmt_hf.model.token_ids import Ragged

    rng = np.random.default_rng(5)
    store = Ragged(entries=1)
    expected: list[list[int]] = [[]]
    for size in (1, 700, 3, 1500, 40):  # entries per append: 2244 in all; values about 3 x 2244
        counts = rng.integers(0, 7, size=size)
        values = rng.integers(-(2**40), 2**40, size=int(counts.sum()))
        store.append(values, counts)
        ends = np.cumsum(counts)
        expected += [values[e - c : e].tolist() for c, e in zip(counts, ends, strict=True)]
    assert store.entries == len(expected) and store.used == sum(map(len, expected))
    ks = np.concatenate([rng.integers(0, len(expected), size=3000), [0, len(expected) - 1, 0]])
    values, counts = store.gather(ks)
    assert values.dtype == counts.dtype == np.int64
    assert counts.tolist() == [len(expected[k]) for k in ks]
    assert values.tolist() == [v for k in ks for v in expected[k]]
    empty_values, empty_counts = store.gather(np.zeros(0, dtype=np.int64))
    assert len(empty_values) == len(empty_counts) == 0

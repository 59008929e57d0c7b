"""``ParaNMTEncoder.encode`` / ``similarity`` take sentence-transformers' keywords and give its results:
the same call on ``SentenceTransformer(dir)`` returns the same thing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from paranmt_hf import ParaNMTEncoder, StaticEncoder, build_encoder

st = pytest.importorskip("sentence_transformers")

CORPUS = ["a man plays a guitar .", "a dog runs in the park .", "the cat sleeps .", "two men are talking ."] * 3
TEXTS = ["a man plays", "The DOG runs !", "", "zzz unknown words", "two cats are sleeping in the park"] * 3
CALLS = [{}, {"normalize_embeddings": True}, {"convert_to_tensor": True}, {"convert_to_numpy": False},
         {"precision": "int8"}, {"precision": "uint8"}, {"precision": "binary"}, {"precision": "ubinary"},
         {"truncate_dim": 3}, {"truncate_dim": 3, "normalize_embeddings": True}, {"prompt": "query : "},
         {"prompt_name": "query"}, {"batch_size": 2, "show_progress_bar": False}]


@pytest.fixture(scope="module", params=["word", "trigram+word"])
def saved(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / request.param.replace("+", "_")
    build_encoder(request.param, CORPUS, embedding_dim=8, seed=2).save_pretrained(path)
    return str(path)


def _same(ours, theirs):
    assert type(ours) is type(theirs)
    if isinstance(ours, list):
        assert len(ours) == len(theirs) and all(type(a) is type(b) for a, b in zip(ours, theirs, strict=True))
        ours, theirs = torch.stack(ours), torch.stack(theirs)
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.dtype == np.float32:
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
    else:  # quantized: one bucket apart at most, where float rounding falls on a bucket edge
        assert np.abs(ours.astype(np.int64) - theirs.astype(np.int64)).max() <= 1


@pytest.mark.parametrize("kwargs", CALLS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_encode_matches_sentence_transformers(saved, kwargs):
    ours = ParaNMTEncoder.from_pretrained(saved)
    theirs = st.SentenceTransformer(saved, device="cpu", trust_remote_code=True)
    _same(ours.encode(TEXTS, **kwargs), theirs.encode(TEXTS, **kwargs))
    if "int8" not in str(kwargs):  # one text: int8 ranges need several embeddings
        _same(ours.encode(TEXTS[0], **kwargs), theirs.encode(TEXTS[0], **kwargs))
    if "convert_to_tensor" not in kwargs:  # the torch-free encoder: the same NumPy results
        static = StaticEncoder.from_pretrained(saved).encode(TEXTS, **kwargs)
        expected = theirs.encode(TEXTS, **kwargs)
        if isinstance(expected, list):
            static, expected = np.stack(static), torch.stack(expected).numpy()
        _same(np.asarray(static), np.asarray(expected))


def test_similarity_is_a_matrix_as_in_sentence_transformers(saved):
    ours = ParaNMTEncoder.from_pretrained(saved)
    theirs = st.SentenceTransformer(saved, device="cpu", trust_remote_code=True)
    a, b = ours.encode(TEXTS[:4]), ours.encode(TEXTS[1:4])
    for x, y in ((a, b), (torch.from_numpy(a), b), (a[0], b)):
        got, expected = ours.similarity(x, y), theirs.similarity(x, y)
        assert isinstance(got, torch.Tensor) and got.shape == expected.shape
        torch.testing.assert_close(got, expected, rtol=0, atol=1e-6)
    torch.testing.assert_close(ours.similarity_pairwise(a[1:], b), theirs.similarity_pairwise(a[1:], b), rtol=0,
                               atol=1e-6)
    static = StaticEncoder.from_pretrained(saved)
    np.testing.assert_allclose(static.similarity(a, b), theirs.similarity(a, b).numpy(), atol=1e-6)
    assert ours.similarity_fn_name == theirs.similarity_fn_name == "cosine"


def test_similarity_takes_embeddings_and_the_old_keyword_is_gone(saved):
    enc, static = ParaNMTEncoder.from_pretrained(saved), StaticEncoder.from_pretrained(saved)
    for model in (enc, static):
        with pytest.raises(TypeError, match=r"encode the texts first"):  # one clear sentence, not a shim
            model.similarity(TEXTS[:3], TEXTS[1:4])
        with pytest.raises(TypeError, match="normalize"):
            model.encode(TEXTS, normalize=True)
    pairs = enc.paired_text_similarity(TEXTS[:3], TEXTS[1:4])
    np.testing.assert_allclose(pairs, enc.similarity_pairwise(enc.encode(TEXTS[:3]), enc.encode(TEXTS[1:4])),
                               atol=1e-6)


def test_options_it_cannot_honour_are_refused(saved):
    enc = ParaNMTEncoder.from_pretrained(saved)
    with pytest.raises(ValueError, match="sentence embeddings only"):
        enc.encode(TEXTS, output_value="token_embeddings")
    with pytest.raises(ValueError, match="precision"):
        enc.encode(TEXTS, precision="float16")
    with pytest.raises(ValueError, match="prompt_name"):
        enc.encode(TEXTS, prompt_name="passage")
    with pytest.raises(ValueError, match="single embedding"):
        enc.encode(TEXTS[:1], precision="int8")
    with pytest.raises(ValueError, match="truncate_dim"):
        enc.encode(TEXTS, truncate_dim=0)

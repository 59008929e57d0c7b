"""The original ParaNMT-50M lookup of raw text (``LOOKUP_RULES["paranmt50m"]``) in tokenizers, new models included."""

from __future__ import annotations

import json

import numpy as np
import paranmt50m_original as orig
import pytest

from paranmt_hf import ParaNMTEncoder, build_encoder
from paranmt_hf.cli.main import main
from paranmt_hf.modeling.segmentation_paranmt import (
    paranmt50m_lookup,
    paranmt50m_trigrams,
    paranmt50m_words,
    py2_lower,
    strip_punctuation,
)
from paranmt_hf.modeling.tokenization_paranmt import ParaNMTTokenizer

CORPUS = ["A man is playing a guitar.", "A woman is slicing an onion!", "Two dogs run in the park, happily.",
          "The cat sleeps on the sofa; it's late.", "Children are playing football outside."] * 4
RAW = ["A MAN plays the guitar...", "dogs, cats and (onions)", "", "  a\tman  ", "zzz unseen «qqq»", "It's late."]


def test_py2_lower_is_python2_unicode_lower():
    """Values of Python 2.7's u"...".lower(): simple case mapping, no final sigma, İ -> i."""
    assert py2_lower("ΟΔΟΣ ΚΑΙ ΣΟΦΙΑ") == "οδοσ και σοφια"  # Python 3: "οδος και σοφια"
    assert py2_lower("İSTANBUL") == "istanbul"  # Python 3: "i̇stanbul" (9 characters)
    assert py2_lower("Hello, World") == "hello, world" and py2_lower("Ǆ") == "ǆ"
    for text in ("ΟΔΟΣ ΚΑΙ ΣΟΦΙΑ", "İSTANBUL", "Straße ǅ ẞ", "MIXED Case ÀÉÎ"):
        assert py2_lower(text) == orig.py2_lower(text)


def test_punctuation_and_lookup_order():
    assert strip_punctuation("«don't»—¿no?") == "dontno" and strip_punctuation("$5+3") == "$5+3"  # S* stays
    index = {"[PAD]": 0, "[UNK]": 1, "man": 2, "man,": 3, "it's": 4}
    assert paranmt50m_lookup(index, "MAN,", 1) == 3  # exact (lower-cased) match first
    assert paranmt50m_lookup(index, "Man!", 1) == 2  # then without punctuation
    assert paranmt50m_lookup(index, "It's", 1) == 4 and paranmt50m_lookup(index, "its", 1) == 1
    assert paranmt50m_lookup(index, "...", 1) == 1  # nothing left: unknown


def test_segmentation_is_example_py():
    assert paranmt50m_words("  A man,\tplays  ") == ["a", "man,", "plays"]
    assert paranmt50m_trigrams(" Hi,  yo ") == [" hi", "hi,", "i, ", ",  ", "  y", " yo", "yo "]
    assert paranmt50m_trigrams("") == [] and paranmt50m_trigrams("a") == [" a "]


@pytest.mark.parametrize("kind", ["word", "trigram", "trigram+word", "lstm"])
def test_new_models_can_use_the_original_lookup(kind, tmp_path):
    encoder = build_encoder(kind, CORPUS, embedding_dim=8, lookup="paranmt50m", seed=0)
    tok = encoder.tokenizer
    assert isinstance(tok, ParaNMTTokenizer)
    assert all(spec["lookup"] == "paranmt50m" for spec in tok.component_specs())
    assert encoder.featurizer.fast_ids is None  # the batched fast path leaves these rules to the tokenizer
    segs = tok.segmenters
    for seg in segs:  # the vocabulary is counted as the lookup reads text
        want = {w for s in CORPUS for w in (paranmt50m_words(s) if seg.to_json()["kind"] == "word"
                                            else paranmt50m_trigrams(s))}
        assert set(seg.vocab[2:]) == want
    ids = encoder.token_ids(RAW)  # the batched path: must give the reference ids
    for seg, offset in zip(segs, tok.offsets, strict=True):
        reference = orig.word_ids if seg.to_json()["kind"] == "word" else orig.trigram_ids
        words = {t: i for i, t in enumerate(seg.vocab)} | {orig.UNK: 1}
        for text, got in zip(RAW, ids, strict=True):
            mine = [i - offset for i in got if offset <= i < offset + len(seg.vocab)]
            assert mine == reference(text, words), (kind, text)
    encoder.save_pretrained(tmp_path, sentence_transformers=False)
    saved = json.load(open(tmp_path / "paranmt_tokenizer.json", encoding="utf-8"))
    assert all(c["lookup"] == "paranmt50m" for c in saved["components"])
    reloaded = ParaNMTEncoder.from_pretrained(tmp_path)
    np.testing.assert_allclose(reloaded.encode(RAW), encoder.encode(RAW), atol=1e-6)
    texts = [t for t in RAW if t]  # (transformers tokenises "" to no id; the model then embeds [UNK] all the same)
    batch = reloaded.tokenizer(texts, padding=True)  # the transformers call path gives the same ids
    got = [[i for i, m in zip(row, mask, strict=True) if m]
           for row, mask in zip(batch["input_ids"], batch["attention_mask"], strict=True)]
    assert got == [i for t, i in zip(RAW, ids, strict=True) if t]


def test_split_lookup_keeps_the_fast_path():
    encoder = build_encoder("trigram", CORPUS, embedding_dim=4)
    assert "lookup" not in encoder.tokenizer.component_specs()[0]
    assert encoder.featurizer.fast_ids is not None


def test_bad_lookup_values_are_refused():
    with pytest.raises(ValueError, match="lookup"):
        build_encoder("word", CORPUS, lookup="nltk")
    with pytest.raises(ValueError, match="lookup"):
        ParaNMTTokenizer(components=[{"kind": "word", "vocab": ["[PAD]", "[UNK]", "a"], "lookup": "split"}])
    with pytest.raises(ValueError, match="lookup"):
        ParaNMTTokenizer(components=[{"kind": "trigram", "vocab": ["[PAD]", "[UNK]"], "lookup": "x"}])


def test_build_cli_lookup_and_peepholes(tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(CORPUS), encoding="utf-8")
    assert main(["build", "--kind", "bilstm", "--input", str(tmp_path / "c.txt"), "--embedding-dim", "6", "--lookup",
                 "paranmt50m", "--lstm-peepholes", "--output", str(tmp_path / "m")]) == 0
    config = json.load(open(tmp_path / "m" / "config.json"))
    assert config["lstm_peepholes"] is True
    spec = json.load(open(tmp_path / "m" / "paranmt_tokenizer.json"))["components"][0]
    assert spec["kind"] == "word" and spec["lookup"] == "paranmt50m" and "guitar." in spec["vocab"]

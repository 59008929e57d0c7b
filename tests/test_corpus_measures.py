"""The per-pair measures of EMNLP 2017 §5.5-5.7 (and the ParaNMT/PRAS columns), against values computed by hand
from the papers' definitions."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf.corpus.measures.registry import MEASURES, MeasureContext, compute_measures, get_measure

CAT_REF, CAT_HYP = "The cat sat on the mat", "the cat is on the mat"


def column(name: str, a: list[str], b: list[str], context: MeasureContext | None = None) -> list[float]:
    return get_measure(name)(a, b, context).tolist()


def test_ngram_overlaps_shared_over_the_shorter_side() -> None:
    # unigrams (6 vs 6, a tie walks the reference): the cat [sat] on the mat -> 5/6
    # bigrams: the-cat, [cat-sat], [sat-on], on-the, the-mat -> 3/5; trigrams: only on-the-mat -> 1/4
    assert column("unigram_overlap", [CAT_REF], [CAT_HYP]) == [pytest.approx(5 / 6)]
    assert column("bigram_overlap", [CAT_REF], [CAT_HYP]) == [pytest.approx(3 / 5)]
    assert column("trigram_overlap", [CAT_REF], [CAT_HYP]) == [pytest.approx(1 / 4)]


def test_ngram_overlap_counts_tokens_not_types_and_is_not_clipped() -> None:
    # the reference has fewer unigrams (3): a, a found, b not -> 2/3 (types would give 1/2)
    assert column("unigram_overlap", ["a a b"], ["a a a a"]) == [pytest.approx(2 / 3)]
    # the translation is shorter (2 vs 4): both "x" occurrences are found, unclipped: 2/2
    assert column("unigram_overlap", ["x y z w"], ["x x"]) == [1.0]
    # no bigram on the shorter side: 0
    assert column("bigram_overlap", ["one"], ["one two three"]) == [0.0]


def test_overlap_uses_the_papers_lowercased_nltk_tokens() -> None:
    assert column("unigram_overlap", ["I don't know."], ["i do n't know ."]) == [1.0]
    assert column("unigram_overlap", ["I don't know."], ["i do n't know ."],
                  MeasureContext(tokenizer="whitespace")) == [pytest.approx(1 / 3)]  # "i" of i/don't/know.


def test_smoothed_bleu_is_nakov_et_al() -> None:
    from paranmt_hf.corpus.measures.bleu import smoothed_bleu

    # Moses' unit test of smoothedSentenceBleu(stats, 1, smoothBP=true): 6/6, 4/5, 2/4, 1/3 matches, ref length 7
    assert smoothed_bleu([6, 4, 2, 1], [6, 5, 4, 3], 6, 7) == pytest.approx(0.5067, abs=1e-4)
    # hypothesis "the cat is on the mat" vs reference "The cat sat on the mat" (lower-cased 13a tokens):
    # clipped matches 5/6, 3/5, 1/4, 0/3; hyp length 6, ref length 6 -> smoothed +1 everywhere
    expected = (6 / 7 * 4 / 6 * 2 / 5 * 1 / 4) ** 0.25 * math.exp(1 - 7 / 6)
    assert column("bleu", [CAT_REF], [CAT_HYP]) == [pytest.approx(expected)]
    # an exact copy still pays the smoothed brevity penalty: exp(1 - 5/4) for 4 tokens
    assert column("bleu", ["a b c d"], ["a b c d"]) == [pytest.approx(math.exp(-0.25))]
    # the direction matters: the hypothesis is the translation (second side)
    long, short = "a b c d e f", "a b c"
    assert column("bleu", [long], [short]) != column("bleu", [short], [long])
    assert column("bleu", ["a b"], [""]) == [0.0]


def test_lengths_are_whitespace_tokens() -> None:
    a, b = ["one two three", "x"], ["four five", "y z w v"]
    assert column("translation_length", a, b) == [2, 4]
    assert column("reference_length", a, b) == [3, 1]
    assert column("mean_length", a, b) == [2.5, 2.5]
    assert column("max_length", a, b) == [3, 4]


ARPA = """\\data\\
ngram 1=5
ngram 2=1

\\1-grams:
-1.0\t<unk>\t0
-99\t<s>\t-0.2
-0.5\t</s>\t0
-0.5\ta\t-0.1
-0.7\tb\t0

\\2-grams:
-0.2\ta b

\\end\\
"""


def test_lm_perplexity_of_the_translation_counts_end_of_sentence(tmp_path: Path) -> None:
    pytest.importorskip("kenlm")
    model = tmp_path / "tiny.arpa"
    model.write_text(ARPA, encoding="utf-8")
    context = MeasureContext(language_model=str(model))
    # "A b" -> a b (lower-cased): log10 p(a|<s>) = -0.2 (backoff of <s>) - 0.5, p(b|a) = -0.2, p(</s>|b) = -0.5
    # "b a": p(b|<s>) = -0.2 - 0.7, p(a|b) = -0.5, p(</s>|a) = -0.1 - 0.5
    # "c": p(<unk>|<s>) = -0.2 - 1.0, p(</s>|<unk>) = -0.5
    got = column("lm_perplexity", ["ref 1", "ref 2", "ref 3"], ["A b", "b a", "c"], context)
    assert got == pytest.approx([10 ** (1.4 / 3), 10 ** (2.0 / 3), 10 ** (1.7 / 2)])


def test_reference_probability_is_the_classifier_on_the_translation(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    from paranmt_hf.corpus.measures.reference_classifier import ReferenceClassifier, train_reference_classifier

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(200)]
    refs = [" ".join(rng.choice(words, size=8)) for _ in range(400)]
    # translations repeat their first word twice more (E17 §5.6.1: translations repeat words)
    hyps = [f"{r.split()[0]} {r.split()[0]} {r}" for r in refs]
    # a second candidate of each n-best list, and an identical pair, which is left out
    classifier = train_reference_classifier(refs + refs + [refs[0]], hyps + [h + " ." for h in hyps] + [refs[0]],
                                            validation=50, test=50, c_grid=(1.0,))
    assert classifier.report["identical_pairs_left_out"] == 1
    assert classifier.report["split"] == {"test": 50, "validation": 50, "train": 300}
    assert classifier.report["test"]["accuracy"] > 0.9
    classifier.save(tmp_path / "clf")
    context = MeasureContext(classifier=str(tmp_path / "clf"))
    probability = column("reference_probability", refs[:5], hyps[:5], context)  # scored: the translations
    assert probability == pytest.approx(ReferenceClassifier.load(tmp_path / "clf").reference_probability(hyps[:5]))
    assert np.mean(probability) < 0.5 < np.mean(column("reference_probability", hyps[:5], refs[:5], context))
    with pytest.raises(FileNotFoundError, match="not a reference-classifier folder"):
        ReferenceClassifier.load(tmp_path)


def test_paraphrase_score_is_the_models_cosine(tmp_path: Path) -> None:
    from paranmt_hf import build_encoder

    encoder = build_encoder("word", ["a b c d e f"] * 3, embedding_dim=6, seed=1)
    a, b = ["a b", "c d"], ["a b", "e f"]
    got = column("paraphrase_score", a, b, MeasureContext(encoder=encoder))
    ea, eb = encoder.encode(a, normalize_embeddings=True), encoder.encode(b, normalize_embeddings=True)
    assert got == pytest.approx([float(np.dot(ea[0], eb[0])), float(np.dot(ea[1], eb[1]))], abs=1e-6)
    assert got[0] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="needs a model"):
        column("paraphrase_score", a, b)
    encoder.save_pretrained(tmp_path / "model")  # a folder (a path string) loads the model
    assert column("paraphrase_score", a, b, MeasureContext(encoder=str(tmp_path / "model"))) == pytest.approx(got)


def test_english_needs_both_sides_english() -> None:
    en = "I do not think we should go to the party tonight."
    fr = "Je ne pense pas que nous devrions aller à la fête ce soir."
    assert column("english", [en, en, fr], [en, fr, en]) == [1.0, 0.0, 0.0]


def test_translation_cost_comes_from_back_translation_and_given_values_are_kept() -> None:
    with pytest.raises(ValueError, match="backtranslate"):
        column("translation_cost", ["a"], ["b"])
    got = compute_measures(["translation_cost", "translation_length"], ["a", "b"], ["c d", "e"],
                           given={"translation_cost": [0.5, 0.25], "translation_length": [7.0, None]})
    assert got["translation_cost"].tolist() == [0.5, 0.25]
    assert got["translation_length"].tolist() == [7.0, 1.0]  # the None is computed, the given value kept
    with pytest.raises(ValueError, match="unknown measure 'nope'"):
        get_measure("nope")


def test_every_measure_is_documented() -> None:
    for spec in MEASURES.values():
        assert spec.description and spec.source and spec.reason
        assert (spec.compute is None) == (spec.given_by is not None)

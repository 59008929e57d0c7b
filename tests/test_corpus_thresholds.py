"""Filters as thresholds on columns: the generic ThresholdFilter, the papers' presets made of it, and the
`thresholds` entry of the filter registry (builder config, corpus filter)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.cli.main import main
from paranmt_hf.corpus.measures.registry import MEASURES, MeasureContext, MeasureSpec
from paranmt_hf.corpus.selection.filters import (
    FILTERS,
    ACL2018Filter,
    PRASFilter,
    ThresholdFilter,
    parse_bound,
)

REFS = ["a b c d e", "a b c d e", "one two", "x y z", "p q r s t u v w x y z"]
HYPS = ["a b c d e", "a b x y e", "three four", "x y z w", "p q"]
# unigram overlap:       1.0        0.6          0.0           1.0        1.0
# translation length:    5          5            2             4          2


def test_bounds_are_inclusive_open_sides_allowed_and_reasons_counted() -> None:
    keep = ThresholdFilter({"translation_length": (None, 4), "unigram_overlap": (0.0, 0.999)},
                           MeasureContext(tokenizer="whitespace"))
    selection = keep.select(REFS, HYPS)
    assert selection.keep.tolist() == [False, False, True, False, False]
    assert selection.counts() == {"kept": 1, "length": 2, "overlap": 2}
    # the overlap was computed only for the pairs that passed the length test
    assert selection.columns["unigram_overlap"] == [None, None, 0.0, 1.0, 1.0]
    assert ThresholdFilter({"unigram_overlap": (0.6, 0.6)}, MeasureContext(tokenizer="whitespace")).select(
        REFS, HYPS).keep.tolist() == [False, True, False, False, False]


def test_given_columns_are_used_and_only_missing_values_computed() -> None:
    calls: list[int] = []
    spy = MeasureSpec("translation_length", "spy", "-", "length",
                      lambda a, b, c: (calls.append(len(a)), np.array([len(t.split()) for t in b], float))[1])
    keep = ThresholdFilter({"translation_length": (3, None), "translation_cost": (None, 0.5)})
    original = MEASURES["translation_length"]
    MEASURES["translation_length"] = spy
    try:
        selection = keep.select(REFS, HYPS, columns={"translation_cost": [0.1, 0.9, 0.1, 0.2, 0.3],
                                                     "translation_length": [5, None, 2, 4, 2]})
    finally:
        MEASURES["translation_length"] = original
    # the cost is given in full, so it is tested first; then the one missing length of a pair still in
    assert calls == [] and selection.keep.tolist() == [True, False, False, True, False]
    selection = keep.select(REFS, HYPS, columns={"translation_cost": [0.1, 0.1, 0.1, 0.1, 0.1]})
    assert selection.keep.tolist() == [True, True, False, True, False]
    with pytest.raises(ValueError, match="backtranslate"):
        keep.select(REFS, HYPS)


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown measure"):
        ThresholdFilter({"nope": (0, 1)})
    with pytest.raises(ValueError, match="empty"):
        ThresholdFilter({"bleu": (0.9, 0.1)})
    assert parse_bound("lm_perplexity=:100") == ("lm_perplexity", None, 100.0)
    assert parse_bound("unigram_overlap=0.1:0.7") == ("unigram_overlap", 0.1, 0.7)
    for bad in ("unigram_overlap", "unigram_overlap=0.1", "unigram_overlap=a:b", "nope=0:1"):
        with pytest.raises(ValueError):
            parse_bound(bad)


def test_a_nan_value_fails_every_bound_and_is_counted_under_its_reason() -> None:
    nan = float("nan")
    costs = [0.1, nan, 0.2, nan, 0.3]
    for bound in ((None, 0.5), (0.0, None), (None, None), (0.0, 1.0)):
        selection = ThresholdFilter({"translation_cost": bound}).select(REFS, HYPS,
                                                                        columns={"translation_cost": costs})
        assert selection.keep.tolist() == [True, False, True, False, True], bound
        assert selection.counts() == {"kept": 3, "cost": 2}
    # a NaN that a measure computes fails too
    spy = MeasureSpec("bleu", "spy", "-", "bleu", lambda a, b, c: np.array([nan if "x" in t else 0.5 for t in b]))
    original = MEASURES["bleu"]
    MEASURES["bleu"] = spy
    try:
        selection = ThresholdFilter({"bleu": (None, 1.0), "translation_length": (None, 100)}).select(REFS, HYPS)
    finally:
        MEASURES["bleu"] = original
    assert selection.keep.tolist() == [True, False, True, False, True] and selection.counts()["bleu"] == 2
    # one example, as the builder calls it: a NaN paraphrase score fails the PRAS and ACL-2018 score bounds
    example = {"reference": "a b c d e f", "paraphrase": "u v w x y z", "paraphrase_score": nan,
               "reference_length": 6, "paraphrase_length": 6}
    assert not PRASFilter(require_english=False, tokenizer="whitespace")(dict(example))
    assert not ACL2018Filter(-1.0)(dict(example)) and ACL2018Filter(-1.0)({**example, "paraphrase_score": 0.1})
    with pytest.raises(ValueError, match="numbers or None"):
        ThresholdFilter({"bleu": (nan, 1.0)})
    with pytest.raises(ValueError, match="numbers or None"):
        ThresholdFilter({"bleu": parse_bound("bleu=0:nan")[1:]})


def test_sampling_is_a_hash_of_the_pair_and_seed() -> None:
    refs = [f"w{i} a b" for i in range(400)]
    first = ThresholdFilter({"max_length": (None, 30)}, sample_rate=0.25, seed=3).select(refs, refs)
    again = ThresholdFilter({"max_length": (None, 30)}, sample_rate=0.25, seed=3).select(refs[::-1], refs[::-1])
    assert first.keep.tolist() == again.keep.tolist()[::-1]
    assert 60 < first.keep.sum() < 140 and first.counts()["sampled out"] == 400 - first.keep.sum()


def test_the_papers_presets_are_threshold_filters() -> None:
    pras = PRASFilter(require_english=False, tokenizer="whitespace").threshold_filter()
    assert pras.bounds == {"paraphrase_score": (0.4, 1.0), "mean_length": (5.0, 40.0),
                           "trigram_overlap": (None, 0.7)}
    assert "english" in PRASFilter().threshold_filter().bounds
    acl = ACL2018Filter(0.8, None, max_tokens=30).threshold_filter()
    assert acl.bounds == {"paraphrase_score": (0.8, None), "max_length": (None, 30)}
    assert set(FILTERS) >= {"pras", "acl2018", "thresholds"}


def _write(path: Path) -> Path:
    rows = [(r, h, "0.9") for r, h in zip(REFS, HYPS, strict=True)]
    path.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in rows), encoding="utf-8")
    return path


def test_thresholds_through_the_builder_and_corpus_filter(tmp_path: Path) -> None:
    path = _write(tmp_path / "pairs.txt")
    rows = list(load_paranmt("filtered", str(path), filter="thresholds", tokenizer="whitespace",
                             bounds=(("translation_length", None, 4), ("unigram_overlap", 0.0, 0.999))))
    assert [(r["reference"], r["paraphrase"]) for r in rows] == [("one two", "three four")]
    with pytest.raises(ValueError, match="needs bounds"):
        list(load_paranmt("filtered", str(path), filter="thresholds"))
    out = tmp_path / "kept.tsv"
    assert main(["corpus", "filter", str(path), "-o", str(out), "--filter", "thresholds", "--tokenizer",
                 "whitespace", "--bound", "translation_length=:4", "--bound", "unigram_overlap=0:0.999",
                 "--workers", "1", "--quiet"]) == 0
    assert out.read_text(encoding="utf-8") == "one two\tthree four\t0.9\n"

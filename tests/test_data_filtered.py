from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.corpus.selection.filters import ACL2018Filter, PRASFilter, fold_bounds

WORDS = [f"w{i}" for i in range(60)]


def _side(n: int, offset: int = 0) -> str:
    return " ".join(WORDS[offset : offset + n])


def _write(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in rows), encoding="utf-8")
    return path


LOW = _side(8), _side(8, 30)  # no shared trigram, mean length 8

PRAS_CASES = [  # (reference, paraphrase, score, kept by the default PRAS thresholds)
    (*LOW, "0.4", True),
    (*LOW, "0.39999", False),
    (*LOW, "1.0", True),
    (*LOW, "1.0001", False),
    (_side(12), _side(9) + " x y z", "0.8", True),  # overlap exactly 7/10 = 0.7
    (_side(12), _side(10) + " x y", "0.8", False),  # overlap 8/10
    (_side(5), _side(5, 30), "0.8", True),  # mean length 5
    (_side(4), _side(5, 30), "0.8", False),  # mean length 4.5
    (_side(40), _side(40, 1), "0.8", False),  # overlap 1.0
    (_side(40), " ".join(reversed(WORDS[:40])), "0.8", True),  # mean length 40, overlap 0
    (_side(40), " ".join(reversed(WORDS[:41])), "0.8", False),  # mean length 40.5
]


def test_pras_thresholds_are_inclusive_like_extract_data(tmp_path: Path) -> None:
    path = _write(tmp_path / "para-nmt-50m.txt", [c[:3] for c in PRAS_CASES])
    rows = list(load_paranmt("filtered", str(path), require_english=False, tokenizer="whitespace"))
    kept = [(c[0], c[1], c[2]) for c in PRAS_CASES if c[3]]
    assert [(r["reference"], r["paraphrase"]) for r in rows] == [(a, b) for a, b, _ in kept]
    assert [r["paraphrase_score"] for r in rows] == pytest.approx([float(s) for _, _, s in kept])
    assert rows[2]["trigram_overlap"] == pytest.approx(0.7)


def test_pras_thresholds_are_parameters(tmp_path: Path) -> None:
    path = _write(tmp_path / "para-nmt-50m.txt", [c[:3] for c in PRAS_CASES])
    rows = list(load_paranmt("filtered", str(path), require_english=False, tokenizer="whitespace",
                             sim_low=0.7, max_overlap=0.5, min_mean_tokens=6, max_mean_tokens=100))
    scores = [r["paraphrase_score"] for r in rows]
    assert all(s >= 0.7 for s in scores) and all(r["trigram_overlap"] <= 0.5 for r in rows)
    assert len(rows) == 3  # LOW@1.0 and the two reversed 40-token cases (mean 40, 40.5)
    assert any(r["reference_length"] + r["paraphrase_length"] == 81 for r in rows)


def test_pras_language_filter_needs_both_sides_english(tmp_path: Path) -> None:
    en_a = "I do not think we should go to the party tonight."
    en_b = "I don't believe we ought to attend the party this evening."
    fr = "Je ne pense pas que nous devrions aller à la fête ce soir."
    de = "Ich glaube nicht, dass wir heute Abend zur Party gehen sollten."
    path = _write(tmp_path / "para-nmt-50m.txt", [(en_a, en_b, "0.8"), (fr, en_b, "0.8"), (en_a, de, "0.8"),
                                                   (fr, de, "0.8")])
    rows = list(load_paranmt("filtered", str(path)))
    assert [(r["reference"], r["paraphrase"]) for r in rows] == [(en_a, en_b)]
    assert len(list(load_paranmt("filtered", str(path), require_english=False))) == 4


def test_pras_filter_object_matches_extract_data_semantics() -> None:
    keep = PRASFilter(require_english=False, tokenizer="whitespace")
    example = {"reference": _side(8), "paraphrase": _side(8, 30), "paraphrase_score": 0.5,
               "reference_length": 8, "paraphrase_length": 8}
    assert keep(example) and example["trigram_overlap"] == 0.0
    assert not keep({**example, "paraphrase_score": float("0.3999999")})


def test_fold_bounds_top_two_tenths() -> None:
    scores = np.arange(1, 21) / 20  # 0.05 .. 1.0
    assert fold_bounds(scores) == (pytest.approx(0.85), pytest.approx(1.0))
    assert fold_bounds(scores, folds=(1,)) == (pytest.approx(0.05), pytest.approx(0.10))
    with pytest.raises(ValueError):
        fold_bounds(scores, folds=(11,))
    with pytest.raises(ValueError, match="1 of the 20 scores are NaN"):  # not a NaN upper bound that keeps all
        fold_bounds(np.where(scores == 0.5, np.nan, scores))


def test_acl2018_recipe_top_folds_and_30_tokens(tmp_path: Path) -> None:
    rows = [(_side(10), _side(10, 20), f"{i / 20:.2f}") for i in range(1, 21)]
    rows[18] = (_side(31), _side(10, 20), "0.95")  # a selected score, but a side longer than 30 tokens
    rows[17] = (_side(30), _side(30, 20), "0.90")  # exactly 30 tokens: kept
    path = _write(tmp_path / "para-nmt-50m.txt", rows)
    got = list(load_paranmt("filtered", str(path), filter="acl2018"))
    assert [r["paraphrase_score"] for r in got] == pytest.approx([0.85, 0.90, 1.0])
    explicit = list(load_paranmt("filtered", str(path), filter="acl2018", min_score=0.5, max_tokens=40))
    assert len(explicit) == 11
    sampled = [r["paraphrase_score"] for r in load_paranmt("filtered", str(path), filter="acl2018", min_score=0.0,
                                                           sample_rate=0.5, seed=3)]
    again = [r["paraphrase_score"] for r in load_paranmt("filtered", str(path), filter="acl2018", min_score=0.0,
                                                         sample_rate=0.5, seed=3)]
    assert sampled == again and 0 < len(sampled) < 20


def test_acl2018_filter_requires_bounds() -> None:
    with pytest.raises(ValueError, match="min_score"):
        ACL2018Filter()({"paraphrase_score": 0.9, "reference_length": 3, "paraphrase_length": 3})


def test_unknown_filter_and_unknown_option(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.txt", [LOW + ("0.5",)])
    with pytest.raises(ValueError, match="unknown filter 'nope'"):
        list(load_paranmt("filtered", str(path), filter="nope"))
    explicit = list(load_paranmt("filtered", str(path), filter="acl2018", min_score=0.0, max_tokens=40))
    assert len(explicit) == 1
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['recipe'\]"):  # its name at an earlier commit
        list(load_paranmt("filtered", str(path), recipe="acl2018", min_score=0.0, max_tokens=40))

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paranmt_hf.cli.main import main
from paranmt_hf.corpus.output.lexicon import ParaphraseLexicon, evaluate_simlex

# "happy" is paraphrased by "glad"; "hong" / "kong" always share a sentence (high cross PMI, not paraphrases)
CORPUS = [
    ("i am happy today", "i am glad today", 0.9),
    ("she was happy", "she was glad", 0.8),
    ("they look happy now", "they seem glad now", 0.7),
    ("we flew to hong kong", "we went to hong kong by plane", 0.9),
    ("hong kong is big", "hong kong is large", 0.9),
    ("the dog barked", "the dog was barking", 0.85),
    ("the happy dog", "the glad hound", 0.2),  # below the 0.35 score cut
]


def records() -> list[dict]:
    return [{"text_a": a, "text_b": b, "score": s} for a, b, s in CORPUS]


def test_cross_and_adjusted_pmi() -> None:
    lex = ParaphraseLexicon.from_pairs(records())
    assert lex.pairs == 6  # the 0.2 pair is removed
    assert lex.score("happy", "elephant") is None
    assert lex.top("happy", 1, min_count=2)[0][0] == "glad"  # PMI favours rare words: the paper used >= 10
    # adjusted PMI penalises words that co-occur in single sentences: kong is not a paraphrase of hong
    assert lex.score("hong", "kong", "cross") > 0
    assert lex.score("hong", "kong") < lex.score("happy", "glad")
    assert lex.score("hong", "kong", "cross") - lex.score("hong", "kong") == pytest.approx(lex.ordinary_pmi("hong",
                                                                                                            "kong"))
    long_pairs = [{"text_a": " ".join(["w"] * 31), "text_b": "x", "score": 0.9}]
    assert ParaphraseLexicon.from_pairs(long_pairs).pairs == 0
    unscored = [{"text_a": "a b", "text_b": "a c", "score": s} for s in (None, float("nan"), 0.1, 0.9)]
    assert ParaphraseLexicon.from_pairs(unscored).pairs == 2  # no score passes the cut; NaN fails it, as 0.1 does
    with pytest.raises(ValueError):
        lex.score("a", "b", "ppdb")


def test_simlex_evaluation_and_cli(tmp_path: Path) -> None:
    simlex = tmp_path / "SimLex-999.txt"
    rows = [("happy", "glad", 9.0), ("hong", "kong", 1.0), ("dog", "barked", 2.0), ("happy", "elephant", 0.5)]
    simlex.write_text("word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\tconcQ\tAssoc(USF)\tSimAssoc333\tSD\n"
                      + "".join(f"{a}\t{b}\tN\t{s}\t1\t1\t1\t1\t1\t1\n" for a, b, s in rows))
    lex = ParaphraseLexicon.from_pairs(records())
    result = evaluate_simlex(lex, str(simlex))
    assert result["pairs"] == 4 and result["covered"] == 3
    # adjusted PMI orders the covered pairs as SimLex does (happy/glad > dog/barked > hong/kong): rho 1; all pairs:
    # the unseen happy/elephant gets the lowest seen score (ties with hong/kong): ranks 4,1.5,3,1.5 vs 4,2,3,1
    assert result["spearman_covered"] == pytest.approx(1.0)
    assert result["spearman_all"] == pytest.approx(3 / 10**0.5)
    assert evaluate_simlex(lex, str(simlex), "cross")["spearman_covered"] == pytest.approx(0.5)  # hong/kong high
    src = tmp_path / "pairs.tsv"
    src.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in CORPUS))
    out = tmp_path / "lex.json"
    assert main(["corpus", "lexicon", str(src), "--word", "happy", "--top", "3", "--min-count", "2",
                 "--simlex", str(simlex),
                 "--json", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert saved["top"]["happy"][0][0] == "glad"
    assert saved["simlex"]["adjusted"]["covered"] == 3
    with pytest.raises(ValueError, match="SimLex"):
        evaluate_simlex(lex, str(src))

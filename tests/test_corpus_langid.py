"""The batched language test answers as fastText's own per-sentence predict."""

from __future__ import annotations

import gzip
import itertools
import random
from pathlib import Path

import pytest

from paranmt_hf.corpus.text.langid import LanguageIdentifier


@pytest.fixture(scope="module")
def lid() -> LanguageIdentifier:
    return LanguageIdentifier()


def _texts(data_dir: Path) -> list[str]:
    texts = []
    for name in ["paranmt5m-sample-10k.tsv.gz", "bitext/tatoeba-en-es.tsv.gz", "bitext/tatoeba-en-fr.tsv.gz",
                 "bitext/tatoeba-en-de.tsv.gz", "bitext/multi30k-en-cs.tsv.gz"]:
        with gzip.open(data_dir / "train" / name, "rt", encoding="utf-8") as f:
            texts += [s for line in itertools.islice(f, 800) for s in line.rstrip("\n").split("\t")]
    rng = random.Random(0)
    texts += ["".join(rng.choice("abc xyz éü中文\u00a0\t\x00_label ") for _ in range(rng.randint(0, 30)))
              for _ in range(500)]
    texts += ["", " ", "ok", "OK.", "Hello!", "__label__en", "a\x00b", "ça va", "Mr. Smith", "I'm", "\u2028x"]
    return texts


@pytest.mark.data
def test_same_answers_as_fasttext(lid: LanguageIdentifier, data_dir: Path) -> None:
    texts = _texts(data_dir)
    expected = [lid.is_english(t) for t in texts]  # fastText's predict, one sentence at a time
    answer = lid.is_english_many(texts)
    assert answer.dtype == bool and answer.tolist() == expected
    assert 0 < sum(expected) < len(texts)  # English and not
    assert lid.is_english_many([]).shape == (0,)


def test_labels_of_one_batch(lid: LanguageIdentifier) -> None:
    texts = ["I don't believe we ought to attend the party this evening.", "Je ne crois pas que nous devions y aller.",
             "", "   "]
    assert lid.labels_many(texts)[:2] == ["en", "fr"]
    assert lid.is_english_many(texts).tolist()[:2] == [True, False]
    assert len(lid.labels_many(texts)) == len(texts)  # one answer per text, empty ones included

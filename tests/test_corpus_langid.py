"""The batched NumPy language test answers exactly as fastText's own predict."""

from __future__ import annotations

import gzip
import itertools
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from paranmt_hf.corpus.text.fasttext_batch import BatchTopLabel, FastTextFile, fnv1a, hs_tree
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
    expected = np.array([label == "en" for label in lid.labels_many(texts)])
    batch = BatchTopLabel(lid.model_file, lid.labels_many)
    assert (batch(texts) == expected).all()
    assert batch.fallbacks < len(texts) / 100  # NumPy decides nearly every row, fastText the near-ties
    assert (batch(texts) == expected).all()  # from the warm word cache
    assert (lid.is_english_many(texts) == expected).all()
    assert [lid.is_english(t) for t in texts[:300]] == expected[:300].tolist()


@pytest.mark.data
def test_without_the_fallback_the_numpy_model_already_agrees(lid: LanguageIdentifier, data_dir: Path) -> None:
    # the fallback is for near-ties only: force every row through NumPy and compare the English probability test
    texts = [t for t in _texts(data_dir) if t.strip()]
    labels = lid.labels_many(texts)
    batch = BatchTopLabel(lid.model_file, lambda rows: ["?"] * len(rows))
    answer = batch(texts)
    english = np.array([label == "en" for label in labels])
    assert (answer <= english).all()  # a NumPy "yes" is always fastText's "yes"
    assert answer[english].mean() > 0.75  # and it decides most English rows itself


@pytest.mark.data
def test_partial_hidden_vectors_equal_the_full_one(lid: LanguageIdentifier, data_dir: Path) -> None:
    # the test computes the label's path columns for every text and the full vector for the undecided rows only:
    # the same sums, bit for bit, as the full hidden vector of every text
    texts = _texts(data_dir)
    batch = BatchTopLabel(lid.model_file, lid.labels_many)
    ids, lengths = batch.word_ids(texts[:1500])
    full = batch.hidden(ids, lengths)
    rows = np.flatnonzero(np.arange(1500) % 3 == 1)
    assert np.array_equal(batch.hidden(ids, lengths, width=batch._depth), full[:, : batch._depth])
    assert np.array_equal(batch.hidden(ids, lengths, rows=rows), full[rows])
    assert np.array_equal(batch.logits(texts[:1500]), full)
    again, _ = batch.word_ids(texts)  # new words join the cache; the known ones keep their slots
    assert np.array_equal(again[: len(ids)], ids)


@pytest.mark.data
def test_vectorised_subwords_equal_the_scalar_rule(lid: LanguageIdentifier, data_dir: Path) -> None:
    lid.is_english_many(["warm up"])
    batch = lid._batch
    rng = random.Random(1)
    words = [w for t in _texts(data_dir)[:2000] for w in t.split()][:3000] + ["</s>", "é", "中文字", "a"]
    words += ["".join(rng.choice("aé中\U0001F600b") for _ in range(rng.randint(1, 9))) for _ in range(300)]
    words = list(dict.fromkeys(words))
    rows, owner = batch.subword_rows_many(words)
    grouped = defaultdict(list)
    for r, o in zip(rows.tolist(), owner.tolist(), strict=True):
        grouped[o].append(r)
    assert all(sorted(grouped[k]) == sorted(batch.subword_rows(w)) for k, w in enumerate(words))


def test_model_file_reader(lid: LanguageIdentifier) -> None:
    model = FastTextFile.load(lid.model_file)
    assert model.dim == 16 and len(model.labels) == 176 and "__label__en" in model.labels
    paths, codes = hs_tree(model.label_counts)
    assert len(paths) == 176 and len(paths[model.labels.index("__label__en")]) <= 3  # frequent label, short path
    assert fnv1a(b"a") == ((2166136261 ^ 97) * 16777619) & 0xFFFFFFFF
    assert fnv1a(b"\xe9") == ((2166136261 ^ 0xFFFFFFE9) * 16777619) & 0xFFFFFFFF  # signed bytes, as fastText


def test_not_a_model_file(tmp_path: Path) -> None:
    bad = tmp_path / "lid.bin"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="not a fastText model"):
        FastTextFile.load(bad)

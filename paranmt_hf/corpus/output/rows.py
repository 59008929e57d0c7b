"""The rows of each builder config, made from parsed blocks of lines (one implementation for the builder and tools).

:class:`RowMaker` turns a :class:`~paranmt_hf.data.records.ParsedBlock` into the columns of a config
(``{column: values}``), applying the ``filtered`` config's filter and computing trigram overlaps in batches.
Floats are rounded to float32, so that streamed rows equal the rows of the Arrow/Parquet copies.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ...data.configs import ConfigOptions, bitext_sides, get_config
from ...data.reader import Opener
from ...data.records import ParsedBlock
from ..selection.filters import make_filter

Columns = dict[str, list[Any]]


def f32(values: Sequence[float | None]) -> list[float | None]:
    """Round to float32 (None kept)."""
    if not values:
        return []
    if any(v is None for v in values):
        return [None if v is None else float(np.float32(v)) for v in values]
    return np.asarray(values, dtype=np.float32).astype(np.float64).tolist()


class RowMaker:
    """Rows of config ``name`` from parsed blocks of ``paths``.

    Args:
        name: config name.
        options: the config parameters.
        paths: the inputs (the ``filtered`` ACL-2018 recipe reads their scores; ``bitext`` reads the first name).
        member_pattern: zip member glob (for the fold-bound pass).
        opener: binary ``open`` for the fold-bound pass.
        row_filter: the ``filtered`` config's filter, when already made (else made from the options).
    """

    def __init__(self, name: str, options: ConfigOptions, paths: Sequence[str | os.PathLike[str]] = (),
                 member_pattern: str | None = None, opener: Opener = open, row_filter: Any = None) -> None:
        self.spec = get_config(name)
        self.options = options
        self.filter = None
        if name == "filtered":
            self.filter = row_filter if row_filter is not None else make_filter(options, paths, member_pattern,
                                                                                 opener)
        self.english_first, self.lang = True, ""
        if name == "bitext":
            self.english_first, self.lang = self.bitext_sides(paths)
        self.counts: dict[str, int] = {}  # filter outcomes (``filtered``)

    def bitext_sides(self, paths: Sequence[str | os.PathLike[str]]) -> tuple[bool, str]:
        """(English is the first column, other language) from the options or the first file's name."""
        sides = bitext_sides(paths[0]) if paths else None
        english_first = self.options.english_first
        if english_first is None:
            if sides is None:
                name = os.path.basename(os.fspath(paths[0])) if paths else "the input"
                raise ValueError(f"cannot tell which side of {name} is English: pass english_first=True/False "
                                 "(or name the file en-xx / xx-en)")
            english_first = sides[0]
        return english_first, self.options.lang or (sides[1] if sides else "")

    def _overlaps(self, a: list[str], b: list[str]) -> list[float]:
        from ..measures.overlap import overlaps_many

        return overlaps_many(a, b, self.options.tokenizer)

    def columns(self, parsed: ParsedBlock) -> Columns:
        """The config's columns for the valid lines of ``parsed``."""
        name = self.spec.name
        a, b = parsed.text_a, parsed.text_b
        if name in ("full", "filtered"):
            scores, overlap = parsed.score, None
            if self.filter is not None:
                selection = self.filter.select(a, b, scores)
                for reason, count in selection.counts().items():
                    self.counts[reason] = self.counts.get(reason, 0) + count
                keep = np.flatnonzero(selection.keep).tolist()
                a, b = [a[i] for i in keep], [b[i] for i in keep]
                scores = [scores[i] for i in keep]
                overlap = [selection.overlap[i] for i in keep]
            if overlap is None or any(v is None for v in overlap):
                overlap = self._overlaps(a, b)
            return {"reference": a, "paraphrase": b, "paraphrase_score": f32(scores), "trigram_overlap": f32(overlap),
                    "reference_length": [len(t.split()) for t in a], "paraphrase_length": [len(t.split()) for t in b]}
        if name == "processed-5m":
            return {"reference": a, "paraphrase": b}
        if name == "pairs":
            overlap = list(parsed.overlap)
            if self.options.compute_overlap:
                todo = [i for i, v in enumerate(overlap) if v is None]
                for i, value in zip(todo, self._overlaps([a[i] for i in todo], [b[i] for i in todo]), strict=True):
                    overlap[i] = value
            return {"text_a": a, "text_b": b, "score": f32(parsed.score), "trigram_overlap": f32(overlap)}
        english, foreign = (a, b) if self.english_first else (b, a)
        return {"english": english, "foreign": foreign, "lang": [self.lang] * len(a)}

    def rows(self, parsed: ParsedBlock) -> Iterator[dict[str, Any]]:
        """The config's rows (dicts) for the valid lines of ``parsed``."""
        columns = self.columns(parsed)
        names = list(columns)
        for values in zip(*columns.values(), strict=True):
            yield dict(zip(names, values, strict=True))

r"""``corpus filter``: the ``filtered`` config's filter over whole files, on every core, written as TSV.

The kept lines are written unchanged (their line endings normalised to ``\\n``), optionally with the trigram
overlap appended, so the output holds exactly the rows that ``load_paranmt("filtered", ...)`` yields for the same
file and options (tests/test_corpus_filter.py checks this).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..data.configs import ConfigOptions
from ..data.reader import Block, Shard
from ..data.records import parse_block
from .filters import fold_bounds, get_filter_spec, make_filter
from .output import compress_block
from .pipeline import BlockResult, BlockTask, RunSettings, Summary, run_blocks


@dataclass
class ScoresTask(BlockTask):
    """The scores of every valid line (the ACL-2018 recipe's first pass)."""

    fmt: str = "paranmt"

    def __call__(self, block: Block) -> BlockResult:
        """The result of one block."""
        parsed = parse_block(block, self.fmt)
        if any(s is None for s in parsed.score):
            raise ValueError(f"{block.source}: the ACL-2018 recipe needs a score on every line")
        return BlockResult(np.asarray(parsed.score, dtype=np.float64), block.lines, report=parsed.report)


@dataclass
class FilterTask(BlockTask):
    """Filter one block; the payload is the kept lines as bytes (a gzip member when ``compress``)."""

    row_filter: Any
    fmt: str = "paranmt"
    strict: bool = False
    with_overlap: bool = False
    compress: bool = False

    def setup(self) -> None:
        """Load what the blocks need (once per process)."""
        # the NLTK tokenizer (importing nltk alone takes ~2 CPU s) only when an overlap is computed with it
        if self.with_overlap or getattr(self.row_filter, "tokenizer", None) == "nltk":
            from .tokens import shared_tokenizer

            shared_tokenizer()
        if getattr(self.row_filter, "require_english", False):
            self.row_filter.langid.is_english_many(["warm up"])

    def __call__(self, block: Block) -> BlockResult:
        """The result of one block."""
        parsed = parse_block(block, self.fmt, self.strict)
        selection = self.row_filter.select(parsed.text_a, parsed.text_b, parsed.score, parsed.overlap)
        keep = np.flatnonzero(selection.keep).tolist()
        if self.with_overlap:
            from .overlap import overlaps_many

            overlap = selection.overlap
            missing = [i for i in keep if overlap[i] is None]
            for i, value in zip(missing, overlaps_many([parsed.text_a[i] for i in missing],
                                                       [parsed.text_b[i] for i in missing]), strict=True):
                overlap[i] = value
            lines = [parsed.lines[i] if parsed.overlap[i] is not None else f"{parsed.lines[i]}\t{overlap[i]!r}"
                     for i in keep]
        else:
            lines = [parsed.lines[i] for i in keep]
        data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        if self.compress:
            data = compress_block(data)
        return BlockResult(data, block.lines, Counter(selection.counts()), parsed.report)


def build_filter(options: ConfigOptions, inputs: Sequence[str | os.PathLike[str]], fmt: str = "paranmt",
                 member_pattern: str | None = None, settings: RunSettings | None = None) -> Any:
    """The filter of ``options``.

    For the ACL-2018 recipe without ``min_score`` the fold bounds come from a first, parallel pass over every score
    of the inputs (all shards: the bounds are global; 8 bytes per line in memory).
    """
    spec = get_filter_spec(options.filter)
    if spec.name == "acl2018" and spec.needs_corpus_pass(options):
        chunks: list[np.ndarray] = []
        every = replace(settings or RunSettings(), shard=Shard())
        run_blocks(inputs, ScoresTask(fmt), lambda r: chunks.append(r.payload), every, member_pattern=member_pattern,
                   desc="scores")
        scores = np.concatenate(chunks) if chunks else np.zeros(0)
        low, high = fold_bounds(scores, options.folds, options.num_folds)
        del chunks, scores
        options = ConfigOptions(**{**vars(options), "min_score": low,
                                   "max_score": options.max_score if options.max_score is not None else high})
    return make_filter(options)


def filter_corpus(inputs: Sequence[str | os.PathLike[str]], write: Any, options: ConfigOptions,
                  settings: RunSettings | None = None, *, fmt: str = "paranmt", with_overlap: bool = False,
                  compress: bool = False, member_pattern: str | None = None) -> Summary:
    """Filter ``inputs`` block by block, calling ``write(bytes)`` with the kept lines in input order."""
    row_filter = build_filter(options, inputs, fmt, member_pattern, settings)
    task = FilterTask(row_filter, fmt, options.strict, with_overlap, compress)
    return run_blocks(inputs, task, lambda r: write(r.payload), settings, member_pattern=member_pattern,
                      desc="filter")

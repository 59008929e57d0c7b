r"""``datasets`` builder for ParaNMT-50M and other paraphrase/bitext pair files (streaming, constant memory).

``datasets`` >= 4 no longer runs dataset scripts, so this builder is used through the library
(:func:`paranmt_hf.load_paranmt`) or instantiated directly::

    from paranmt_hf.dataset_scripts.paranmt import ParaNMT
    ds = ParaNMT(config_name="filtered", paths="para-nmt-50m.zip").as_streaming_dataset(split="train")

Pass plain local paths or http(s) URLs (``file://`` URIs break datasets' streaming). Configs:

* ``full``: ``para-nmt-50m.txt`` (reference \\t back-translation \\t paraphrase score) with trigram overlap and
  whitespace token lengths added.
* ``filtered``: ``full`` rows passing the PRAS filter (``recipe="pras"``) or the ACL-2018 recipe
  (``recipe="acl2018"``); every threshold is a config parameter.
* ``processed-5m``: the filtered, tokenised 5M release (reference \\t paraphrase, no score).
* ``pairs``: any TSV(.gz/.zip) with 2-4 columns: text_a \\t text_b [\\t score [\\t trigram_overlap]].
* ``bitext``: X-English sentence pairs (2 columns; which side is English is a parameter or read from an
  ``en-xx`` / ``xx-en`` file name).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import datasets
import numpy as np

from paranmt_hf.corpus.filters import ACL2018Filter, PRASFilter, corpus_fold_bounds, ensure_overlap
from paranmt_hf.corpus.overlap import trigram_overlap
from paranmt_hf.corpus.records import FORMATS, BadLineReport, iter_records

# The ParaNMT-50M zip (layout: para-nmt-50m/para-nmt-50m.txt): the authors' Google Drive copy as a direct download
# (the dead phontron.com URL and PRAS PR #1's link are in the registry, PARANMT_50M_OLD_URLS, for provenance).
from paranmt_hf.fetch.registry import PARANMT_50M_OLD_URL, PARANMT_50M_URL, PARANMT_HOMEPAGE  # noqa: F401

_TEXT = datasets.Value("string")
_F32 = datasets.Value("float32")
_I32 = datasets.Value("int32")
FULL_FEATURES = datasets.Features(
    {
        "reference": _TEXT,
        "paraphrase": _TEXT,
        "paraphrase_score": _F32,
        "trigram_overlap": _F32,
        "reference_length": _I32,
        "paraphrase_length": _I32,
    }
)
FEATURES = {
    "full": FULL_FEATURES,
    "filtered": FULL_FEATURES,
    "processed-5m": datasets.Features({"reference": _TEXT, "paraphrase": _TEXT}),
    "pairs": datasets.Features({"text_a": _TEXT, "text_b": _TEXT, "score": _F32, "trigram_overlap": _F32}),
    "bitext": datasets.Features({"english": _TEXT, "foreign": _TEXT, "lang": _TEXT}),
}
DEFAULT_MEMBERS = {  # zip members read by default (override with member_pattern)
    "full": "*para-nmt-50m.txt",
    "filtered": "*para-nmt-50m.txt",
    "processed-5m": "*para-nmt-5m-processed.txt",
}
LINE_FORMATS = {"full": "paranmt", "filtered": "paranmt", "processed-5m": "processed", "pairs": "pairs",
                "bitext": "bitext"}


def _f32(value: float | None) -> float | None:
    """Round to float32, so that streamed rows equal the rows of the Arrow/Parquet copies."""
    return None if value is None else float(np.float32(value))


@dataclass
class ParaNMTConfig(datasets.BuilderConfig):
    """Builder parameters (all optional; see the module docstring for the configs).

    Attributes:
        paths: file(s) or URL(s) to read (default: the ParaNMT-50M zip for ``full``/``filtered``).
        member_pattern: glob of the zip member(s) to read (default per config).
        strict: raise on the first bad line (``file:line``) instead of skipping and counting bad lines.
        tokenizer: tokenizer for trigram overlap, ``"nltk"`` (original) or ``"whitespace"``.
        recipe: ``filtered`` only: ``"pras"`` or ``"acl2018"``.
        sim_low, sim_high, max_overlap, min_mean_tokens, max_mean_tokens, require_english, langid_model: PRAS filter.
        folds, num_folds, min_score, max_score, max_tokens, sample_rate, seed: ACL-2018 recipe.
        compute_overlap: ``pairs`` only: compute trigram overlap when the file has no overlap column.
        lang, english_first: ``bitext`` only: the other language's code and whether English is the first column.
    """

    paths: str | list[str] | tuple[str, ...] | None = None
    member_pattern: str | None = None
    strict: bool = False
    tokenizer: str = "nltk"
    recipe: str = "pras"
    # PRAS filter thresholds: one source of truth, the filter's own defaults
    sim_low: float = PRASFilter.sim_low
    sim_high: float = PRASFilter.sim_high
    max_overlap: float = PRASFilter.max_overlap
    min_mean_tokens: float = PRASFilter.min_mean_tokens
    max_mean_tokens: float = PRASFilter.max_mean_tokens
    require_english: bool = PRASFilter.require_english
    langid_model: str | None = None
    folds: tuple[int, ...] = (9, 10)
    num_folds: int = 10
    min_score: float | None = None
    max_score: float | None = None
    max_tokens: int = 30
    sample_rate: float = 1.0
    seed: int = 1
    compute_overlap: bool = False
    lang: str | None = None
    english_first: bool | None = None


class ParaNMT(datasets.GeneratorBasedBuilder):
    """ParaNMT-50M and generic pair files as a streaming ``datasets`` builder."""

    BUILDER_CONFIG_CLASS = ParaNMTConfig
    BUILDER_CONFIGS = [ParaNMTConfig(name=name, version=datasets.Version("1.0.0")) for name in FEATURES]
    DEFAULT_CONFIG_NAME = "full"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description="ParaNMT-50M paraphrase pairs (Wieting & Gimpel, 2018) and generic pair corpora.",
            features=FEATURES[self.config.name],
            homepage=PARANMT_HOMEPAGE,
        )

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        paths = self.config.paths
        if paths is None:
            if self.config.name not in ("full", "filtered"):
                raise ValueError(
                    f"config {self.config.name!r} needs paths= (local file or URL); the processed 5M release is on "
                    f"{PARANMT_HOMEPAGE}"
                )
            paths = PARANMT_50M_URL
        paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        if not paths:
            raise ValueError("paths is empty")
        for path in paths:
            if str(path).startswith("file://"):
                raise ValueError(f"use a plain local path, not a file:// URI ({path}): datasets' streaming breaks it")
        local = dl_manager.download([os.fspath(p) for p in paths])
        return [datasets.SplitGenerator(name=datasets.Split.TRAIN, gen_kwargs={"paths": local})]

    def _generate_examples(self, paths: list[str]) -> Any:
        config = self.config
        member = config.member_pattern or DEFAULT_MEMBERS.get(config.name)
        report = BadLineReport()
        records = iter_records(paths, FORMATS[LINE_FORMATS[config.name]], strict=config.strict,
                               member_pattern=member, opener=open, report=report)
        row_filter = self._row_filter(paths, member) if config.name == "filtered" else None
        english_first, lang = self._bitext_sides(paths) if config.name == "bitext" else (True, "")
        for key, (_, _, rec) in enumerate(records):
            a, b = rec["text_a"], rec["text_b"]
            if config.name in ("full", "filtered"):
                example = {"reference": a, "paraphrase": b, "paraphrase_score": rec["score"], "trigram_overlap": None,
                           "reference_length": len(a.split()), "paraphrase_length": len(b.split())}
                if row_filter is not None and not row_filter(example):
                    continue
                example["trigram_overlap"] = _f32(ensure_overlap(example, config.tokenizer))
                example["paraphrase_score"] = _f32(example["paraphrase_score"])
                yield key, example
            elif config.name == "processed-5m":
                yield key, {"reference": a, "paraphrase": b}
            elif config.name == "pairs":
                overlap = rec["overlap"]
                if overlap is None and config.compute_overlap:
                    overlap = trigram_overlap(a, b, config.tokenizer)
                yield key, {"text_a": a, "text_b": b, "score": _f32(rec["score"]), "trigram_overlap": _f32(overlap)}
            else:
                english, foreign = (a, b) if english_first else (b, a)
                yield key, {"english": english, "foreign": foreign, "lang": lang}

    def _row_filter(self, paths: list[str], member: str | None) -> PRASFilter | ACL2018Filter:
        c = self.config
        if c.recipe == "pras":
            return PRASFilter(c.sim_low, c.sim_high, c.max_overlap, c.min_mean_tokens, c.max_mean_tokens,
                              c.require_english, c.langid_model, c.tokenizer)
        if c.recipe == "acl2018":
            low, high = c.min_score, c.max_score
            if low is None:
                low, high_auto = corpus_fold_bounds(paths, c.folds, c.num_folds, member_pattern=member, opener=open)
                high = high if high is not None else high_auto
            return ACL2018Filter(low, high, tuple(c.folds), c.num_folds, c.max_tokens, c.sample_rate, c.seed)
        raise ValueError(f"unknown recipe {c.recipe!r}: use 'pras' or 'acl2018'")

    def _bitext_sides(self, paths: list[str]) -> tuple[bool, str]:
        """(English is the first column, other language code), from the config or an en-xx / xx-en file name."""
        name = os.path.basename(str(paths[0])).lower()
        first = re.search(r"(?:^|[^a-z])en[-_]([a-z]{2,3})(?:[^a-z]|$)", name)
        second = re.search(r"(?:^|[^a-z])([a-z]{2,3})[-_]en(?:[^a-z]|$)", name)
        english_first = self.config.english_first
        if english_first is None:
            if not (first or second):
                raise ValueError(f"cannot tell which side of {name} is English: pass english_first=True/False")
            english_first = bool(first)
        guess = first if english_first else second
        return english_first, self.config.lang or (guess.group(1) if guess else "")

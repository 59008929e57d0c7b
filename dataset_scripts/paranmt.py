r"""``datasets`` builder for ParaNMT-50M and other paraphrase/bitext pair files (streaming, constant memory).

``datasets`` >= 4 runs no dataset scripts: use :func:`paranmt_hf.load_paranmt`, or instantiate it::

    from paranmt_hf.dataset_scripts.paranmt import ParaNMT
    ds = ParaNMT(config_name="filtered", paths="para-nmt-50m.zip").as_streaming_dataset(split="train")

Configs (plain local paths or http(s) URLs):

* ``full``: ``para-nmt-50m.txt`` (reference \\t back-translation \\t score) with trigram overlap and lengths.
* ``filtered``: ``full`` rows passing a filter of :data:`paranmt_hf.corpus.selection.filters.FILTERS`.
* ``processed-5m``: the filtered, tokenised 5M release (reference \\t paraphrase, no score).
* ``pairs``: any TSV(.gz/.zip) with 2-4 columns: text_a \\t text_b [\\t score [\\t trigram_overlap]].
* ``bitext``: X-English sentence pairs (English side a parameter or read from ``en-xx`` / ``xx-en`` names).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import datasets

from paranmt_hf.corpus.output.rows import RowMaker
from paranmt_hf.data.configs import CONFIGS, ConfigOptions
from paranmt_hf.data.records import BadLineReport, iter_parsed

# The ParaNMT-50M zip (layout: para-nmt-50m/para-nmt-50m.txt): the authors' Google Drive copy as a direct download
# (the dead phontron.com URL and PRAS PR #1's link are in the registry, PARANMT_50M_OLD_URLS, for provenance).
from paranmt_hf.fetch.registry import PARANMT_50M_OLD_URL, PARANMT_50M_URL, PARANMT_HOMEPAGE  # noqa: F401


@dataclass
class ParaNMTBuilderConfig(datasets.BuilderConfig, ConfigOptions):
    """A builder config: a name in :data:`paranmt_hf.data.configs.CONFIGS` plus its parameters.

    The parameters are those of :class:`paranmt_hf.data.configs.ConfigOptions` (all optional; see the module
    docstring for the configs).
    """


class ParaNMT(datasets.GeneratorBasedBuilder):
    """ParaNMT-50M and generic pair files as a streaming ``datasets`` builder."""

    BUILDER_CONFIG_CLASS = ParaNMTBuilderConfig
    BUILDER_CONFIGS = [ParaNMTBuilderConfig(name=name, version=datasets.Version("1.0.0")) for name in CONFIGS]
    DEFAULT_CONFIG_NAME = "full"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description="ParaNMT-50M paraphrase pairs (Wieting & Gimpel, 2018) and generic pair corpora.",
            features=CONFIGS[self.config.name].features(),
            homepage=PARANMT_HOMEPAGE,
        )

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        paths = self.config.paths
        if paths is None:
            if not CONFIGS[self.config.name].default_source:
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
        spec = CONFIGS[config.name]
        member = config.member_pattern or spec.default_member
        options = ConfigOptions.from_object(config)
        rows = RowMaker(config.name, options, paths, member, opener=open)
        report = BadLineReport()
        key = 0
        for parsed in iter_parsed(paths, spec.line_format, config.strict, member, open, report):
            for row in rows.rows(parsed):
                yield key, row
                key += 1

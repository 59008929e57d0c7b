"""Corpus tools: overlap, language ID, filters, scoring, de-duplication, histogram, export, paraphrase lexicon."""

from __future__ import annotations

from ..data.records import FORMATS, BadLineError, BadLineReport, LineFormat, iter_records
from ..data.writer import write_pairs
from .dedup import DedupStats, dedup_records
from .export import export_hub_folder, write_parquet_shards
from .filters import ACL2018Filter, PRASFilter, corpus_fold_bounds, fold_bounds
from .histogram import TABLE3_EDGES, plot_histogram, score_histogram
from .langid import LanguageIdentifier
from .lexicon import ParaphraseLexicon, evaluate_simlex, read_simlex
from .overlap import ngram_overlap, trigram_overlap
from .score import annotate_pairs, cosine_scores
from .tokens import nltk_word_tokenize

__all__ = [
    "ACL2018Filter", "BadLineError", "BadLineReport", "DedupStats", "FORMATS", "LanguageIdentifier", "LineFormat",
    "PRASFilter", "ParaphraseLexicon", "TABLE3_EDGES", "annotate_pairs", "corpus_fold_bounds", "cosine_scores",
    "dedup_records", "evaluate_simlex", "export_hub_folder", "fold_bounds", "iter_records", "ngram_overlap",
    "nltk_word_tokenize", "plot_histogram", "read_simlex", "score_histogram", "trigram_overlap", "write_pairs",
    "write_parquet_shards",
]

"""Corpus tools: back-translation, per-pair measures, filters, de-duplication, histogram, export, lexicon, at scale.

The names below are imported on first use, so that importing a module of the package (the CLI reads the filter
registry, :mod:`paranmt_hf.corpus.filters`, to build its parser) does not import them all.
"""

from __future__ import annotations

from ..utils.lazy import lazy_exports

_LAZY: dict[str, str] = {
    "FORMATS": "paranmt_hf.data.records",
    "BadLineError": "paranmt_hf.data.records",
    "BadLineReport": "paranmt_hf.data.records",
    "LineFormat": "paranmt_hf.data.records",
    "iter_records": "paranmt_hf.data.records",
    "write_pairs": "paranmt_hf.data.writer",
    "DedupStats": "paranmt_hf.corpus.dedup",
    "dedup_records": "paranmt_hf.corpus.dedup",
    "export_hub_folder": "paranmt_hf.corpus.export",
    "write_parquet_shards": "paranmt_hf.corpus.export",
    "FILTERS": "paranmt_hf.corpus.filters",
    "ACL2018Filter": "paranmt_hf.corpus.filters",
    "PRASFilter": "paranmt_hf.corpus.filters",
    "corpus_fold_bounds": "paranmt_hf.corpus.filters",
    "fold_bounds": "paranmt_hf.corpus.filters",
    "make_filter": "paranmt_hf.corpus.filters",
    "ThresholdFilter": "paranmt_hf.corpus.filters",
    "MEASURES": "paranmt_hf.corpus.measures",
    "MeasureContext": "paranmt_hf.corpus.measures",
    "compute_measures": "paranmt_hf.corpus.measures",
    "sentence_bleu": "paranmt_hf.corpus.bleu",
    "NgramLanguageModel": "paranmt_hf.corpus.language_model",
    "train_language_model": "paranmt_hf.corpus.language_model",
    "ReferenceClassifier": "paranmt_hf.corpus.reference_classifier",
    "train_reference_classifier": "paranmt_hf.corpus.reference_classifier",
    "TABLE3_EDGES": "paranmt_hf.corpus.histogram",
    "plot_histogram": "paranmt_hf.corpus.histogram",
    "score_histogram": "paranmt_hf.corpus.histogram",
    "LanguageIdentifier": "paranmt_hf.corpus.langid",
    "ParaphraseLexicon": "paranmt_hf.corpus.lexicon",
    "evaluate_simlex": "paranmt_hf.corpus.lexicon",
    "read_simlex": "paranmt_hf.data.simlex",
    "ngram_overlap": "paranmt_hf.corpus.overlap",
    "trigram_overlap": "paranmt_hf.corpus.overlap",
    "annotate_pairs": "paranmt_hf.corpus.score",
    "cosine_scores": "paranmt_hf.corpus.measures",
    "nltk_word_tokenize": "paranmt_hf.corpus.tokens",
    # the scale commands (datatrove runs); back-translation: paranmt_hf.corpus.backtranslate.backtranslate
    "RunOptions": "paranmt_hf.corpus.runner",
    "merge_job": "paranmt_hf.corpus.runner",
    "annotate_corpus": "paranmt_hf.corpus.score",
    "filter_corpus": "paranmt_hf.corpus.filtering",
    "dedup_files": "paranmt_hf.corpus.dedup",
    "export_files": "paranmt_hf.corpus.export",
    "histogram_files": "paranmt_hf.corpus.histogram",
    "make_paranmt": "paranmt_hf.corpus.make",
    "DecodingOptions": "paranmt_hf.corpus.translation",
    "TransformersTranslator": "paranmt_hf.corpus.translation",
    "CTranslate2Translator": "paranmt_hf.corpus.translation_ct2",
    "load_translator": "paranmt_hf.corpus.translation_engines",
    "ENGINES": "paranmt_hf.corpus.translation_engines",
    "TransformersOptions": "paranmt_hf.corpus.translation",
    "CTranslate2Options": "paranmt_hf.corpus.translation_ct2",
    "task_device": "paranmt_hf.corpus.placement",
    "build_translation_model": "paranmt_hf.corpus.synthetic_translation",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

"""Corpus tools: back-translation, per-pair measures, filters, de-duplication, histogram, export, lexicon, at scale.

The names below are imported on first use, so that importing a module of the package (the CLI reads the filter
registry, :mod:`paranmt_hf.corpus.selection.filters`, to build its parser) does not import them all.
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
    "DedupStats": "paranmt_hf.corpus.selection.dedup",
    "dedup_records": "paranmt_hf.corpus.selection.dedup",
    "export_hub_folder": "paranmt_hf.corpus.output.export",
    "write_parquet_shards": "paranmt_hf.corpus.output.export",
    "FILTERS": "paranmt_hf.corpus.selection.filters",
    "ACL2018Filter": "paranmt_hf.corpus.selection.filters",
    "PRASFilter": "paranmt_hf.corpus.selection.filters",
    "corpus_fold_bounds": "paranmt_hf.corpus.selection.filters",
    "fold_bounds": "paranmt_hf.corpus.selection.filters",
    "make_filter": "paranmt_hf.corpus.selection.filters",
    "ThresholdFilter": "paranmt_hf.corpus.selection.filters",
    "MEASURES": "paranmt_hf.corpus.measures.registry",
    "MeasureContext": "paranmt_hf.corpus.measures.registry",
    "compute_measures": "paranmt_hf.corpus.measures.registry",
    "sentence_bleu": "paranmt_hf.corpus.measures.bleu",
    "NgramLanguageModel": "paranmt_hf.corpus.measures.language_model",
    "train_language_model": "paranmt_hf.corpus.measures.language_model",
    "ReferenceClassifier": "paranmt_hf.corpus.measures.reference_classifier",
    "train_reference_classifier": "paranmt_hf.corpus.measures.reference_classifier",
    "TABLE3_EDGES": "paranmt_hf.corpus.output.histogram",
    "plot_histogram": "paranmt_hf.corpus.output.histogram",
    "score_histogram": "paranmt_hf.corpus.output.histogram",
    "LanguageIdentifier": "paranmt_hf.corpus.text.langid",
    "ParaphraseLexicon": "paranmt_hf.corpus.output.lexicon",
    "evaluate_simlex": "paranmt_hf.corpus.output.lexicon",
    "read_simlex": "paranmt_hf.data.simlex",
    "ngram_overlap": "paranmt_hf.corpus.measures.overlap",
    "trigram_overlap": "paranmt_hf.corpus.measures.overlap",
    "annotate_pairs": "paranmt_hf.corpus.annotate",
    "cosine_scores": "paranmt_hf.corpus.measures.registry",
    "nltk_word_tokenize": "paranmt_hf.corpus.text.tokens",
    # the scale commands (datatrove runs); back-translation: paranmt_hf.corpus.translation.backtranslate.backtranslate
    "RunOptions": "paranmt_hf.corpus.pipeline.runner",
    "merge_job": "paranmt_hf.corpus.pipeline.runner",
    "annotate_corpus": "paranmt_hf.corpus.annotate",
    "filter_corpus": "paranmt_hf.corpus.selection.filtering",
    "dedup_files": "paranmt_hf.corpus.selection.dedup",
    "export_files": "paranmt_hf.corpus.output.export",
    "config_options": "paranmt_hf.corpus.output.export",
    "histogram_files": "paranmt_hf.corpus.output.histogram",
    "corpus_histogram": "paranmt_hf.corpus.output.histogram",
    "lexicon_report": "paranmt_hf.corpus.output.lexicon",
    "read_columns": "paranmt_hf.corpus.measures.columns",
    "make_paranmt": "paranmt_hf.corpus.make",
    "DatasetOptions": "paranmt_hf.corpus.make",
    "TranslationOptions": "paranmt_hf.corpus.translation.backtranslate",
    "SourceCleaning": "paranmt_hf.corpus.translation.source_cleaning",
    "DecodingOptions": "paranmt_hf.corpus.translation.transformers_engine",
    "TransformersTranslator": "paranmt_hf.corpus.translation.transformers_engine",
    "CTranslate2Translator": "paranmt_hf.corpus.translation.ctranslate2_engine",
    "load_translator": "paranmt_hf.corpus.translation.engines",
    "ENGINES": "paranmt_hf.corpus.translation.engines",
    "TransformersOptions": "paranmt_hf.corpus.translation.transformers_engine",
    "CTranslate2Options": "paranmt_hf.corpus.translation.ctranslate2_engine",
    "task_device": "paranmt_hf.corpus.translation.placement",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

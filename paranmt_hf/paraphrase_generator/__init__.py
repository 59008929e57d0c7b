"""The paraphrase generator (ParaNMT-50M §6): train a seq2seq model on paraphrase pairs, generate, evaluate.

torch and transformers load only when a function needs them.
"""

from __future__ import annotations

from ..corpus.translation.transformers_engine import DecodingOptions
from .build import SIZES, Seq2SeqSize, build_seq2seq_model, train_seq2seq_tokenizer
from .data import DEFAULT_BOUNDS, generator_pairs, read_pairs
from .evaluate import evaluate_generator, paraphrase_metrics
from .generate import ParaphraseGenerator, paraphrase_file
from .train import GeneratorError, Seq2SeqTrainingSettings, load_seq2seq, train_seq2seq
from .train_generator import train_generator

__all__ = ["DEFAULT_BOUNDS", "SIZES", "DecodingOptions", "GeneratorError", "ParaphraseGenerator", "Seq2SeqSize",
           "Seq2SeqTrainingSettings", "build_seq2seq_model", "evaluate_generator", "generator_pairs", "load_seq2seq",
           "paraphrase_file", "paraphrase_metrics", "read_pairs", "train_generator", "train_seq2seq",
           "train_seq2seq_tokenizer"]

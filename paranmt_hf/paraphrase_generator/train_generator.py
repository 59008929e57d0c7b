"""``paranmt-hf train-generator``: pairs -> selected pairs -> a trained generator -> its evaluation.

:func:`train_generator` reads paraphrase pairs, selects them
(:func:`~paranmt_hf.paraphrase_generator.data.generator_pairs`: bounds on score and overlap, a held-out set, both
directions), trains a seq2seq model on them
(:func:`~paranmt_hf.paraphrase_generator.train.train_seq2seq`), then generates for the held-out inputs and measures
the outputs beside the copy baseline (:func:`~paranmt_hf.paraphrase_generator.evaluate.evaluate_generator`). The
model folder gets ``held_out.tsv`` (the evaluation pairs) and ``evaluation.json``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..corpus.measures.registry import MeasureContext
from ..corpus.selection.filters import Bound
from ..corpus.translation.transformers_engine import DecodingOptions
from ..data.reader import check_input_files
from ..utils.atomic import atomic_output, atomic_write_json, check_output, local_paths
from .build import Seq2SeqSize
from .data import generator_pairs, read_pairs
from .evaluate import evaluate_generator
from .generate import ParaphraseGenerator, generator_options
from .train import Seq2SeqTrainingResult, Seq2SeqTrainingSettings, train_seq2seq

EVALUATION_NAME = "evaluation.json"
HELD_OUT_NAME = "held_out.tsv"


def train_generator(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    model: str | os.PathLike[str] | None = None,
    size: str | Seq2SeqSize = "small",
    vocab_size: int = 8000,
    bounds: Mapping[str, Bound] | None = None,
    score_model: str | os.PathLike[str] | None = None,
    both_directions: bool = True,
    held_out: int = 1000,
    max_pairs: int | None = None,
    settings: Seq2SeqTrainingSettings | None = None,
    eval_model: str | os.PathLike[str] | None = None,
    decoding: DecodingOptions | None = None,
    fmt: str = "pairs",
    overwrite: bool = False,
    trust_remote_code: bool = False,
) -> tuple[Seq2SeqTrainingResult, dict[str, Any] | None]:
    """Train a paraphrase generator on the pairs of ``inputs`` and evaluate it on held-out pairs.

    Args:
        inputs: pair files (TSV: text_a, text_b[, score[, trigram overlap]]).
        output: the model folder to write.
        model: a seq2seq model to fine-tune (Hub id or folder); None builds a Marian of ``size``.
        size: the from-scratch size.
        vocab_size: the from-scratch tokenizer's vocabulary.
        bounds: column bounds selecting the pairs (default: PRAS Figure 3's, score 0.7-1.0, overlap <= 0.5).
        score_model: the paranmt_hf model that scores pairs without a score column.
        both_directions: train a -> b and b -> a.
        held_out: evaluation pairs held out (0: no evaluation).
        max_pairs: at most this many training pairs.
        settings: training settings.
        eval_model: the encoder of the evaluation's cosines (default: ``score_model``; none: no cosines).
        decoding: how the evaluation generates.
        fmt: the input line format.
        overwrite: replace an existing ``output``.
        trust_remote_code: allow a model folder's own code.

    Returns:
        the training result and the evaluation (None without held-out pairs).
    """
    settings = settings or Seq2SeqTrainingSettings()
    check_input_files(inputs)
    check_output(output, [*inputs, *local_paths(model, score_model, eval_model)], overwrite)
    context = MeasureContext(encoder=score_model, trust_remote_code=trust_remote_code)
    data = generator_pairs(read_pairs(inputs, fmt), bounds, context, both_directions, held_out, max_pairs,
                           settings.seed)
    result = train_seq2seq(data.sources, data.targets, output, model, size, vocab_size, settings,
                           data.eval_inputs, data.eval_references, overwrite=overwrite,
                           trust_remote_code=trust_remote_code,
                           extra_summary={"task": "paraphrase generation", "data": {
                               "inputs": [str(p) for p in inputs], **data.counts}})
    if not data.eval_inputs:
        return result, None
    with atomic_output(Path(output) / HELD_OUT_NAME, overwrite=True) as tmp:
        tmp.write_text("".join(f"{a}\t{b}\n" for a, b in zip(data.eval_inputs, data.eval_references, strict=True)),
                       encoding="utf-8")
    encoder = None
    encoder_path = eval_model if eval_model is not None else score_model
    if encoder_path is not None:
        encoder = context.get("encoder") if encoder_path == score_model else MeasureContext(
            encoder=encoder_path, trust_remote_code=trust_remote_code).get("encoder")
    generator = ParaphraseGenerator.from_pretrained(output)
    evaluation = evaluate_generator(generator, data.eval_inputs, data.eval_references, encoder,
                                    decoding, settings.batch_size)
    evaluation["decoding"] = asdict(generator_options(decoding))
    evaluation["eval_model"] = None if encoder_path is None else str(encoder_path)
    atomic_write_json(Path(output) / EVALUATION_NAME, evaluation)
    return result, evaluation

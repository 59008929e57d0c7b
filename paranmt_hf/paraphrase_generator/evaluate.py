"""How good a paraphrase generator is on held-out pairs: meaning kept, and how different the output is.

ParaNMT-50M §6 reports no number for its generator. Here each system's outputs on held-out inputs are measured
with the columns of :data:`~paranmt_hf.corpus.measures.registry.MEASURES`:

* meaning kept: the cosine of input and output, and of output and reference, under a paranmt_hf encoder;
* diversity against the input (lower = more rewriting): self-BLEU (corpus BLEU against the inputs), mean
  sentence ``bleu``, mean ``trigram_overlap`` and the share of outputs that copy their input;
* closeness to the reference paraphrase: corpus BLEU of the outputs against the references.

The text is tokenized by design (sacrebleu is told so, ``force=True``). The **copy** baseline (output = input) is
measured the same way: a generator is useful where it rewrites while keeping the cosine close to the copy's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..corpus.measures.registry import MeasureContext, compute_measures
from ..utils.imports import require


def _key(text: str) -> str:
    return " ".join(text.split()).lower()


def paraphrase_metrics(inputs: Sequence[str], outputs: Sequence[str], references: Sequence[str] | None = None,
                       encoder: Any = None) -> dict[str, float]:
    """The metrics of one system's outputs (see the module docstring); cosines only with an ``encoder``."""
    sacrebleu = require("sacrebleu", "filters")
    if len(inputs) != len(outputs):
        raise ValueError(f"need one output per input ({len(inputs)} vs {len(outputs)})")
    names = ["bleu", "trigram_overlap"] + (["paraphrase_score"] if encoder is not None else [])
    context = MeasureContext(encoder=encoder)
    against_input = compute_measures(names, inputs, outputs, context)
    metrics: dict[str, float] = {
        "self_bleu": sacrebleu.corpus_bleu(list(outputs), [list(inputs)], force=True).score,
        "sentence_bleu_vs_input": float(np.mean(against_input["bleu"])),
        "trigram_overlap_vs_input": float(np.mean(against_input["trigram_overlap"])),
        "copy_rate": float(np.mean([_key(a) == _key(b) for a, b in zip(inputs, outputs, strict=True)])),
    }
    if encoder is not None:
        metrics["cosine_input_output"] = float(np.mean(against_input["paraphrase_score"]))
    if references is not None:
        metrics["bleu_vs_reference"] = sacrebleu.corpus_bleu(list(outputs), [list(references)], force=True).score
        if encoder is not None:
            metrics["cosine_output_reference"] = float(np.mean(
                compute_measures(["paraphrase_score"], references, outputs, context)["paraphrase_score"]))
    return metrics


def evaluate_generator(generator: Any, inputs: Sequence[str], references: Sequence[str] | None = None,
                       encoder: Any = None, settings: Any = None, batch_size: int = 32,
                       examples: int = 10) -> dict[str, Any]:
    """The generator's metrics beside the copy baseline's, with a few example outputs.

    Args:
        generator: a :class:`~paranmt_hf.paraphrase_generator.generate.ParaphraseGenerator`.
        inputs: held-out inputs.
        references: their reference paraphrases (optional).
        encoder: a paranmt_hf encoder for the cosines (optional).
        settings: decoding options (:class:`~paranmt_hf.corpus.translation.transformers_engine.DecodingOptions`).
        batch_size: generation batch size.
        examples: how many (input, output, reference) examples to keep.
    """
    outputs = generator.paraphrase(list(inputs), settings, batch_size)
    result: dict[str, Any] = {
        "inputs": len(inputs),
        "generator": paraphrase_metrics(inputs, outputs, references, encoder),
        "copy": paraphrase_metrics(inputs, list(inputs), references, encoder),
        "examples": [{"input": i, "output": o, **({"reference": references[k]} if references is not None else {})}
                     for k, (i, o) in enumerate(zip(inputs[:examples], outputs[:examples], strict=True))],
    }
    return result

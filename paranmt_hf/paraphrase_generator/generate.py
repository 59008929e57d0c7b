"""Generate with a seq2seq model: beam search or sampling, n-best lists, batches sorted by length.

:class:`ParaphraseGenerator` wraps any ``AutoModelForSeq2SeqLM`` folder or Hub id (a model trained by
:func:`~paranmt_hf.paraphrase_generator.train.train_seq2seq`, or any other) and decodes with the translation engine
of the corpus tools (:class:`~paranmt_hf.corpus.translation.transformers_engine.TransformersTranslator`: the same
:class:`~paranmt_hf.corpus.translation.transformers_engine.DecodingOptions`, the same length-sorted batches, the same
length rule).
Inputs are returned in input order; an input longer than the model's limit is truncated and counted
(:attr:`GenerationReport.truncated`), never dropped; an empty input is refused with its position.

Defaults: beam 4 and the best candidate; ``do_sample=True`` draws ``num_return`` independent samples (beam 1)
unless ``num_beams`` is given; the longest output is the model's generation config (``max_new_tokens``), capped at
its positions.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..corpus.translation.transformers_engine import DecodingOptions, TransformersTranslator, encode_sources
from .train import load_seq2seq

DEFAULT_BEAMS = 4
"""The generator's beam width when neither ``num_beams`` nor sampling is asked for."""


@dataclass
class GenerationReport:
    """Counts of a generation run."""

    inputs: int = 0
    truncated: int = 0


def generator_options(options: DecodingOptions | None, batch_size: int | None = None,
                      max_input_tokens: int | None = None) -> DecodingOptions:
    """``options`` as the generator decodes them.

    Beam :data:`DEFAULT_BEAMS` unless sampling or given, at most ``batch_size`` inputs per batch, inputs cut at
    ``max_input_tokens``.
    """
    options = options or DecodingOptions()
    changes: dict[str, Any] = {}
    if options.num_beams is None and not options.do_sample:
        changes["num_beams"] = DEFAULT_BEAMS
    if batch_size is not None:
        changes["batch_size"] = batch_size
    if options.max_length is None and max_input_tokens is not None:
        changes["max_length"] = max_input_tokens
    return replace(options, **changes) if changes else options


class ParaphraseGenerator:
    """A seq2seq model and its tokenizer, ready to generate.

    Args:
        model: the ``transformers`` seq2seq model.
        tokenizer: its tokenizer.
        max_input_tokens: inputs are truncated to this many tokens (default: the tokenizer's ``model_max_length``,
            capped by the model's positions).
    """

    def __init__(self, model: Any, tokenizer: Any, max_input_tokens: int | None = None) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        limit = getattr(model.config, "max_position_embeddings", None) or 10**6
        given = tokenizer.model_max_length if tokenizer.model_max_length and tokenizer.model_max_length < 10**6 \
            else limit
        self.max_input_tokens = int(max_input_tokens or min(given, limit))
        self.report = GenerationReport()
        self.generation = copy.deepcopy(model.generation_config)  # as saved (the translator sets its length cap)

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str], trust_remote_code: bool = False,
                        max_input_tokens: int | None = None) -> ParaphraseGenerator:
        """Load a seq2seq folder or Hub id (a clear error when it is not an encoder-decoder)."""
        model, tokenizer = load_seq2seq(path, trust_remote_code)
        return cls(model, tokenizer, max_input_tokens)

    def translator(self, options: DecodingOptions | None = None, batch_size: int | None = None) -> Any:
        """The translator decoding with ``options``.

        A :class:`~paranmt_hf.corpus.translation.transformers_engine.TransformersTranslator`.
        The options are checked against the model: an impossible combination raises :class:`ValueError` before any
        generation.
        """
        translator = TransformersTranslator.from_model(
            self.model, self.tokenizer, generator_options(options, batch_size, self.max_input_tokens),
            generation=self.generation)
        translator.scores = False  # texts only: no translation cost
        return translator

    def generate(self, texts: Sequence[str], options: DecodingOptions | None = None, batch_size: int = 32,
                 progress: bool = False) -> list[list[str]]:
        """The candidates of each text.

        ``num_return`` each, best first for beam search; ``batch_size``: inputs per batch.
        """
        translator = self.translator(options, batch_size)
        for i, text in enumerate(texts):
            if not text.strip():
                raise ValueError(f"input {i + 1} is empty")
        if not texts:
            return []
        encoded = encode_sources(self.tokenizer, list(texts), translator.max_length)
        self.report.inputs += len(texts)
        self.report.truncated += sum(encoded.truncated)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc="generate", unit=" inputs", dynamic_ncols=True)
        try:
            hypotheses = translator.translate_ids(encoded.ids, None, progress=None if bar is None else bar.update)
        finally:
            if bar is not None:
                bar.close()
        return [[c.text.strip() for c in candidates] for candidates in hypotheses]

    def paraphrase(self, texts: Sequence[str], options: DecodingOptions | None = None,
                   batch_size: int = 32) -> list[str]:
        """The best candidate of each text."""
        return [c[0] for c in self.generate(texts, options, batch_size)]


def paraphrase_file(generator: ParaphraseGenerator, input_path: str | os.PathLike[str],
                    output_path: str | os.PathLike[str], options: DecodingOptions | None = None,
                    batch_size: int = 32, chunk_lines: int = 10_000, overwrite: bool = False,
                    progress: bool = True) -> dict[str, int]:
    """Paraphrase every line of a text file into a TSV: ``input TAB candidate``, one line per candidate.

    Empty lines are skipped and counted; the output is written atomically and never replaces the input. Returns
    the counts (inputs, empty lines skipped, truncated inputs, output lines).
    """
    from ..utils.atomic import atomic_output, local_paths

    counts = {"inputs": 0, "empty_skipped": 0, "truncated": 0, "output_lines": 0}
    before = generator.report.truncated
    model = local_paths(getattr(generator.model, "name_or_path", None))  # never over the generator's files
    with atomic_output(output_path, [input_path, *model], overwrite) as tmp, \
            open(input_path, encoding="utf-8") as source, open(tmp, "w", encoding="utf-8", newline="\n") as out:
        chunk: list[str] = []

        def flush() -> None:
            for text, candidates in zip(chunk, generator.generate(chunk, options, batch_size, progress), strict=True):
                for candidate in candidates:
                    out.write(f"{text}\t{candidate}\n")
                    counts["output_lines"] += 1
            counts["inputs"] += len(chunk)
            chunk.clear()

        for line in source:
            text = line.rstrip("\r\n").replace("\t", " ")
            if not text.strip():
                counts["empty_skipped"] += 1
                continue
            chunk.append(text)
            if len(chunk) >= chunk_lines:
                flush()
        if chunk:
            flush()
    counts["truncated"] = generator.report.truncated - before
    return counts

"""Generate with a seq2seq model: beam search or sampling, n-best lists, batches sorted by length.

:class:`ParaphraseGenerator` wraps any ``AutoModelForSeq2SeqLM`` folder or Hub id (a model trained by
:func:`~paranmt_hf.paraphrase_generator.train.train_seq2seq`, or any other). Inputs are generated in batches of
similar length (less padding) and returned in input order; an input longer than the model's limit is truncated and
counted (:attr:`GenerationReport.truncated`), never dropped; an empty input is refused with its position.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..utils.imports import require
from .train import load_seq2seq


@dataclass
class DecodingSettings:
    """How to decode (``transformers`` ``generate`` arguments).

    Attributes:
        num_beams: beam width (1 with ``do_sample=False``: greedy).
        num_return: candidates per input (at most ``num_beams`` for beam search): the n-best list.
        do_sample: sample instead of searching.
        top_k / top_p / temperature: sampling settings (None: the model's defaults).
        max_new_tokens: longest output (None: the input's length in tokens × 2 + 10, at most the model's limit).
        no_repeat_ngram_size: forbid repeating n-grams of this size (0: allowed).
        seed: the sampling seed.
    """

    num_beams: int = 4
    num_return: int = 1
    do_sample: bool = False
    top_k: int | None = None
    top_p: float | None = None
    temperature: float | None = None
    max_new_tokens: int | None = None
    no_repeat_ngram_size: int = 0
    seed: int = 0

    def check(self) -> None:
        """Raise a ValueError for settings ``generate`` would reject or silently change."""
        if self.num_beams < 1 or self.num_return < 1:
            raise ValueError("num_beams and num_return must be >= 1")
        if not self.do_sample and self.num_return > self.num_beams:
            raise ValueError(f"beam search returns at most num_beams ({self.num_beams}) candidates, "
                             f"not {self.num_return}: raise --num-beams or sample (--do-sample)")


@dataclass
class GenerationReport:
    """Counts of a generation run."""

    inputs: int = 0
    truncated: int = 0


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

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str], trust_remote_code: bool = False,
                        max_input_tokens: int | None = None) -> ParaphraseGenerator:
        """Load a seq2seq folder or Hub id (a clear error when it is not an encoder-decoder)."""
        model, tokenizer = load_seq2seq(path, trust_remote_code)
        return cls(model, tokenizer, max_input_tokens)

    def generate(self, texts: Sequence[str], settings: DecodingSettings | None = None, batch_size: int = 32,
                 progress: bool = False) -> list[list[str]]:
        """The candidates of each text (``settings.num_return`` each, best first for beam search)."""
        torch = require("torch", "generator")
        settings = settings or DecodingSettings()
        settings.check()
        for i, text in enumerate(texts):
            if not text.strip():
                raise ValueError(f"input {i + 1} is empty")
        encoded = self.tokenizer(list(texts), truncation=False, verbose=False)["input_ids"]
        lengths = [len(ids) for ids in encoded]
        self.report.inputs += len(texts)
        self.report.truncated += sum(n > self.max_input_tokens for n in lengths)
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        out: list[list[str]] = [[] for _ in texts]
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc="generate", unit=" inputs", dynamic_ncols=True)
        if settings.do_sample:
            torch.manual_seed(settings.seed)
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                batch = self.tokenizer([texts[i] for i in rows], truncation=True, max_length=self.max_input_tokens,
                                       padding=True, return_tensors="pt").to(self.model.device)
                longest = int(batch["attention_mask"].sum(dim=1).max())
                limit = getattr(self.model.config, "max_position_embeddings", None) or 10**6
                new_tokens = settings.max_new_tokens or min(2 * longest + 10, limit)
                kwargs: dict[str, Any] = {"num_beams": settings.num_beams, "num_return_sequences": settings.num_return,
                                          "do_sample": settings.do_sample, "max_new_tokens": new_tokens,
                                          "no_repeat_ngram_size": settings.no_repeat_ngram_size}
                for name in ("top_k", "top_p", "temperature"):
                    if getattr(settings, name) is not None:
                        kwargs[name] = getattr(settings, name)
                ids = self.model.generate(**batch, **kwargs)
                decoded = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
                for k, i in enumerate(rows):
                    out[i] = [t.strip() for t in decoded[k * settings.num_return : (k + 1) * settings.num_return]]
                if bar is not None:
                    bar.update(len(rows))
        if bar is not None:
            bar.close()
        return out

    def paraphrase(self, texts: Sequence[str], settings: DecodingSettings | None = None,
                   batch_size: int = 32) -> list[str]:
        """The best candidate of each text."""
        return [c[0] for c in self.generate(texts, settings, batch_size)]


def paraphrase_file(generator: ParaphraseGenerator, input_path: str | os.PathLike[str],
                    output_path: str | os.PathLike[str], settings: DecodingSettings | None = None,
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
            for text, candidates in zip(chunk, generator.generate(chunk, settings, batch_size, progress), strict=True):
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

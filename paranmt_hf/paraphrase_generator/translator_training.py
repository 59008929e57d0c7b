"""Train a translation model into English from scratch on a bitext: the offline route to back-translation.

:func:`train_translator` reads a two-column bitext (the source column from ``source_column`` or an ``en-xx`` /
``xx-en`` file name), removes exact duplicate pairs, holds out a seeded sample (or reads a test bitext), trains a
small Marian transformer with a unigram tokenizer built from both sides of the training pairs
(:func:`~paranmt_hf.paraphrase_generator.train.train_seq2seq`: ``Seq2SeqTrainer``), translates the held-out sources
(beam search) and scores them with sacrebleu's corpus BLEU. The folder, written atomically, holds the model, its
tokenizer, ``generator_summary.json`` (the training) and ``translator_metrics.json`` (languages, data counts, BLEU
and its signature, a few examples).

The folder is ready for both engines of ``paranmt-hf corpus backtranslate``: the generation config caps a
translation at ``max_length`` new tokens (its ``max_length`` is that + 1, the decoder's start token included, which
``generate`` and the CTranslate2 engine both read; no ``max_new_tokens`` beside it), the position table covers every
position a source of ``max_length`` tokens or such a translation reaches, and the tokenizer truncates sources at
``max_length``.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data.configs import bitext_sides
from ..data.reader import check_input_files
from ..data.records import BadLineReport, iter_records
from ..utils.atomic import atomic_output, check_output
from ..utils.imports import require
from .build import SIZES, Seq2SeqSize
from .train import GeneratorError, Seq2SeqTrainingSettings, train_seq2seq

logger = logging.getLogger("paranmt_hf.paraphrase_generator")

METRICS_NAME = "translator_metrics.json"
POSITION_MARGIN = 2
"""Positions beyond the longest source / translation (``max_length`` tokens): the decoder's start token and one
spare (``build_seq2seq_model`` makes ``max_length + 2``)."""


class TranslatorError(GeneratorError):
    """A bitext or option problem of :func:`train_translator`, said in one sentence."""


@dataclass
class TranslatorResult:
    """What :func:`train_translator` wrote: the folder, its metrics, the held-out pairs and their translations."""

    output: Path
    metrics: dict[str, Any] = field(default_factory=dict)
    held_out: list[tuple[str, str]] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)


def read_bitext(paths: Sequence[str | os.PathLike[str]], source_column: int | None = None,
                report: BadLineReport | None = None) -> list[tuple[str, str]]:
    """``(source, target)`` pairs of two-column bitext files (bad lines skipped and counted in ``report``).

    Raises:
        TranslatorError: a file whose source column neither ``source_column`` (1 or 2) nor its name says.
    """
    if source_column not in (None, 1, 2):
        raise TranslatorError(f"--source-column must be 1 or 2 (a bitext has two columns), got {source_column}")
    pairs: list[tuple[str, str]] = []
    for path in paths:
        first = source_column == 1 if source_column is not None else None
        if first is None:
            sides = bitext_sides(path)
            if sides is None:
                raise TranslatorError(f"cannot tell which column of {path} is the source language: pass "
                                      "--source-column 1|2 (or name the file en-xx / xx-en)")
            first = not sides[0]
        for _, _, record in iter_records([path], "bitext", report=report):
            a, b = record["text_a"], record["text_b"]
            pairs.append((a, b) if first else (b, a))
    return pairs


def split_held_out(pairs: Sequence[tuple[str, str]], held_out: int, seed: int) -> tuple[list, list]:
    """``(training, held-out)``: ``held_out`` pairs drawn with ``seed``, the rest in their order."""
    if held_out <= 0:
        return list(pairs), []
    if held_out >= len(pairs):
        raise TranslatorError(f"--held-out {held_out} leaves no training pair ({len(pairs)} distinct pairs): hold "
                              "out fewer")
    chosen = set(random.Random(seed).sample(range(len(pairs)), held_out))
    return [p for i, p in enumerate(pairs) if i not in chosen], [p for i, p in enumerate(pairs) if i in chosen]


def default_held_out(pairs: int) -> int:
    """2% of the pairs, at least 1 and at most 2,000 (none for fewer than 10 pairs)."""
    return 0 if pairs < 10 else min(2000, max(1, round(pairs * 0.02)))


def translate(model_dir: str | os.PathLike[str], sources: Sequence[str], num_beams: int = 4, batch_size: int = 32,
              progress: bool = False) -> list[str]:
    """Beam-search translations of ``sources`` with a seq2seq folder (its generation config's length cap)."""
    torch = require("torch", "generator")
    transformers = require("transformers", "generator")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    out: list[str] = [""] * len(sources)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(sources), desc="translate held-out", unit=" sentences", dynamic_ncols=True)
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            inputs = tokenizer([sources[i] for i in batch], return_tensors="pt", padding=True, truncation=True)
            generated = model.generate(**inputs, num_beams=num_beams)
            for i, text in zip(batch, tokenizer.batch_decode(generated, skip_special_tokens=True), strict=True):
                out[i] = text
            if bar is not None:
                bar.update(len(batch))
    if bar is not None:
        bar.close()
    return out


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> dict[str, Any]:
    """Corpus BLEU by sacrebleu (13a tokens, cased: its default signature) with its signature."""
    sacrebleu = require("sacrebleu", "generator")
    metric = sacrebleu.BLEU()
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return {"score": score.score, "signature": str(metric.get_signature()), "sentences": len(hypotheses)}


def _engine_ready(folder: Path, max_length: int) -> dict[str, int]:
    """Make the saved config, generation config and tokenizer agree on the length limits (see the module)."""
    transformers = require("transformers", "generator")
    config = transformers.AutoConfig.from_pretrained(folder)
    positions = max_length + POSITION_MARGIN
    if config.max_position_embeddings < positions:
        raise TranslatorError(f"the model has {config.max_position_embeddings} positions, fewer than {positions}")
    generation = transformers.GenerationConfig.from_pretrained(folder)
    generation.max_new_tokens = None  # one cap, read the same way by both engines (and no warning from generate)
    generation.max_length = max_length + 1  # the decoder's start token and max_length new tokens
    generation.save_pretrained(folder)
    tokenizer_config = folder / "tokenizer_config.json"
    values = json.loads(tokenizer_config.read_text(encoding="utf-8"))
    values["model_max_length"] = max_length
    tokenizer_config.write_text(json.dumps(values, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"max_position_embeddings": config.max_position_embeddings, "max_new_tokens": max_length,
            "max_source_tokens": max_length}


def train_translator(
    bitext: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    source_lang: str,
    target_lang: str = "en",
    source_column: int | None = None,
    test: Sequence[str | os.PathLike[str]] = (),
    held_out: int | None = None,
    size: str | Seq2SeqSize = "small",
    vocab_size: int = 8000,
    settings: Seq2SeqTrainingSettings | None = None,
    num_beams: int = 4,
    overwrite: bool = False,
) -> TranslatorResult:
    """Train a Marian translation model from ``source_lang`` into ``target_lang`` on ``bitext`` and measure its BLEU.

    Args:
        bitext: two-column files (TSV, .gz, .zip); bad lines are skipped and counted.
        output: the model folder to write (never an input; an existing one only with ``overwrite``).
        source_lang: the source language's code (recorded; the model has no language tokens).
        target_lang: the target language's code (English by default).
        source_column: 1 or 2, the source column of every file (None: from ``en-xx`` / ``xx-en`` file names).
        test: held-out bitext files (same columns); none: ``held_out`` pairs drawn from ``bitext``.
        held_out: pairs held out when no ``test`` (None: :func:`default_held_out`; 0: no BLEU).
        size: the model's size (:data:`~paranmt_hf.paraphrase_generator.build.SIZES`).
        vocab_size: the tokenizer's vocabulary, built from both sides of the training pairs.
        settings: the training settings (``max_length`` caps sources and translations, in tokens).
        num_beams: beam width of the held-out translations.
        overwrite: replace an existing ``output``.

    Raises:
        TranslatorError: an unusable bitext or option; OutputIsInputError / OutputExistsError for ``output``.
    """
    settings = settings or Seq2SeqTrainingSettings()
    inputs = [os.fspath(p) for p in (*bitext, *test)]
    check_input_files(inputs)
    check_output(output, inputs, overwrite)
    if not source_lang or not target_lang:
        raise TranslatorError("--source-lang and --target-lang must be language codes, e.g. de and en")
    if isinstance(size, str) and size not in SIZES:
        raise TranslatorError(f"unknown size {size!r}; choose one of {tuple(SIZES)}")
    if num_beams < 1 or settings.max_length < 1:
        raise TranslatorError("--num-beams and --max-length must be >= 1")
    report = BadLineReport()
    read = read_bitext(bitext, source_column, report)
    pairs = list(dict.fromkeys(read))
    if test:
        train_pairs, test_pairs = pairs, list(dict.fromkeys(read_bitext(test, source_column, report)))
        seen = set(test_pairs)
        train_pairs = [p for p in train_pairs if p not in seen]
    else:
        count = default_held_out(len(pairs)) if held_out is None else held_out
        train_pairs, test_pairs = split_held_out(pairs, count, settings.seed)
    if not train_pairs:
        raise TranslatorError(f"no training pair in {', '.join(map(str, bitext))}"
                              + (f" ({report.summary()})" if report.total_bad else ""))
    data = {"bitext": [os.fspath(p) for p in bitext], "test": [os.fspath(p) for p in test], "lines": len(read),
            "duplicates": len(read) - len(pairs), "bad_lines": report.as_dict(), "training_pairs": len(train_pairs),
            "held_out_pairs": len(test_pairs)}
    with atomic_output(output, inputs, overwrite, directory=True) as tmp:
        inner = tmp / "model"
        run = train_seq2seq([s for s, _ in train_pairs], [t for _, t in train_pairs], inner, size=size,
                            vocab_size=vocab_size, settings=settings,
                            extra_summary={"task": "translation", "source_lang": source_lang,
                                           "target_lang": target_lang, "data": data})
        for item in inner.iterdir():
            shutil.move(str(item), tmp / item.name)
        inner.rmdir()
        limits = _engine_ready(tmp, settings.max_length)
        hypotheses = translate(tmp, [s for s, _ in test_pairs], num_beams, progress=settings.progress) \
            if test_pairs else []
        metrics: dict[str, Any] = {
            "task": "translation", "source_lang": source_lang, "target_lang": target_lang, "data": data,
            "model": {"architecture": "marian", "size": size if isinstance(size, str) else "custom",
                      "vocab_size": run.summary["base"].get("vocab_size"), **limits},
            "training": {k: run.summary.get(k) for k in ("steps", "epochs_done", "train_loss", "seconds",
                                                         "stopped_by_cpu_limit")},
            "bleu": None, "num_beams": num_beams,
        }
        if test_pairs:
            metrics["bleu"] = bleu(hypotheses, [t for _, t in test_pairs])
            metrics["examples"] = [{"source": s, "reference": t, "translation": h}
                                   for (s, t), h in zip(test_pairs[:5], hypotheses[:5], strict=True)]
        (tmp / METRICS_NAME).write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return TranslatorResult(Path(output), metrics, test_pairs, hypotheses)

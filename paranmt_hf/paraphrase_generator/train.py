"""Train a ``transformers`` encoder-decoder on (source, target) pairs with ``Seq2SeqTrainer``.

:func:`train_seq2seq` is the one training loop: a paraphrase generator (ParaNMT-50M §6) is a model trained on
paraphrase pairs in both directions (:func:`~paranmt_hf.paraphrase_generator.data.generator_pairs`), a translation
model one trained on (foreign, English) pairs. The model is any ``AutoModelForSeq2SeqLM`` (Hub id or folder:
BART, T5, Marian, ...) with its tokenizer, or a small Marian built from a config with a tokenizer trained on the
pairs (:mod:`~paranmt_hf.paraphrase_generator.build`). Batches group pairs of similar length; the learning rate
warms up then decays as the inverse square root of the step (the transformer schedule, which needs no total step
count, so a CPU-time budget can end a run at any step). The output folder holds the model, its tokenizer, its
generation defaults and ``generator_summary.json`` (data, settings, steps, losses, time).
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..utils.atomic import atomic_output, check_output, local_paths
from ..utils.imports import require
from .build import SIZES, Seq2SeqSize, build_seq2seq_model, train_seq2seq_tokenizer, zero_pad_row

logger = logging.getLogger("paranmt_hf.paraphrase_generator")

SUMMARY_NAME = "generator_summary.json"


class GeneratorError(ValueError):
    """A model or data problem, said in one sentence."""


@dataclass
class Seq2SeqTrainingSettings:
    """How :func:`train_seq2seq` trains (defaults: a small model on CPU).

    Attributes:
        epochs: passes over the pairs (a float allowed).
        max_steps: stop after this many optimizer steps (overrides ``epochs`` when > 0).
        max_cpu_minutes: stop when the process has used this much CPU time (all threads), checked every step.
        logging_steps: log the loss every N steps.
        progress: tqdm progress bar.
        batch_size: pairs per step.
        learning_rate: peak learning rate (after warm-up).
        warmup_steps: linear warm-up, then inverse-square-root decay.
        weight_decay / label_smoothing: AdamW weight decay; label smoothing of the cross entropy.
        max_length: longest source / target in tokens (longer ones are truncated and counted).
        seed: data order and initialisation.
    """

    epochs: float = 10.0
    max_steps: int = -1
    max_cpu_minutes: float | None = None
    logging_steps: int = 100
    progress: bool = True
    batch_size: int = 64
    max_length: int = 128
    seed: int = 0
    # the optimiser (AdamW, warm-up then inverse-square-root decay) and the loss
    learning_rate: float = 5e-4
    warmup_steps: int = 400
    weight_decay: float = 0.0
    label_smoothing: float = 0.1


@dataclass
class Seq2SeqTrainingResult:
    """What a run did (also written as ``generator_summary.json``)."""

    output: Path
    summary: dict[str, Any] = field(default_factory=dict)


def load_seq2seq(model: str | os.PathLike[str], trust_remote_code: bool = False) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a seq2seq folder or Hub id; a clear error for anything else."""
    transformers = require("transformers", "generator")
    try:
        config = transformers.AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as err:
        raise GeneratorError(f"cannot read a model config from {model}: {err}") from None
    if not getattr(config, "is_encoder_decoder", False):
        raise GeneratorError(f"{model} is not an encoder-decoder (seq2seq) model (model_type "
                             f"{getattr(config, 'model_type', '?')!r}): pass a seq2seq model such as BART, T5 or "
                             "Marian, or none to build a small one")
    tokenizer = transformers.AutoTokenizer.from_pretrained(model, trust_remote_code=trust_remote_code)
    loaded = transformers.AutoModelForSeq2SeqLM.from_pretrained(model, trust_remote_code=trust_remote_code)
    return loaded, tokenizer


def encode_pairs(tokenizer: Any, sources: Sequence[str], targets: Sequence[str],
                 max_length: int) -> tuple[dict[str, list[Any]], dict[str, int]]:
    """Token ids of the pairs (``input_ids``, ``labels``, ``length``), truncated to ``max_length``.

    Returns the columns and counts: pairs, truncated sources, truncated targets.
    """
    if len(sources) != len(targets):
        raise ValueError(f"need as many sources as targets ({len(sources)} vs {len(targets)})")
    full = tokenizer(list(sources), text_target=list(targets), truncation=False)
    inputs, labels = full["input_ids"], full["labels"]
    counts = {"pairs": len(inputs), "truncated_sources": 0, "truncated_targets": 0}
    eos = tokenizer.eos_token_id

    def cut(ids: list[int], what: str) -> list[int]:
        if len(ids) <= max_length:
            return ids
        counts[what] += 1
        keep_eos = eos is not None and ids[-1] == eos
        return ids[: max_length - 1] + [eos] if keep_eos else ids[:max_length]

    inputs = [cut(ids, "truncated_sources") for ids in inputs]
    labels = [cut(ids, "truncated_targets") for ids in labels]
    return {"input_ids": inputs, "labels": labels, "length": [len(i) for i in inputs]}, counts


def _time_limit_callback(limit_minutes: float) -> Any:
    transformers = require("transformers", "generator")

    class CPUTimeLimit(transformers.TrainerCallback):
        """Stop training when the process has used ``limit_minutes`` of CPU time."""

        def __init__(self) -> None:
            self.start = time.process_time()
            self.stopped_at: int | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            self.start = time.process_time()
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if time.process_time() - self.start >= limit_minutes * 60:
                control.should_training_stop = True
                self.stopped_at = state.global_step
            return control

    return CPUTimeLimit()


def _zero_pad_callback() -> Any:
    transformers = require("transformers", "generator")

    class ZeroPadRow(transformers.TrainerCallback):
        """Keep a from-scratch Marian's ``<pad>`` embedding row at zero (see :mod:`.build`)."""

        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> Any:
            if model is not None:
                zero_pad_row(model)
            return control

    return ZeroPadRow()


def _mean_loss(model: Any, columns: dict[str, list[Any]], tokenizer: Any, batch_size: int) -> float:
    """Mean per-token cross entropy (no label smoothing) of the pairs."""
    torch = require("torch", "generator")
    transformers = require("transformers", "generator")
    collator = transformers.DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)
    model.eval()
    total, tokens = 0.0, 0
    rows = [{"input_ids": i, "labels": lab} for i, lab in zip(columns["input_ids"], columns["labels"], strict=True)]
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            batch = collator(rows[start : start + batch_size])
            batch = {k: v.to(model.device) for k, v in batch.items()}
            logits = model(**batch).logits
            labels = batch["labels"]
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                                     ignore_index=-100, reduction="sum")
            total += float(loss)
            tokens += int((labels != -100).sum())
    return total / max(tokens, 1)


def train_seq2seq(
    sources: Sequence[str],
    targets: Sequence[str],
    output: str | os.PathLike[str],
    model: str | os.PathLike[str] | None = None,
    size: str | Seq2SeqSize = "small",
    vocab_size: int = 8000,
    settings: Seq2SeqTrainingSettings | None = None,
    eval_sources: Sequence[str] = (),
    eval_targets: Sequence[str] = (),
    overwrite: bool = False,
    trust_remote_code: bool = False,
    extra_summary: dict[str, Any] | None = None,
) -> Seq2SeqTrainingResult:
    """Train a seq2seq model on ``sources`` -> ``targets`` and save it (with its tokenizer) to ``output``.

    Args:
        sources: input texts.
        targets: the texts to generate from them.
        output: the model folder to write (atomically; never replaces an existing one without ``overwrite``).
        model: a seq2seq model (Hub id or folder) to fine-tune; None builds a Marian of ``size`` and its tokenizer.
        size: the from-scratch model's size (a name in :data:`~paranmt_hf.paraphrase_generator.build.SIZES`).
        vocab_size: the from-scratch tokenizer's vocabulary.
        settings: the training settings (:class:`Seq2SeqTrainingSettings`).
        eval_sources: held-out inputs whose loss is measured at the end.
        eval_targets: their targets.
        overwrite: replace an existing ``output``.
        trust_remote_code: allow the model folder's own code (off by default).
        extra_summary: added to ``generator_summary.json`` (e.g. the data's provenance).
    """
    torch = require("torch", "generator")
    transformers = require("transformers", "generator")
    datasets = require("datasets", "generator")
    settings = settings or Seq2SeqTrainingSettings()
    check_output(output, local_paths(model), overwrite=overwrite)  # never over the model it fine-tunes
    if not sources:
        raise GeneratorError("no training pairs")
    start, cpu_start = time.perf_counter(), time.process_time()
    if model is None:
        tokenizer = train_seq2seq_tokenizer([*sources, *targets], vocab_size, settings.max_length)
        seq2seq = build_seq2seq_model(tokenizer, size, settings.max_length, settings.seed)
        shape = SIZES[size] if isinstance(size, str) else size
        base: dict[str, Any] = {"from_scratch": "marian", "size": size if isinstance(size, str) else "custom",
                                "shape": shape.as_dict(), "vocab_size": len(tokenizer)}
    else:
        seq2seq, tokenizer = load_seq2seq(model, trust_remote_code)
        base = {"model": str(model)}
    columns, counts = encode_pairs(tokenizer, sources, targets, settings.max_length)
    train_set = datasets.Dataset.from_dict(columns)
    callbacks = [_zero_pad_callback()] if model is None else []
    limit = _time_limit_callback(settings.max_cpu_minutes) if settings.max_cpu_minutes else None
    if limit is not None:
        callbacks.append(limit)
    with atomic_output(output, local_paths(model), overwrite=overwrite, directory=True) as tmp:
        args = transformers.Seq2SeqTrainingArguments(
            output_dir=str(tmp / "checkpoints"), per_device_train_batch_size=settings.batch_size,
            learning_rate=settings.learning_rate, lr_scheduler_type="inverse_sqrt",
            warmup_steps=settings.warmup_steps, weight_decay=settings.weight_decay,
            num_train_epochs=settings.epochs, max_steps=settings.max_steps,
            label_smoothing_factor=settings.label_smoothing, logging_steps=settings.logging_steps,
            save_strategy="no", eval_strategy="no", report_to="none", seed=settings.seed,
            use_cpu=not torch.cuda.is_available(), train_sampling_strategy="group_by_length",
            length_column_name="length", disable_tqdm=not settings.progress, dataloader_num_workers=0,
        )
        trainer = transformers.Seq2SeqTrainer(
            model=seq2seq, args=args, train_dataset=train_set, processing_class=tokenizer,
            data_collator=transformers.DataCollatorForSeq2Seq(tokenizer, model=seq2seq, label_pad_token_id=-100),
            callbacks=callbacks,
        )
        if not settings.progress:  # without the bar, the trainer prints its logs instead: silent means silent
            trainer.remove_callback(transformers.PrinterCallback)
        outcome = trainer.train()
        losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
        summary: dict[str, Any] = {
            "task": "seq2seq", "base": base, "pairs": counts, "settings": {**vars(settings)},
            "steps": trainer.state.global_step, "epochs_done": trainer.state.epoch,
            "train_loss": outcome.training_loss, "last_logged_loss": losses[-1] if losses else None,
            "stopped_by_cpu_limit": bool(limit is not None and limit.stopped_at is not None),
            "training_cpu_seconds": time.process_time() - limit.start if limit is not None else None,
            "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu_start,
            "torch_threads": torch.get_num_threads(), **(extra_summary or {}),
        }
        if eval_sources:
            eval_columns, _ = encode_pairs(tokenizer, eval_sources, eval_targets, settings.max_length)
            loss = _mean_loss(seq2seq, eval_columns, tokenizer, settings.batch_size)
            summary["eval"] = {"pairs": len(eval_sources), "loss": loss, "perplexity": math.exp(min(loss, 50))}
        import shutil

        shutil.rmtree(tmp / "checkpoints", ignore_errors=True)
        seq2seq.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / SUMMARY_NAME).write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    return Seq2SeqTrainingResult(Path(output), summary)

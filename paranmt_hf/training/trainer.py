"""Train a ParaNMT encoder with the stock ``SentenceTransformerTrainer`` and the papers' mega-batch margin loss.

The pieces live by concept: :mod:`.recipes` (hyper-parameters), :mod:`.plan` (the recipe cut into each step's spec,
once), :mod:`.data` (training pairs), :mod:`.checkpoints` (run records, resuming), :mod:`.initial_model` (model spec
-> untrained model), :mod:`.optim` (LazyAdam, sparse gradients, the teacher's tables' rates), :mod:`.loss` (loss
spec -> loss), :mod:`.hf_trainer` (the trainer class, its arguments and callbacks), :mod:`.teacher` (the teacher's
table after training) and :mod:`.distributed` (torchrun ranks). This module runs them in that order; each takes its
own spec, none the whole recipe.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from ..utils.atomic import OutputIsInputError, atomic_write_json, output_lock, remove_temps_in
from ..utils.imports import require_extras
from .checkpoints import (
    LOSS_STATE_FILE,
    earlier_run,
    is_complete,
    list_checkpoints,
    refuse_earlier_run,
    resume_point,
    run_record,
)
from .data import PairSource, has_bitext, load_pairs
from .distributed import is_main_process, world_size
from .initial_model import initial_encoder
from .loss import make_loss
from .optim import run_optimizer, set_sparse_embeddings
from .plan import plan_training
from .recipes import Recipe, training_extras

logger = logging.getLogger(__name__)


class _DropMtimeWarning(logging.Filter):
    """Drop transformers' warning that checkpoint times look unreliable.

    It comes when two checkpoints are saved within a second (a short run); transformers then orders them by step
    number, the right order for ours (``checkpoint-<step>``): nothing for the user to do.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("mtime may not be reliable")


logging.getLogger("transformers.trainer_utils").addFilter(_DropMtimeWarning())

INIT_DIR = "initial-model"
CHECKPOINT_DIR = "checkpoints"
SUMMARY_FILE = "training_summary.json"


def run_folder(output_dir: str | os.PathLike[str]) -> Path:
    """Where a run into ``output_dir`` keeps what is not the model (checkpoints, the initial model).

    That is ``checkpoints/`` (for ``--resume``) and ``initial-model/`` (the untrained model it started from), in a
    hidden folder next to the model folder, ``.NAME.paranmt-train`` (as the corpus tools keep their work folder next
    to their output), so that the model folder holds the model alone. A run that saves its model removes it
    (unless ``keep_checkpoints``); a run that stops keeps it for ``resume``.
    """
    out = Path(os.path.abspath(output_dir))
    return out.parent / f".{out.name}.paranmt-train"


@dataclass
class TrainResult:
    """What a training run produced."""

    output_dir: str
    steps: int
    seconds: float
    train_pairs: int
    world_size: int
    threads: int = 1
    dev_scores: list[dict[str, float]] = field(default_factory=list)
    loss_stats: dict[str, Any] = field(default_factory=dict)
    resumed_from_step: int = 0


@dataclass(frozen=True)
class RunOptions:
    """How to run a training (everything but the recipe, the data and the output folder); see :func:`train`."""

    seed: int = 0
    dev_evaluator: Any = None
    eval_steps: int | None = None
    save_steps: int = 500
    resume: bool = False
    max_steps: int = -1
    logging_steps: int = 50
    show_progress: bool = True
    overwrite: bool = False
    teacher_sentences: int | str | None = None
    notify: Callable[[str], None] | None = None
    keep_checkpoints: bool = False


def train(
    recipe: Recipe,
    sources: Sequence[PairSource | str],
    output_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    dev_evaluator: Any = None,
    eval_steps: int | None = None,
    save_steps: int = 500,
    resume: bool = False,
    max_steps: int = -1,
    logging_steps: int = 50,
    show_progress: bool = True,
    overwrite: bool = False,
    teacher_sentences: int | str | None = None,
    notify: Callable[[str], None] | None = None,
    keep_checkpoints: bool = False,
) -> TrainResult:
    """Train ``recipe`` on ``sources`` and save a model directory that loads everywhere into ``output_dir``.

    Args:
        recipe: the hyper-parameters (see :mod:`paranmt_hf.training.recipes`).
        sources: training files (``"CONFIG:PATH,..."`` strings or :class:`PairSource`).
        output_dir: where the final model goes (checkpoints in :func:`run_folder` next to it); written atomically.
        seed: seed of shuffling, initialisation, dropout and scrambling (runs are deterministic for a seed).
        dev_evaluator: a sentence-transformers evaluator run every ``eval_steps`` (e.g. STS17 en-en).
        eval_steps: evaluation interval (default: ``save_steps``).
        save_steps: checkpoint interval in optimizer steps.
        resume: continue from the latest checkpoint of the same recipe, data and seed (else ``ResumeError``).
        max_steps: stop after this many steps (``-1``: train ``recipe.epochs`` epochs).
        logging_steps: loss logging interval.
        show_progress: show the trainer's progress bars.
        overwrite: replace an earlier run in ``output_dir`` (else ``OutputExistsError``).
        teacher_sentences: most unique sentences the ``tokenlearn`` teacher pass embeds (``"all"``: the recipe's).
        notify: called with a message before training starts (``None``: logged at INFO).
        keep_checkpoints: keep :func:`run_folder` once the model is saved, to extend the run later with ``resume``.
    """
    options = RunOptions(
        seed=seed,
        dev_evaluator=dev_evaluator,
        eval_steps=eval_steps,
        save_steps=save_steps,
        resume=resume,
        max_steps=max_steps,
        logging_steps=logging_steps,
        show_progress=show_progress,
        overwrite=overwrite,
        teacher_sentences=teacher_sentences,
        notify=notify,
        keep_checkpoints=keep_checkpoints,
    )
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other: continue the run, or replace it")
    return _train(recipe, list(sources), Path(output_dir), options)


OUTPUT_ARTIFACTS = (SUMMARY_FILE, "config.json", "model.safetensors")
"""What a run writes into its output folder (an earlier run's copies need ``--resume`` or ``--overwrite``)."""
RUN_ARTIFACTS = (CHECKPOINT_DIR, INIT_DIR)
"""What a run writes into its :func:`run_folder`."""


def _remove_killed_runs_temps(out: Path) -> None:
    """Temporary files that killed runs left in the folder and its checkpoints (this run holds the folder's lock)."""
    removed = remove_temps_in(out)
    for checkpoint in list_checkpoints(run_folder(out) / CHECKPOINT_DIR):
        removed += remove_temps_in(checkpoint)
        half_written = checkpoint / f".{LOSS_STATE_FILE}.tmp"
        if half_written.exists():
            half_written.unlink()
            removed.append(half_written)
    if removed:
        logger.warning("removed %d temporary file(s) left in %s by a killed run", len(removed), out)


def _model_files(out: Path) -> list[Path]:
    """The saved model's entries in a run folder (config, weights, tokenizer, remote code, static/)."""
    from ..model.encoder import ParaNMTEncoder

    if not out.is_dir():
        return []
    return [p for p in out.iterdir() if ParaNMTEncoder.is_model_file(p.name)]


def nothing_to_resume(out: Path) -> bool:
    """Whether an earlier run into ``out`` left nothing to continue or keep: no model, no complete checkpoint.

    A run killed (or out of space) before its first complete checkpoint leaves only its initial model and
    incomplete checkpoints; a new run, with or without ``resume``, starts over them.
    """
    return not earlier_run(out, OUTPUT_ARTIFACTS) and not any(
        is_complete(p) for p in list_checkpoints(run_folder(out) / CHECKPOINT_DIR))


def _check_output(out: Path, sources: list[PairSource | str], options: RunOptions) -> list[Path]:
    """Refuse a folder that holds an earlier run unless resuming or overwriting; returns what overwrite clears.

    What a run that never reached a complete checkpoint left is cleared without ``overwrite``: nothing of it can be
    resumed or kept.
    """
    if options.resume or not is_main_process():  # rank 0 alone checks and clears (the others start meanwhile)
        return []
    state = run_folder(out)
    found = earlier_run(out, OUTPUT_ARTIFACTS)
    found += [f"{state.name}/{name}" for name in earlier_run(state, RUN_ARTIFACTS)]
    if not found:
        return []
    if nothing_to_resume(out):
        logger.warning("%s holds what an interrupted run left (no model, no complete checkpoint): starting anew",
                       state)
    elif not options.overwrite:
        refuse_earlier_run(out, found)
    cleared = [state / CHECKPOINT_DIR, state / INIT_DIR, out / SUMMARY_FILE, *_model_files(out)]
    for source in sources:
        for path in (PairSource.parse(source) if isinstance(source, str) else source).files:
            resolved = Path(path).resolve()
            hit = next((c for c in cleared if resolved == c.resolve() or c.resolve() in resolved.parents), None)
            if hit is not None:
                raise OutputIsInputError(f"training file {path} lies in the earlier run's files that overwrite=True "
                                         f"would delete; move it out of {hit.parent} first")
    return cleared


def _clear(paths: list[Path]) -> None:
    """Delete an earlier run's checkpoints, initial model, summary and model (``overwrite``, once data loaded).

    The folder then never shows the old model next to the new run's checkpoints.
    """
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    if paths:
        logger.warning("deleted the earlier run's model and checkpoints (%s)",
                       ", ".join(sorted({os.fspath(p.parent) for p in paths})))


def _saved_steps(out: Path) -> int | None:
    """The steps of the final model saved in ``out`` (its training summary), None when there is none."""
    summary = out / SUMMARY_FILE
    if not (summary.is_file() and (out / "config.json").is_file()):
        return None
    try:
        return int(json.loads(summary.read_text(encoding="utf-8"))["steps"])
    except (ValueError, KeyError, TypeError):
        return None


def _train(recipe: Recipe, sources: list[PairSource | str], out: Path, options: RunOptions) -> TrainResult:
    """:func:`train`'s route: the recipe is cut into its steps' specs once (:func:`plan_training`).

    Then each step takes its own spec, in the order of the run: the data, the run record and resume point, the
    teacher pass's plan, the initial model, the optimizer, the loss, the trainer, the teacher's table, the save.
    """
    from sentence_transformers import SentenceTransformer
    from transformers import set_seed

    from ..model.encoder import ParaNMTEncoder
    from ..modeling.input_module_paranmt import ParaNMTInputModule
    from .hf_trainer import (
        DivergenceCallback,
        ParaNMTTrainer,
        RunStateCallback,
        dev_scores,
        finished_run,
        loss_stats,
        training_arguments,
    )

    parsed = [s if isinstance(s, PairSource) else PairSource.parse(s) for s in sources]
    require_extras(*training_extras(recipe, [s.config for s in parsed]), feature="training")
    plan = plan_training(recipe)
    set_seed(options.seed)
    with contextlib.ExitStack() as run:
        run.callback(torch.set_num_threads, torch.get_num_threads())
        torch.set_num_threads(plan.threads or torch.get_num_threads())
        if out.exists() and not out.is_dir():
            raise NotADirectoryError(f"output_dir {out} is a file, not a folder")
        if is_main_process():
            # one run at a time in a folder: a second run into it is refused (OutputBusyError) while this one lives
            run.enter_context(output_lock(out))
            _remove_killed_runs_temps(out)
        if options.resume and nothing_to_resume(out):  # killed before its first complete checkpoint: start it
            logger.warning("nothing to resume in %s (no complete checkpoint, no model): starting the run", out)
            options = replace(options, resume=False)
        earlier = _check_output(out, sources, options)
        pairs = load_pairs(sources, plan.max_pairs, options.seed)
        _clear(earlier)  # only now: a run that fails to read its data leaves the earlier run alone
        record = run_record(recipe, sources, options.seed)
        resumed = (resume_point(run_folder(out) / CHECKPOINT_DIR, record, plan.schedule, len(pairs),
                                options.max_steps, _saved_steps(out)) if options.resume else None)
        checkpoint, finished = (resumed.checkpoint, resumed.finished) if resumed else (None, False)
        finish = plan.finish
        if finish is not None and finish.tokenlearn is not None and is_main_process():
            # say what the teacher pass after training will embed and cost, before training
            from .teacher_pass import plan_teacher_pass

            teacher_pass = plan_teacher_pass(finish.tokenlearn, pairs["anchor"][:] + pairs["positive"][:],
                                             options.seed, options.max_steps, options.teacher_sentences)
            (options.notify or logger.info)(teacher_pass.message())
            finish = replace(finish, tokenlearn=replace(finish.tokenlearn, sentences=teacher_pass.limit))
        if is_main_process():
            (options.notify or logger.info)(
                f"checkpoints and the initial model go to {run_folder(out)}: kept if the run stops (for resume), "
                + ("kept" if options.keep_checkpoints else "removed") + " once the model is saved")
        encoder = initial_encoder(plan.model, pairs, run_folder(out) / INIT_DIR, options.resume, options.seed)
        optimizer = run_optimizer(plan.optimizer, encoder.model)
        model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu")
        loss = make_loss(plan.loss, model, has_bitext(sources), distributed=world_size() > 1)
        started = time.perf_counter()
        if finished:  # the run took its steps and stopped before its final save: the last checkpoint is the model
            steps, log_history = finished_run(checkpoint, loss)
        else:
            trainer = ParaNMTTrainer(
                model=model,
                args=training_arguments(plan.schedule, run_folder(out) / CHECKPOINT_DIR, seed=options.seed,
                                        max_steps=options.max_steps, save_steps=options.save_steps,
                                        eval_steps=options.eval_steps, logging_steps=options.logging_steps,
                                        evaluate=options.dev_evaluator is not None,
                                        show_progress=options.show_progress),
                train_dataset=pairs,
                loss=loss,
                evaluator=options.dev_evaluator,
                optimizers=(optimizer, None),
                callbacks=[RunStateCallback(loss, record, checkpoint), DivergenceCallback()],
            )
            if not options.show_progress:  # without the bar the trainer prints its logs instead: silent is silent
                from transformers import PrinterCallback

                trainer.remove_callback(PrinterCallback)
            state = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
            steps, log_history = state.global_step, trainer.state.log_history
        result = TrainResult(
            output_dir=str(out),
            steps=steps,
            seconds=time.perf_counter() - started,
            train_pairs=len(pairs),
            world_size=world_size(),
            dev_scores=dev_scores(log_history),
            loss_stats=loss_stats(loss),
            threads=torch.get_num_threads(),
            resumed_from_step=resumed.step if resumed else 0,
        )
        if not is_main_process():
            return result
        if finished:
            trained = ParaNMTEncoder.from_pretrained(checkpoint)
        else:
            trained = ParaNMTEncoder(model[0].model, model[0].tokenizer)
        set_sparse_embeddings(trained.model, False)  # saved models fine-tune with any optimizer
        teacher_stats: dict[str, Any] = {}
        if finish is not None:  # combine with / balance the teacher's table (paranmt_hf.training.teacher)
            from .teacher import finish_teacher_model

            started_teacher = time.perf_counter()
            trained = finish_teacher_model(finish, trained, pairs["anchor"][:], pairs["positive"][:],
                                           seed=options.seed, show_progress=options.show_progress,
                                           stats=teacher_stats)
            teacher_stats["seconds"] = round(time.perf_counter() - started_teacher, 1)
        trained.save_pretrained(out)
        summary = {
            "recipe": recipe.to_dict(),
            "sources": [str(PairSource.parse(s) if isinstance(s, str) else s) for s in sources],
            "seed": options.seed,
            **result.__dict__,
            **({"teacher": teacher_stats} if teacher_stats else {}),
        }
        atomic_write_json(out / SUMMARY_FILE, summary, default=str)
        if not options.keep_checkpoints:  # the model is saved: nothing is left to resume
            shutil.rmtree(run_folder(out), ignore_errors=True)
        return result

"""Checkpoints a run can trust: each records the run's arguments and the loss's state, and ``--resume`` checks them.

``paranmt-hf train`` adds two files to every checkpoint the Trainer writes (``OUTPUT/checkpoints/checkpoint-N``):

- ``loss_state.pt``: the mega-batch pool and annealing clock (tensors only; loaded with ``weights_only=True``), so a
  resumed run continues exactly as the uninterrupted run would;
- ``paranmt_run.json``, written last (atomically): the recipe, the data (path, size and sha256 of each file)
  and the seed. A checkpoint without it is incomplete (the process died while saving) and is never resumed from.

``--resume`` takes the newest complete checkpoint, refuses one whose recorded run differs from the current
arguments (naming each difference), refuses a run that already reached its last step and saved its model (a run
stopped between its last checkpoint and its final save is finished: the model is saved), and sets incomplete newer
checkpoints aside (renamed ``incomplete-checkpoint-N``, never deleted). A new run refuses a folder that holds an
earlier run unless ``--overwrite``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..utils.atomic import OutputExistsError
from ..utils.integrity import find_damaged_file
from .data import PairSource
from .distributed import is_main_process, world_size
from .recipes import Recipe, Schedule

logger = logging.getLogger(__name__)

RUN_FILE = "paranmt_run.json"
LOSS_STATE_FILE = "loss_state.pt"
TRAINER_STATE_FILE = "trainer_state.json"
INCOMPLETE_PREFIX = "incomplete-"
RUN_LAYOUT = 1

FREE_RECIPE_FIELDS = ("name", "description", "epochs", "num_threads")
"""Recipe fields a resumed run may change: labels, the length of the run (like ``--max-steps``), torch threads."""


class ResumeError(ValueError):
    """``--resume`` cannot continue this run (no complete checkpoint, different arguments, or already finished)."""


def file_fingerprint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Identity of a data file: resolved path, size and SHA-256 of its whole content.

    The hash is remembered per version of the file (:mod:`paranmt_hf.utils.content_hash`): a resumed run re-reads a
    data file only when it changed.
    """
    from ..utils.content_hash import file_sha256

    p = Path(path)
    if "://" in str(path):
        return {"path": str(path)}
    return {"path": str(p.resolve()), "bytes": p.stat().st_size, "sha256": file_sha256(p)}


def run_record(recipe: Recipe, sources: Sequence[PairSource | str], seed: int) -> dict[str, Any]:
    """What defines a run's trajectory: the recipe, the data files (fingerprinted) and the seed."""
    parsed = [PairSource.parse(s) if isinstance(s, str) else s for s in sources]
    return {
        "layout": RUN_LAYOUT,
        "recipe": recipe.to_dict(),
        "sources": [
            {"config": s.config, "repeat": s.repeat, "options": [list(o) for o in s.options],
             "files": [file_fingerprint(f) for f in s.files]}
            for s in parsed
        ],
        "seed": seed,
    }


def _differences(saved: Any, current: Any, where: str) -> list[str]:
    if isinstance(saved, dict) and isinstance(current, dict):
        out = []
        for key in sorted(set(saved) | set(current)):
            out += _differences(saved.get(key), current.get(key), f"{where}.{key}" if where else str(key))
        return out
    if isinstance(saved, list) and isinstance(current, list) and len(saved) == len(current):
        pairs = enumerate(zip(saved, current, strict=True))
        return [d for i, (a, b) in pairs for d in _differences(a, b, f"{where}[{i}]")]
    return [] if saved == current else [f"{where}: checkpoint {saved!r}, now {current!r}"]


def record_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Human-readable differences between two run records (free recipe fields ignored).

    A recipe field that the saved record lacks (added to :class:`Recipe` after the checkpoint was written) counts as
    its default value, which is how that run behaved.
    """
    saved, current = json.loads(json.dumps(saved)), json.loads(json.dumps(current))
    if isinstance(saved.get("recipe"), dict):
        saved["recipe"] = {**json.loads(json.dumps(Recipe().to_dict())), **saved["recipe"]}
    for record in (saved, current):
        for name in FREE_RECIPE_FIELDS:
            record.get("recipe", {}).pop(name, None)
    return _differences(saved, current, "")


def checkpoint_step(path: Path) -> int:
    """The step of ``checkpoint-N`` (``-1`` for a name without a number)."""
    try:
        return int(path.name.rsplit("-", 1)[-1])
    except ValueError:
        return -1


def is_complete(path: Path) -> bool:
    """Whether a checkpoint was completely written (its run record is written last)."""
    return (path / RUN_FILE).is_file() and (path / TRAINER_STATE_FILE).is_file()


def list_checkpoints(directory: Path) -> list[Path]:
    """``checkpoint-N`` folders of ``directory`` by increasing N."""
    if not directory.is_dir():
        return []
    found = [p for p in directory.glob("checkpoint-*") if p.is_dir() and checkpoint_step(p) >= 0]
    return sorted(found, key=checkpoint_step)


def set_aside_incomplete(directory: Path, after_step: int) -> list[Path]:
    """Rename incomplete checkpoints newer than ``after_step`` to ``incomplete-checkpoint-N`` (warned, kept)."""
    moved = []
    for path in list_checkpoints(directory):
        if checkpoint_step(path) > after_step and not is_complete(path):
            target = path.with_name(INCOMPLETE_PREFIX + path.name)
            if target.exists():
                shutil.rmtree(target)  # an older copy of the same incomplete step
            os.replace(path, target)
            logger.warning("checkpoint %s is incomplete (the run stopped while saving it): set aside as %s",
                           path, target)
            moved.append(target)
    return moved


def target_steps(max_steps: int, epochs: float, pairs: int, batch_size: int, processes: int) -> int:
    """The optimizer steps a run takes: ``max_steps`` if positive, else ``epochs`` passes (as the Trainer counts)."""
    if max_steps > 0:
        return max_steps
    return math.ceil(epochs * max(math.ceil(pairs / (batch_size * processes)), 1))


def find_resume_checkpoint(directory: Path, record: dict[str, Any]) -> Path:
    """The newest complete checkpoint of ``directory``, after checking that it belongs to the run ``record``.

    Raises:
        ResumeError: no complete checkpoint, a damaged one (the file named), or one recorded with other arguments
            (each difference named).
    """
    checkpoints = list_checkpoints(directory)
    complete = [p for p in checkpoints if is_complete(p)]
    if not complete:
        found = f" (incomplete: {', '.join(p.name for p in checkpoints)})" if checkpoints else ""
        raise ResumeError(f"resume=True: no complete checkpoint in {directory}{found}, and the run saved its model "
                          "(its checkpoints are removed then, unless keep_checkpoints=True); nothing to resume: pass "
                          "overwrite=True to train it again, or choose another output_dir")
    latest = complete[-1]
    damaged = find_damaged_file(latest)
    if damaged is not None:
        raise ResumeError(f"resume=True: {damaged[0]} is damaged ({damaged[1]}); move {latest} aside (rename it) to "
                          "resume from the checkpoint before it")
    saved = json.loads((latest / RUN_FILE).read_text(encoding="utf-8"))
    differences = record_differences(saved, record)
    if differences:
        raise ResumeError(
            f"resume=True: {latest} belongs to a run with other arguments; resuming would train this run's model "
            "from another run's weights:\n  " + "\n  ".join(differences)
            + "\nResume with the same arguments, or start a new run (overwrite=True, or another output_dir)."
        )
    return latest


def check_unfinished(checkpoint: Path, target: int, saved_steps: int | None = None) -> int:
    """The step ``checkpoint`` was taken at; refuses a run that already took its ``target`` steps and saved its model.

    Args:
        checkpoint: the checkpoint to resume from.
        target: the steps the resumed run takes in all.
        saved_steps: the steps of the final model saved in the run's folder (None: no final model). A checkpoint at
            ``target`` whose run stopped before its final save (``saved_steps`` smaller or None) is accepted: the
            resumed run takes no step and saves the model.

    Raises:
        ResumeError: the checkpoint is at or past ``target`` and the run's model was saved.
    """
    try:
        state = json.loads((checkpoint / TRAINER_STATE_FILE).read_text(encoding="utf-8"))
        done = int(state.get("global_step", checkpoint_step(checkpoint)))
    except (ValueError, TypeError, AttributeError) as err:
        raise ResumeError(f"resume=True: {checkpoint / TRAINER_STATE_FILE} is not a readable trainer state ({err}); "
                          "move that checkpoint aside to resume from an earlier one") from None
    if done >= target and saved_steps is not None and saved_steps >= done:
        raise ResumeError(f"resume=True: the run of {checkpoint} already took {done} of {target} steps; nothing to "
                          "resume. Pass a larger max_steps or epochs to train further.")
    if done > target:
        raise ResumeError(f"resume=True: {checkpoint} is at step {done}, past the {target} steps asked; pass "
                          f"max_steps={done} (or more) to finish that run")
    return done


@dataclass(frozen=True)
class ResumePoint:
    """Where a resumed run starts (:func:`resume_point`).

    Attributes:
        checkpoint: the checkpoint it continues from.
        step: that checkpoint's step.
        finished: the run took its steps and stopped before its final save: it only saves the model.
    """

    checkpoint: Path
    step: int
    finished: bool


def resume_point(directory: Path, record: dict[str, Any], schedule: Schedule, pairs: int, max_steps: int = -1,
                 saved_steps: int | None = None) -> ResumePoint:
    """The checkpoint of ``directory`` a ``--resume`` run continues from, checked against this run.

    Args:
        directory: the run's ``checkpoints/``.
        record: this run's record (:func:`run_record`).
        schedule: its epochs and batch size (with ``pairs``, ``max_steps`` and the processes: its target steps).
        pairs: its training pairs.
        max_steps: its step bound (``-1``: ``schedule.epochs`` epochs).
        saved_steps: the steps of the final model saved in the run's folder (``None``: none).

    A run stopped after its last checkpoint but before its final save resumes from that checkpoint with no step
    left: it only saves the final model. Incomplete newer checkpoints are set aside (by the main process).

    Raises:
        ResumeError: see :func:`find_resume_checkpoint` and :func:`check_unfinished`.
    """
    checkpoint = find_resume_checkpoint(directory, record)
    target = target_steps(max_steps, schedule.epochs, pairs, schedule.batch_size, world_size())
    done = check_unfinished(checkpoint, target, saved_steps)
    if done >= target:
        logger.warning("%s: the run took its %d steps but stopped before saving its model: saving it now",
                       checkpoint, done)
    step = checkpoint_step(checkpoint)
    if is_main_process():
        set_aside_incomplete(directory, step)
    return ResumePoint(checkpoint, step, done >= target)


def earlier_run(out: Path, artifacts: Sequence[str]) -> list[str]:
    """The entries of ``artifacts`` (names inside ``out``) that an earlier run left there."""
    found = []
    for name in artifacts:
        path = out / name
        if path.is_file() or (path.is_dir() and any(path.iterdir())):
            found.append(name)
    return found


def refuse_earlier_run(out: Path, found: list[str]) -> None:
    """Raise the error for a new run in a folder that holds an earlier run."""
    raise OutputExistsError(
        f"{out} holds an earlier run ({', '.join(found)}): pass resume=True to continue it, overwrite=True to replace "
        "it (its checkpoints are deleted), or choose another output_dir"
    )

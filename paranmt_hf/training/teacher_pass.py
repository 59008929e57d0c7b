"""The teacher pass of a ``tokenlearn`` run (``best``), planned before training: how many sentences, how long.

``paranmt-hf train --recipe best`` embeds every unique training sentence with the teacher after training
(:mod:`paranmt_hf.training.teacher_embeddings`). Before training starts, :func:`plan_teacher_pass` says how many
sentences that pass will embed, whether the cache holds them already and, from a timed probe, about how long it will
take. A quick run (``max_steps`` given, e.g. ``--max-steps 20``) bounds the pass by a seeded sample of
:data:`QUICK_TEACHER_SENTENCES` sentences unless told otherwise (``teacher_sentences``, ``--teacher-sentences
N|all``): :func:`teacher_sentence_limit`.

    from paranmt_hf.training.plan import plan_training
    from paranmt_hf.training.teacher_pass import plan_teacher_pass
    plan = plan_teacher_pass(plan_training(get_recipe("best")).finish.tokenlearn, sentences, max_steps=20)
    print(plan.message())   # teacher pass after training: 5,000 of 120,000 unique training sentences (...)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from .tokenlearn import TokenlearnSpec

QUICK_TEACHER_SENTENCES = 5000
"""The teacher pass of a quick run (``max_steps`` given) embeds at most this many unique training sentences (a
seeded sample) unless told otherwise (``teacher_sentences``, ``paranmt-hf train --teacher-sentences N|all``)."""
WARMUP_SENTENCES = 16
"""Sentences embedded before the probe is timed (the engine's first call allocates and optimises)."""
PROBE_SENTENCES = 256
"""Sentences of the timed probe that estimates how long the teacher pass takes (a seeded sample of the pass's)."""
ALL = "all"


def teacher_sentence_limit(recipe_limit: int | None, max_steps: int = -1, teacher_sentences: int | str | None = None
                           ) -> tuple[int | None, str]:
    """How many unique training sentences the teacher pass may embed, and why.

    Args:
        recipe_limit: the recipe's ``tokenlearn_sentences`` (at most that many; ``None``: all).
        max_steps: the run's step bound (``-1``: none). A run with one is a quick run: its pass embeds at most
            :data:`QUICK_TEACHER_SENTENCES` sentences unless ``teacher_sentences`` says otherwise.
        teacher_sentences: ``None`` (the default above), a positive number (at most that many, whatever the run)
            or ``"all"`` (the recipe's ``tokenlearn_sentences``, i.e. every sentence for ``best``).

    Returns:
        ``(limit, reason)``: the bound (``None``: all) and a few words saying where it comes from.
    """
    if teacher_sentences is not None and teacher_sentences != ALL:
        if isinstance(teacher_sentences, bool) or not isinstance(teacher_sentences, int) or teacher_sentences < 1:
            raise ValueError(f"teacher_sentences must be a positive number or {ALL!r}, got {teacher_sentences!r}")
        return teacher_sentences, "teacher_sentences given"
    quick = teacher_sentences is None and max_steps > 0
    if quick and (recipe_limit is None or recipe_limit > QUICK_TEACHER_SENTENCES):
        return QUICK_TEACHER_SENTENCES, "a quick run (max_steps given)"
    return recipe_limit, "the recipe's tokenlearn_sentences" if recipe_limit is not None else "all"


@dataclass(frozen=True)
class TeacherPassPlan:
    """What the teacher pass of a run will do, said before the run starts (:func:`plan_teacher_pass`).

    Attributes:
        limit: the bound on the sentences (``None``: all): the run's ``tokenlearn_sentences``.
        unique: the unique training sentences.
        sentences: how many the pass embeds (``unique`` or a seeded sample of them).
        reason: why that many (a quick run's bound, the recipe's, the user's, all).
        cached: the cache already holds their embeddings (the pass only reads them).
        engine: what runs the teacher, and at which precision (``onnxruntime float32``).
        threads: threads of the pass.
        rate: sentences per second of the timed probe (``None``: cached, or no probe).
        seconds: the estimated time of the pass (``sentences / rate``).
        probe: how many sentences the probe timed.
        load: the 1-minute load average before the probe (other work on the cores slows the probe and the pass).
    """

    limit: int | None
    unique: int
    sentences: int
    reason: str
    cached: bool
    engine: str
    threads: int
    rate: float | None = None
    seconds: float | None = None
    probe: int = 0
    load: float | None = None

    def message(self) -> str:
        """One paragraph for the user: how many sentences, how long, how to change it."""
        count = f"{self.sentences:,} of {self.unique:,} unique training sentences"
        if self.sentences < self.unique:
            count += f" (a seeded sample, {self.reason}"
            count += "; --teacher-sentences all embeds every one)" if "quick run" in self.reason else ")"
        if self.cached:
            return f"teacher pass: {count}, already in the cache: read in a second"
        estimate = "time unknown"
        if self.seconds is not None and self.rate:
            busy = "" if self.load is None else f", load {self.load:.1f} on {self.threads} core(s)"
            estimate = (f"about {_duration(self.seconds)} at {self.rate:,.0f} sentences/s (timed on {self.probe} of "
                        f"them now{busy}; other work on the cores slows it)")
        return (f"teacher pass after training: {count} with {self.engine} on {self.threads} thread(s), {estimate}; "
                "cached for later runs")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def padded_work(sentences: Sequence[str], batch_size: int) -> int:
    """Token slots a teacher pass computes: sentences sorted by length, batches padded to their longest.

    Lengths are estimated from characters (about 4 per word piece, plus the two special tokens), which is enough to
    scale a probe's time to a pass's.
    """
    import numpy as np

    lengths = np.sort(np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences)) // 4 + 2)[::-1]
    sizes = np.minimum(batch_size, len(lengths) - np.arange(0, len(lengths), batch_size))
    return int((lengths[::batch_size] * sizes).sum())


def plan_teacher_pass(spec: TokenlearnSpec, texts: list[str], seed: int = 0, max_steps: int = -1,
                      teacher_sentences: int | str | None = None, probe: bool = True) -> TeacherPassPlan:
    """What the teacher pass of a tokenlearn ``spec`` over ``texts`` will embed and about how long it takes.

    The bound comes from :func:`teacher_sentence_limit`; the estimate from a timed probe: :data:`PROBE_SENTENCES`
    of the pass's sentences (a seeded sample) embedded by the same engine, once the engine is ready (its ONNX
    export, cached, is made here if needed).

    Args:
        spec: the tokenlearn step's teacher, precision and sentence bound.
        texts: every training sentence (both sides of the pairs).
        seed: the sample's seed (the pass's).
        max_steps: the run's step bound (``-1``: none; else a quick run).
        teacher_sentences: ``None``, a number or ``"all"`` (see :func:`teacher_sentence_limit`).
        probe: time a probe (``False``: no estimate).
    """
    import random
    import time

    from .teacher_embeddings import cache_entry, resolve_engine, teacher_encoder
    from .teacher_onnx import BATCH_SIZE, cores
    from .tokenlearn import unique_sentences

    limit, reason = teacher_sentence_limit(spec.sentences, max_steps, teacher_sentences)
    unique = unique_sentences(texts)
    sentences = unique_sentences(unique, limit, seed)
    engine = resolve_engine(spec.precision)
    cached = cache_entry(sentences, spec.teacher, spec.precision, engine=engine).is_file()
    rate = seconds = load = None
    sample: list[str] = []
    if probe and not cached and sentences:
        from ..model.distill import resolve_teacher

        encode = teacher_encoder(resolve_teacher(spec.teacher), spec.precision, engine)
        sample = random.Random(seed).sample(sentences, min(PROBE_SENTENCES, len(sentences)))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None  # other work, before the probe adds its own
        encode(sample[:WARMUP_SENTENCES], show_progress=False)  # the engine's first-call costs are not the pass's
        started = time.perf_counter()
        encode(sample, show_progress=False)
        elapsed = max(time.perf_counter() - started, 1e-9)
        # the probe's random sentences pad to long ones, the pass's length-sorted batches hardly pad: scale by work
        seconds = elapsed * padded_work(sentences, BATCH_SIZE) / padded_work(sample, BATCH_SIZE)
        rate = len(sentences) / seconds
    return TeacherPassPlan(limit=limit, unique=len(unique), sentences=len(sentences), reason=reason, cached=cached,
                           engine=f"{engine} {spec.precision}", threads=cores(), rate=rate,
                           seconds=seconds, probe=len(sample) if rate is not None else 0, load=load)


__all__ = ["ALL", "PROBE_SENTENCES", "QUICK_TEACHER_SENTENCES", "TeacherPassPlan", "plan_teacher_pass",
           "teacher_sentence_limit"]

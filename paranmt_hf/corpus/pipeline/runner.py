"""Run a corpus tool as datatrove stages in a work folder, then merge the tasks' outputs into the output.

Every ``paranmt-hf corpus`` scale command is a list of :class:`Stage` s, each a datatrove pipeline run by ``tasks``
tasks. One way to shard: tasks read contiguous chunks of the inputs (:mod:`paranmt_hf.corpus.pipeline.batches`);
one way to merge: the final stage (:mod:`paranmt_hf.corpus.pipeline.parts`). Executors (``RunOptions.executor``):
``"local"`` (datatrove's ``LocalPipelineExecutor``, with a progress bar), ``"slurm"`` (one job array per stage,
chained by dependencies; returns once submitted) and ``"ray"`` (the connected Ray cluster).

The work folder (default ``.<output name>.paranmt-work`` next to the output) holds ``run.json``, datatrove's logs
and completion marks, the parts and the back-translation's chunk cache. The same command again resumes a killed
run and writes the same output as an uninterrupted run; a different command on the same output is refused
(``restart`` discards the folder). After the merge the folder is removed unless ``keep_work``. ``local_tasks`` /
``local_rank_offset`` run part of the first stage (machines sharing a folder without a scheduler); the run that
completes it, or :func:`merge_job` (``paranmt-hf corpus merge``), writes the output.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...data.reader import MAX_LINE_BYTES, InputError, check_input_files
from ...data.records import BadLineError, BadLineReport
from ...utils.atomic import check_output, local_paths, output_lock, replace_with_text
from ..errors import (
    RESTART,
    CorpusError,
    EmptyResultError,
    InvalidOptionError,
    TasksFailedError,
    in_command_line,
    option,
)
from .batches import CHUNK_BYTES, grid_chunks, rate_postfix, read_progress, read_rates
from .cluster import cluster_settings

logger = logging.getLogger("paranmt_hf.corpus")
EXECUTORS = ("local", "slurm", "ray")
WORK_SUFFIX = ".paranmt-work"


@dataclass
class RunOptions:
    """How a corpus command runs (all optional).

    Attributes:
        workers: tasks run at the same time on this machine (None: every core).
        tasks: tasks the input is split into (None: as many as ``workers``, at most one per chunk).
        local_tasks / local_rank_offset: run only tasks ``[offset, offset + local_tasks)`` here.
        chunk_bytes: size of the input chunks, the unit of work, progress and cache (None: the command's default).
        threads: CPU threads per task for models (None: cores / workers).
        work_dir: the work folder (default: ``.<output name>.paranmt-work`` next to the output).
        progress: show a progress bar and the summary line.
        restart: discard a work folder left by another (or the same) run instead of resuming it.
        keep_work: keep the work folder (logs, statistics, parts) after the merge.
        executor: ``"local"``, ``"slurm"`` or ``"ray"``.
        cluster: Slurm / Ray executor settings (:func:`~paranmt_hf.corpus.pipeline.cluster.cluster_settings`).
        max_line_bytes: longer input lines are skipped and counted, never held (None: ``MAX_LINE_BYTES``).
    """

    workers: int | None = None
    tasks: int | None = None
    local_tasks: int | None = None
    local_rank_offset: int = 0
    chunk_bytes: int | None = None
    threads: int | None = None
    work_dir: str | None = None
    progress: bool = True
    restart: bool = False
    keep_work: bool = False
    executor: str = "local"
    cluster: dict[str, Any] = field(default_factory=dict)
    max_line_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise InvalidOptionError(f"unknown executor {self.executor!r}; choose one of {EXECUTORS}")
        for name in ("workers", "tasks", "local_tasks", "threads", "max_line_bytes"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidOptionError(f"{name} must be >= 1, got {value}")
        if self.chunk_bytes is not None and self.chunk_bytes < 1:
            raise InvalidOptionError(f"chunk_bytes must be >= 1, got {self.chunk_bytes}")
        self.cluster = cluster_settings(self.executor, self.cluster)


def available_cores() -> int:
    """CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_work_dir(output: str | os.PathLike[str]) -> Path:
    """``.<name>.paranmt-work`` next to the output."""
    path = Path(output)
    return path.parent / f".{path.name}{WORK_SUFFIX}"


def input_signature(paths: Sequence[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """Resolved path, size and content sha256 of each input (what a resumed run must find unchanged).

    By content, not by modification time: ``cp -p``, ``rsync -a`` or ``tar x`` give another file the same size and
    time, and a resume would then take its first parts from one file and the rest from the other. The whole file is
    hashed, not sampled blocks: reading and hashing runs at ~1 GB/s on one core (21 MB in 0.02 s CPU), hundreds of
    times the rate of the fastest corpus command (the exact filter: ~60K lines/s, ~6 MB/s at best; 11 s for those
    21 MB on this project's 2-core machine), so it costs under 1 % of a run, and as little again at each resume.
    Nothing is remembered outside the work folder (a corpus run writes nothing in the user's home cache).
    """
    from ...utils.content_hash import sha256_file

    out = []
    for path in paths:
        out.append({"path": os.path.realpath(path), "size": os.stat(path).st_size, "sha256": sha256_file(path)})
    return out


def _changed_inputs(before: Any, now: list[dict[str, Any]]) -> list[str]:
    """The inputs whose size or content differ from the interrupted run's record ``before``.

    Empty when the list of paths itself differs (another command, not a changed input).
    """
    if not isinstance(before, list) or [e.get("path") if isinstance(e, dict) else None for e in before] != \
            [e["path"] for e in now]:
        return []
    return [entry["path"] for old, entry in zip(before, now, strict=True) if old != entry]


def _canonical(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


@dataclass
class JobOptions:
    """What a command tells its tasks and its merge, beyond the inputs and the output (typed, JSON-friendly).

    Attributes:
        settings: the command's own settings (filter, model, format...): part of the run's identity, never read by
            the pipeline itself.
        part_suffix: the suffix of the tasks' TSV parts (``.tsv`` or ``.tsv.gz``).
        reading_stage: the stage whose reader's counts say whether the input had a valid line.
        header: the header line of a TSV output (None: none).
        config / columns: ``corpus make``: the exported config's name and its columns.
        configs: ``corpus export``: the configs written.
        card: the dataset card's options (``corpus make``, ``corpus export``).
        shard_rows: rows per Parquet file of a folder output.
        edges: ``corpus histogram``: the score bin edges.
        allow_empty: ``corpus make``: write the folder when no pair is kept (not part of the run's identity).
    """

    settings: dict[str, Any] = field(default_factory=dict)
    part_suffix: str = ".tsv"
    reading_stage: str = "main"
    header: str | None = None
    config: str | None = None
    columns: list[str] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    card: dict[str, Any] = field(default_factory=dict)
    shard_rows: int = 1_000_000
    edges: list[float] = field(default_factory=list)
    allow_empty: bool = False

    def identity(self) -> dict[str, Any]:
        """What a resumed run must find unchanged (JSON-friendly): everything but ``allow_empty``."""
        record = _canonical(asdict(self))
        record.pop("allow_empty")
        return record


@dataclass
class JobSpec:
    """Everything a stage's task or the merge needs to know about the run (small and picklable)."""

    command: str
    inputs: list[str]
    output: str
    work_dir: str
    tasks: int
    overwrite: bool = False
    keep_work: bool = False
    options: JobOptions = field(default_factory=JobOptions)
    chunk_bytes: int = CHUNK_BYTES
    protected: list[str] = field(default_factory=list)
    max_line_bytes: int = MAX_LINE_BYTES

    def __post_init__(self) -> None:
        if isinstance(self.options, dict):  # read back from job.json (merge_job)
            self.options = JobOptions(**self.options)

    @property
    def all_inputs(self) -> list[str]:
        """What the output may never replace: the inputs and the files the run loads (``protected``: models)."""
        return [*self.inputs, *self.protected]

    @property
    def work(self) -> Path:
        """The work folder."""
        return Path(self.work_dir)

    def stage_dir(self, stage: str) -> Path:
        """A stage's folder (logs, progress, reports)."""
        return self.work / "stages" / stage

    def parts_dir(self, name: str = "parts") -> Path:
        """Where the tasks' outputs go."""
        return self.work / name

    def reader(self, stage: str, fmt: Any, strict: bool = False, member_pattern: str | None = None,
               header: Any = None) -> Any:
        """A :class:`~paranmt_hf.corpus.pipeline.batches.PairReader` of the inputs for ``stage``.

        ``header``: the inputs' :class:`~paranmt_hf.corpus.measures.columns.Header`.
        """
        from .batches import PairReader

        return PairReader(self.inputs, fmt, strict=strict, member_pattern=member_pattern,
                          chunk_bytes=self.chunk_bytes, state_dir=self.stage_dir(stage), header=header,
                          max_line_bytes=self.max_line_bytes)


@dataclass
class Stage:
    """One datatrove pipeline of a command.

    Attributes:
        name: its name (a folder of the work folder; the progress bar's label).
        steps: the pipeline's steps.
        tasks: its number of tasks (None: the run's).
        counts: whether its steps' outcome counts go into the summary line.
        reads_input: whether it reads the inputs (its first step is a
        :class:`~paranmt_hf.corpus.pipeline.batches.PairReader`,
            whose line and bad-line counts are the summary's).
        unit: what its progress bar counts (the input lines).
        whole: a cheap stage that the run's first real stage needs complete (an index of the input): a launch of
            some tasks only (``local_tasks``) runs it in full, for every task, under the work folder's lock, before
            its own tasks of the next stage.
    """

    name: str
    steps: list[Any]
    tasks: int | None = None
    counts: bool = True
    reads_input: bool = True
    unit: str = "lines"
    whole: bool = False


@dataclass
class Summary:
    """Totals of a run: input lines, outcome counts, bad lines, wall time."""

    lines: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    report: BadLineReport = field(default_factory=BadLineReport)
    seconds: float = 0.0
    tasks: int = 1
    workers: int = 1
    complete: bool = True

    @property
    def lines_per_second(self) -> float:
        """Input lines per second."""
        return self.lines / self.seconds if self.seconds else 0.0

    def line(self, what: str = "lines") -> str:
        """One-line summary: counts per outcome and per bad-line reason."""
        parts = [f"{count:,} {name}" for name, count in self.counts.items() if count]
        bad = self.report.total_bad
        if bad:
            reasons = ", ".join(f"{n:,} {reason}" for reason, n in self.report.bad.most_common())
            parts.append(f"{bad:,} bad ({reasons})")
        return (f"read {self.lines:,} {what} in {self.seconds:.1f} s ({self.lines_per_second:,.0f}/s, "
                f"{self.tasks} task{'s' if self.tasks > 1 else ''}, {self.workers} worker"
                f"{'s' if self.workers > 1 else ''}): " + "; ".join(parts))

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly totals."""
        return {"lines": self.lines, "counts": dict(self.counts), "bad_lines": self.report.as_dict(),
                "seconds": self.seconds, "lines_per_second": self.lines_per_second, "tasks": self.tasks,
                "workers": self.workers}


# ---- statistics ----------------------------------------------------------------------------------------------------


def _stat_total(value: Any) -> float:
    return value["total"] if isinstance(value, dict) else value


def stage_counts(spec: JobSpec, stage: str) -> tuple[Counter[str], Counter[str]]:
    """``(reader counts, step outcome counts)`` of a stage, summed over its tasks' datatrove statistics."""
    reader: Counter[str] = Counter()
    steps: Counter[str] = Counter()
    for path in sorted((spec.stage_dir(stage) / "logs" / "stats").glob("*.json")):
        for step in json.loads(path.read_text(encoding="utf-8")):
            target = reader if "READER" in step["name"] else steps
            for key, value in step.get("stats", {}).items():
                target[key] += int(_stat_total(value))
    return reader, steps


def stage_report(spec: JobSpec, stage: str) -> BadLineReport:
    """The bad-line report of a stage's reader, summed over its tasks."""
    report = BadLineReport()
    for path in sorted((spec.stage_dir(stage) / "reports").glob("*.json")):
        value = json.loads(path.read_text(encoding="utf-8"))
        part = BadLineReport(good=value["good"], bad=Counter(value["by_reason"]), examples=value["examples"])
        report.merge(part)
    return report


def summarize(spec: JobSpec, stages: Sequence[Stage], seconds: float = 0.0, workers: int = 1) -> Summary:
    """The run's summary from its stages' statistics."""
    summary = Summary(seconds=seconds, tasks=spec.tasks, workers=workers)
    first = True
    for stage in stages:
        reader, steps = stage_counts(spec, stage.name)
        if stage.reads_input and first:
            summary.lines = reader.get("lines", 0)
            summary.report = stage_report(spec, stage.name)
            first = False
        if stage.counts:
            summary.counts.update(steps)
    return summary


# ---- the work folder -----------------------------------------------------------------------------------------------


def open_work_dir(spec: JobSpec, signature: dict[str, Any], restart: bool = False) -> bool:
    """Create the work folder, or find the same run's to resume; True when resuming.

    Raises:
        CorpusError: the folder holds another run (and not ``restart``).
    """
    work = spec.work
    record = _canonical({"command": spec.command, "signature": signature, "inputs": input_signature(spec.inputs),
                         "tasks": spec.tasks, "chunk_bytes": spec.chunk_bytes})
    found = work / "run.json"
    if work.exists() and restart:
        shutil.rmtree(work)
    if found.is_file():
        before = json.loads(found.read_text(encoding="utf-8"))
        if before == record:
            return True
        differ = sorted(k for k in record if before.get(k) != record[k])
        changed = _changed_inputs(before.get("inputs"), record["inputs"]) if differ == ["inputs"] else []
        if changed:
            raise CorpusError(f"the input {', '.join(changed)} changed since the interrupted run in {work} started "
                              f"(its content is not the same): put it back to resume, or add {option(*RESTART)} "
                              "to start over from it")
        raise CorpusError(f"the work folder {work} holds another run of {before.get('command')} ({', '.join(differ)} "
                          f"differ): rerun the same command to resume it, or add {option(*RESTART)} to discard it")
    work.mkdir(parents=True, exist_ok=True)
    replace_with_text(found, json.dumps(record, indent=2) + "\n")
    return False


# ---- executors ---------------------------------------------------------------------------------------------------


class ProgressBar:
    """A tqdm bar over the lines the tasks of a stage have read, with an ETA from their bytes done.

    A decoding stage's tasks also write their throughput (``<stage>/throughput/``,
    :class:`~paranmt_hf.corpus.pipeline.batches.RateFile`): the bar then shows sentences/s and target tokens/s in
    all and per task.
    """

    def __init__(self, folder: Path, desc: str, enabled: bool, unit: str = "lines") -> None:
        self.folder, self.desc, self.enabled, self.unit = folder, desc, enabled, unit
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Any = None

    def __enter__(self) -> ProgressBar:
        self._start = time.monotonic()
        if self.enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(desc=self.desc, unit=f" {self.unit}", unit_scale=True, dynamic_ncols=True, smoothing=0.1)
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def _update(self) -> None:
        lines, share = read_progress(self.folder)
        bar = self._bar
        if share > 0:
            bar.total = max(int(lines / share), lines)
        rates = rate_postfix(read_rates(self.folder.parent / "throughput"), time.monotonic() - self._start)
        if rates:
            bar.set_postfix_str(rates, refresh=False)
        bar.update(lines - bar.n)

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            self._update()

    def __exit__(self, *exc: Any) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._update()
            self._bar.total = self._bar.n
            self._bar.refresh()
            self._bar.close()


def _quiet_main_logging() -> contextlib.AbstractContextManager[None]:
    """Datatrove's messages in this process (task counts, merged statistics) go nowhere.

    The bar and the summary line say it, and every task has its log file.
    """

    @contextlib.contextmanager
    def quiet() -> Iterator[None]:
        from loguru import logger

        logger.remove()
        try:
            yield
        finally:
            from datatrove.utils.logging import setup_default_logger

            setup_default_logger()

    return quiet()


def _label(spec: JobSpec, stage: Stage) -> str:
    """The progress bar's label: the command (and the stage, when it has several)."""
    return spec.command if stage.name == "main" else f"{spec.command}: {stage.name}"


def _stage_tasks(stage: Stage, spec: JobSpec) -> int:
    return stage.tasks or spec.tasks


def run_local(spec: JobSpec, stages: Sequence[Stage], run: RunOptions, workers: int) -> bool:
    """Run the stages one after the other on this machine; True when every task of every stage is done."""
    from .executors import CorpusLocalExecutor as executor_class

    split = next((i for i, stage in enumerate(stages) if not stage.whole), 0)
    for index, stage in enumerate(stages):
        tasks = _stage_tasks(stage, spec)
        local_tasks, offset = -1, 0
        if run.local_tasks is not None and index == split:  # the run that completes this stage does the rest
            local_tasks, offset = min(run.local_tasks, tasks - run.local_rank_offset), run.local_rank_offset
        folder = spec.stage_dir(stage.name)
        (folder / "progress").mkdir(parents=True, exist_ok=True)
        stage_workers = min(workers, tasks if local_tasks < 0 else local_tasks)
        for step in stage.steps:  # a model on GPUs: at most one task per GPU at a time (translation.placement)
            if hasattr(step, "concurrent_tasks"):
                stage_workers, placed = step.concurrent_tasks(stage_workers, tasks)
                if placed:
                    logger.warning(placed)
        threads = run.threads or max(available_cores() // max(stage_workers, 1), 1)
        executor = executor_class(stage.steps, tasks=tasks, workers=stage_workers, logging_dir=str(folder / "logs"),
                                  local_tasks=local_tasks, local_rank_offset=offset, threads=threads,
                                  limit_torch=stage_workers > 1 or run.threads is not None)
        whole = output_lock(spec.work / "stages" / stage.name, wait=WHOLE_STAGE_WAIT) \
            if run.local_tasks is not None and stage.whole else contextlib.nullcontext()
        with whole, ProgressBar(folder / "progress", _label(spec, stage), run.progress and stage.reads_input,
                                stage.unit), _quiet_main_logging():
            executor.run()  # tasks already complete (another launch ran them) are skipped
        if executor.get_incomplete_ranks():
            if local_tasks >= 0:
                return False
            raise TasksFailedError(f"stage {stage.name}: tasks {executor.get_incomplete_ranks()} did not complete; "
                                   f"see their logs in {folder / 'logs' / 'logs'}; the finished work is kept: run "
                                   f"the same command again to resume ({option(*RESTART)} to start afresh)")
    return True


WHOLE_STAGE_WAIT = 7 * 24 * 3600.0
"""How long a launch of some tasks waits for another launch running a ``whole`` stage (seconds)."""


def run_stages(spec: JobSpec, stages: Sequence[Stage], run: RunOptions, workers: int) -> bool:
    """Run the stages with the chosen executor; True when the run is complete (False: submitted or partial)."""
    if run.executor == "local":
        return run_local(spec, stages, run, workers)
    from .cluster import run_ray, slurm_executors

    if run.executor == "ray":
        return run_ray(spec, stages, run, lambda stage: ProgressBar(spec.stage_dir(stage.name) / "progress",
                                                                    _label(spec, stage),
                                                                    run.progress and stage.reads_input, stage.unit))
    executors = slurm_executors(spec, stages, run)
    with _quiet_main_logging():
        executors[-1].run()  # launches the dependencies first
    logger.warning("submitted %d Slurm job arrays (%s), one per stage, each waiting for the one before; the output "
                   "appears at %s when the last ends (scripts and logs: %s)", len(executors),
                   ", ".join(f"{s.name}: {e.job_id}" for s, e in zip(stages, executors, strict=True)), spec.output,
                   spec.work / "stages")
    return False


# ---- a command's run ---------------------------------------------------------------------------------------------


def resolve_tasks(inputs: Sequence[str | os.PathLike[str]], run: RunOptions) -> tuple[int, int]:
    """``(tasks, workers)``: defaults are every core, at most one task per chunk of the inputs (their size on disk)."""
    workers = run.workers or (1 if run.executor == "local" and _daemonic() else available_cores())
    if run.tasks is not None:
        tasks = run.tasks
    else:
        try:
            size = sum(os.path.getsize(p) for p in inputs)
        except OSError:
            size = 0
        tasks = max(1, min(workers, grid_chunks(size, run.chunk_bytes or CHUNK_BYTES)))
    if run.local_tasks is not None and run.local_rank_offset + run.local_tasks > tasks:
        last = run.local_rank_offset + run.local_tasks - 1
        raise InvalidOptionError(f"local tasks {run.local_rank_offset}..{last} go beyond the {tasks} tasks")
    return tasks, max(1, min(workers, tasks))


def _daemonic() -> bool:
    import multiprocessing

    return multiprocessing.current_process().daemon


FOLDER_OUTPUTS = ("export", "make")
"""The commands whose output is a folder (the others write one file): an existing path of the other kind is refused,
even with ``overwrite``."""


def make_spec(command: str, inputs: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str],
              run: RunOptions, overwrite: bool, options: JobOptions | None = None,
              protected: Sequence[Any] = ()) -> tuple[JobSpec, int]:
    """The :class:`JobSpec` of a command and its number of workers.

    ``protected``: the models (folders or files) the run loads: no output, overwrite or work folder may replace
    one of their files (Hub ids and None are skipped).
    """
    check_input_files(inputs)
    tasks, workers = resolve_tasks(inputs, run)
    if run.local_tasks is not None:
        workers = min(workers, run.local_tasks)
    work = run.work_dir or default_work_dir(output)
    typed = JobOptions(**_canonical(asdict(options or JobOptions())))  # JSON types: what job.json gives back
    spec = JobSpec(command, [os.fspath(p) for p in inputs], os.fspath(output), os.fspath(work), tasks, overwrite,
                   run.keep_work, typed, run.chunk_bytes or CHUNK_BYTES, local_paths(*protected),
                   run.max_line_bytes or MAX_LINE_BYTES)
    return spec, workers


@contextlib.contextmanager
def run_lock(spec: JobSpec, run: RunOptions) -> Iterator[None]:
    """Hold the run's locks from before any work to the end: a second launch of the same run is refused at once.

    A run holds the lock of its work folder and, on this machine (local executor), the lock of its output (so two
    runs into one output with different work folders do not both work for nothing). A run of some tasks only
    (``local_tasks``: several processes share the work folder on purpose) holds a lock per task it runs instead.

    Raises:
        OutputBusyError: another process runs the same run (or these tasks) now; the message names it.
        CorpusError: the work folder is a symbolic link or not a folder.
    """
    check_work_dir(spec)
    with contextlib.ExitStack() as stack:
        if run.local_tasks is None:
            stack.enter_context(output_lock(spec.work))
            if run.executor == "local":
                stack.enter_context(output_lock(spec.output))
        else:
            for rank in range(run.local_rank_offset, run.local_rank_offset + run.local_tasks):
                stack.enter_context(output_lock(Path(f"{spec.work}.task-{rank:05d}")))
        yield


def check_work_dir(spec: JobSpec) -> None:
    """Refuse a work folder that is a symbolic link (the run would write through it) or not a folder."""
    work = spec.work
    if work.is_symlink():
        raise CorpusError(f"the work folder {work} is a symbolic link: give a real folder "
                          f"({option('--work-dir', 'RunOptions(work_dir=...)')}), or remove the link")
    if work.exists() and not work.is_dir():
        raise CorpusError(f"the work folder {work} exists and is not a folder: give another "
                          f"{option('--work-dir', 'RunOptions(work_dir=...)')}")


def execute(spec: JobSpec, stages: Sequence[Stage], run: RunOptions, workers: int,
            signature: dict[str, Any] | None = None, prepare: Callable[[JobSpec], Any] | None = None) -> Summary:
    """Run a command's stages (the last one merges) and return its summary.

    The run's lock is taken first (a second launch is refused before any work); the output is checked (never an
    input; an existing one only with ``overwrite``); the work folder is made or resumed; then ``prepare(spec)``
    runs (what the tasks need made once in the work folder: a model's copy), under the lock. The summary's
    ``complete`` is False when only some tasks ran here or the run was submitted.
    """
    with run_lock(spec, run):
        check_output(spec.output, spec.all_inputs, spec.overwrite, directory=spec.command in FOLDER_OUTPUTS)
        check_work_outside_inputs(spec)
        open_work_dir(spec, signature if signature is not None else {"options": spec.options.identity()}, run.restart)
        write_job(spec, stages, run.keep_work)
        if prepare is not None:
            prepare(spec)
        start = time.perf_counter()
        try:
            complete = run_stages(spec, stages, run, workers)
        except (KeyboardInterrupt, SystemExit):
            if not in_command_line():  # the command line prints its own line, naming the command
                logger.warning("corpus %s: interrupted; call it again with the same arguments to resume from %s",
                               spec.command, spec.work)
            raise
        except OSError as err:
            if err.errno in (errno.ENOSPC, errno.EDQUOT):  # the work folder is kept: free space, then resume
                where = f": {err.filename}" if err.filename else ""
                raise CorpusError(f"no space left on the device ({err.strerror}{where}); {spec.output} was not "
                                  "written: free some space and run the same command again to resume") from err
            raise
        except (TasksFailedError, EmptyResultError):  # a task's crash (memory, a bug, a strict bad line), or a
            raise  # result the user must accept: its logs and the rest stay
        except (CorpusError, InputError, BadLineError):  # the input's or the options' fault: nothing to resume
            if not run.keep_work:
                shutil.rmtree(spec.work, ignore_errors=True)
            raise
        summary = summarize(spec, stages, time.perf_counter() - start, workers) if spec.work.exists() else \
            Summary(seconds=time.perf_counter() - start, tasks=spec.tasks, workers=workers)
        summary.complete = complete
        if complete and not spec.keep_work and spec.work.exists():
            shutil.rmtree(spec.work, ignore_errors=True)
        return summary


def check_work_outside_inputs(spec: JobSpec) -> None:
    """Refuse a work folder that is, or holds, one of the run's inputs or models (it is written and removed).

    Raises:
        CorpusError: it does.
    """
    from ...utils.atomic import OutputIsInputError

    try:
        check_output(spec.work, spec.all_inputs, overwrite=True)
    except OutputIsInputError as err:
        raise CorpusError(f"the work folder {spec.work} would replace an input: {err}") from None


def write_job(spec: JobSpec, stages: Sequence[Stage], keep_work: bool = False) -> None:
    """``job.json`` in the work folder: what :func:`merge_job` needs to finish the run later (no code, names only)."""
    merge = next(step for stage in stages if stage.name == "merge" for step in stage.steps)
    record = {"spec": asdict(spec) | {"keep_work": keep_work},
              "merge": f"{merge.merge.__module__}:{merge.merge.__qualname__}",
              "stages": [{"name": s.name, "tasks": s.tasks or spec.tasks, "counts": s.counts,
                          "reads_input": s.reads_input} for s in stages if s.name != "merge"]}
    replace_with_text(spec.work / "job.json", json.dumps(record, indent=2, default=str) + "\n")


def merge_job(output: str | os.PathLike[str], work_dir: str | os.PathLike[str] | None = None,
              overwrite: bool = False) -> Summary:
    """Write the output of a run whose tasks ran separately (``local_tasks``), once every task is done.

    Raises:
        CorpusError: no work folder for ``output``, or tasks not done yet.
    """
    import importlib

    work = Path(work_dir) if work_dir is not None else default_work_dir(output)
    found = work / "job.json"
    if not found.is_file():
        raise CorpusError(f"no run to merge for {output}: {found} not found (run the command first, with "
                          "--local-tasks on each machine)")
    record = json.loads(found.read_text(encoding="utf-8"))
    spec = JobSpec(**record["spec"])
    spec.overwrite = spec.overwrite or overwrite
    stages = [Stage(s["name"], [], s["tasks"], s["counts"], s["reads_input"]) for s in record["stages"]]
    for stage in stages:
        done = {p.name for p in (spec.stage_dir(stage.name) / "logs" / "completions").glob("*")}
        missing = [rank for rank in range(stage.tasks) if f"{rank:05d}" not in done]
        if missing:
            raise CorpusError(f"stage {stage.name}: tasks {missing[:20]}{' ...' if len(missing) > 20 else ''} of "
                              f"{stage.tasks} are not done yet: run them first (--local-tasks / --local-rank-offset)")
    module, _, name = record["merge"].partition(":")
    if not module.startswith("paranmt_hf.corpus."):
        raise CorpusError(f"{found} names an unknown merge ({record['merge']})")
    merge = getattr(importlib.import_module(module), name)
    start = time.perf_counter()
    with run_lock(spec, RunOptions(progress=False)):
        merge(spec)
        summary = summarize(spec, stages, time.perf_counter() - start)
        if not spec.keep_work:
            shutil.rmtree(spec.work, ignore_errors=True)
    return summary


def merge_stage(merge: Callable[[JobSpec], Any], spec: JobSpec) -> Stage:
    """The stage that merges the parts into the output."""
    from .steps import MergeStep

    return Stage("merge", [MergeStep(merge, spec)], tasks=1, counts=False, reads_input=False)


def check_some_valid(spec: JobSpec, stage: str, written: str) -> None:
    """Refuse to write an output when the stage's reader found no valid line (raises :class:`CorpusError`)."""
    report = stage_report(spec, stage)
    if report.good == 0:
        raise CorpusError(f"no valid line in {', '.join(spec.inputs)}"
                          + (f": {report.summary()}" if report.total_bad else " (empty input)")
                          + f"; {written} was not written")



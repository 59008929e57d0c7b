"""The cluster executors of the corpus commands: Slurm job arrays and a Ray cluster.

:func:`slurm_executors` makes one ``SlurmPipelineExecutor`` per stage (:class:`CorpusSlurmExecutor`), each depending
on the one before; :func:`run_ray` runs the stages one after the other on a Ray cluster (:func:`connect_ray`).

Slurm scripts are datatrove's, except: no ``--qos`` unless asked for, and ``qos``, ``account`` and ``sbatch_args``
written as given (a key given twice with two values is refused); ``venv_path`` is activated with the script's
errors on, so a job without its environment fails with a message; only stages that run a model
(:func:`stage_uses_device`) request GPUs; every pasted value is ``shlex.quote``-d, and one with a control character
or a backslash is refused.

Ray: the driver connects to ``$RAY_ADDRESS``, else to the cluster ``ray start`` last started on this machine, never
to a guess, with the token Ray itself would use; a failure to connect is one sentence naming what to set.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...utils.imports import require
from ..errors import CorpusError, InvalidOptionError, option

SLURM_OPTIONS = ("partition", "time", "cpus_per_task", "gpus_per_task", "mem_per_cpu_gb", "qos", "account",
                 "venv_path", "condaenv", "env_command", "sbatch_args", "job_name", "max_array_size", "srun_args",
                 "slurm_logs_folder", "mail_user", "mail_type", "tasks_per_job")
"""The keys of ``RunOptions.cluster`` the Slurm executor reads."""

RAY_OPTIONS = ("cpus_per_task", "gpus_per_task", "mem_per_cpu_gb", "time", "ray_remote_kwargs", "tasks_per_job")
"""The keys of ``RunOptions.cluster`` the Ray executor reads."""

DEVICE_STEPS = frozenset({"BacktranslateStep", "AnnotateStep"})
"""Pipeline steps that run a model on an accelerator (a step may also say so with a ``uses_device`` attribute)."""

GPU_SBATCH_KEYS = frozenset({"gpus", "gres", "gpus-per-task", "gpus-per-node", "gpus-per-socket", "cpus-per-gpu",
                             "mem-per-gpu", "gpu-bind", "gpu-freq"})
"""``#SBATCH`` keys about GPUs: written only for the stages that run a model."""

MANAGED_SBATCH_KEYS = frozenset({"array", "dependency", "output", "error", "job-name", "export"})
"""``#SBATCH`` keys the run sets itself (``--sbatch-arg`` may not)."""

FLAG_SBATCH_KEYS = {"partition": "partition", "time": "time", "qos": "qos", "account": "account",
                    "cpus-per-task": "cpus_per_task", "mem-per-cpu": "mem_per_cpu_gb"}
"""``#SBATCH`` keys that have their own option (``--partition`` ...): given both ways, they must agree."""

ACTIVATE_CHECK = 'command -v launch_pickled_pipeline >/dev/null || {{ echo "launch_pickled_pipeline (datatrove) ' \
                 'is not on PATH{where}: install paranmt-hf[data] in the environment the jobs use" >&2; exit 1; }}'


def stage_uses_device(stage: Any) -> bool:
    """Whether a stage runs a model (its tasks get the requested GPUs): a step in :data:`DEVICE_STEPS`."""
    return any(getattr(step, "uses_device", type(step).__name__ in DEVICE_STEPS) for step in stage.steps)


def _stage_tasks(stage: Any, spec: Any) -> int:
    return stage.tasks or spec.tasks


# ---- Slurm ---------------------------------------------------------------------------------------------------------


def script_value(value: Any, what: str) -> str:
    """``value`` quoted for an ``#SBATCH`` or command line (refused when it holds a control character or a backslash).

    Raises:
        InvalidOptionError: the value cannot be written safely.
    """
    text = str(value)
    if any(ord(c) < 32 or ord(c) == 127 for c in text) or "\\" in text:
        raise InvalidOptionError(f"{what} {text!r} cannot go into a Slurm script (it holds a control character or a "
                                 "backslash): choose a path or value without them")
    return shlex.quote(text)


def venv_activate(path: str | os.PathLike[str]) -> Path:
    """The ``bin/activate`` script of a virtual environment folder.

    Raises:
        InvalidOptionError: ``path`` is not a folder with ``bin/activate``.
    """
    folder = Path(path).expanduser()
    activate = folder / "bin" / "activate"
    if not folder.is_dir() or not activate.is_file():
        raise InvalidOptionError(f"--venv-path {os.fspath(path)!r} is not a virtual environment folder (no "
                                 f"{activate}): give the folder that `python -m venv` made, e.g. /path/to/.venv")
    return activate.resolve()


def parse_sbatch_arg(item: str) -> tuple[str, str]:
    """``KEY=VALUE`` (or ``KEY`` for a flag such as ``exclusive``) of ``--sbatch-arg``; ``--KEY`` is accepted too.

    Raises:
        InvalidOptionError: an empty key.
    """
    key, _, value = item.partition("=")
    key = key.strip().lstrip("-")
    if not key or any(c.isspace() for c in key):
        raise InvalidOptionError(f"--sbatch-arg {item!r} is not KEY=VALUE (e.g. account=myproject)")
    return key, value


SLURM_ONLY = ("partition", "time", "qos", "account", "venv_path", "sbatch_args")
"""``RunOptions.cluster`` keys only the Slurm executor reads (given with another executor: a mistake)."""


def cluster_settings(executor: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """``RunOptions.cluster`` for ``executor`` from the settings given (None: not given).

    ``sbatch_args`` may be a mapping, ``KEY=VALUE`` items (:func:`parse_sbatch_arg`) or one such item.

    Raises:
        InvalidOptionError: a Slurm setting with another executor, or a bad ``sbatch_args`` item.
    """
    cluster = {k: v for k, v in given.items() if v is not None}
    read = RAY_OPTIONS if executor == "ray" else ()
    slurm_only = [k for k in SLURM_ONLY if k in cluster and k not in read]  # Ray reads ``time`` too
    if slurm_only and executor != "slurm":
        flag = "--sbatch-arg" if slurm_only[0] == "sbatch_args" else "--" + slurm_only[0].replace("_", "-")
        raise InvalidOptionError(option(f"{flag} is a Slurm setting: add --executor slurm",
                                        f"cluster={{{slurm_only[0]!r}: ...}} is a Slurm setting: add "
                                        "RunOptions(executor='slurm')"))
    sbatch = cluster.get("sbatch_args")
    if isinstance(sbatch, str):  # one KEY=VALUE item
        sbatch = [sbatch]
    if sbatch is not None and not isinstance(sbatch, Mapping):
        cluster["sbatch_args"] = dict(parse_sbatch_arg(item) for item in sbatch)
    return cluster


def torchrun_tasks(tasks: int | None, local_tasks: int | None, offset: int) -> tuple[int | None, int | None, int]:
    """``(tasks, local_tasks, local_rank_offset)`` of a run, under torchrun too.

    Under torchrun (``WORLD_SIZE`` > 1) with no task count given: ``WORLD_SIZE`` tasks, of which this process runs
    task ``RANK``; otherwise as given.
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if tasks is None and local_tasks is None and world > 1:
        return world, 1, int(os.environ.get("RANK", "0"))
    return tasks, local_tasks, offset


def slurm_options(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The Slurm executor's keyword arguments from ``RunOptions.cluster``, checked (see the module docstring).

    ``sbatch_args`` keys that have their own option (partition, time, qos, account, cpus-per-task, mem-per-cpu) are
    moved to it; given both ways with different values they are refused, as are the keys the run sets itself.

    Raises:
        InvalidOptionError / CorpusError: a conflict, a missing partition or time, a bad venv folder.
    """
    options = {k: v for k, v in cluster.items() if k in SLURM_OPTIONS and v is not None}
    sbatch = {str(k).lstrip("-"): ("" if v is None else str(v)) for k, v in dict(options.pop("sbatch_args", None)
                                                                                   or {}).items()}
    for key in sorted(set(sbatch) & MANAGED_SBATCH_KEYS):
        raise InvalidOptionError(f"--sbatch-arg {key}=... is set by the run itself (one job array per stage, logs "
                                 "in the work folder): leave it out")
    for key, name in FLAG_SBATCH_KEYS.items():
        if key not in sbatch:
            continue
        value = sbatch.pop(key)
        given = options.get(name)
        if name == "mem_per_cpu_gb":
            if given is not None and f"{given}G" != value:
                raise InvalidOptionError(f"--mem-per-cpu-gb {given} and --sbatch-arg mem-per-cpu={value} disagree: "
                                         "give one")
            if given is None:
                sbatch[key] = value  # written as given
            continue
        if given is not None and str(given) != value:
            raise InvalidOptionError(f"--{name.replace('_', '-')} {given} and --sbatch-arg {key}={value} disagree: "
                                     "give one")
        options[name] = int(value) if name == "cpus_per_task" else value
    both = sorted(set(sbatch) & {"gpus", "gpus-per-task", "gpus-per-node", "gpus-per-socket"})
    if options.get("gpus_per_task") and both:
        raise InvalidOptionError(f"--gpus-per-task and --sbatch-arg {', '.join(both)} both ask for GPUs: give one")
    missing = [k for k in ("partition", "time") if not options.get(k)]
    if missing:
        raise CorpusError(f"the Slurm executor needs {' and '.join('--' + k for k in missing)}")
    account = options.pop("account", None)
    if account is not None:
        sbatch["account"] = str(account)
    options.setdefault("qos", None)  # datatrove's default is "normal": none unless asked for
    if options.get("venv_path") is not None:
        options["venv_path"] = os.fspath(venv_activate(options["venv_path"]))
    for key, value in sbatch.items():
        script_value(value, f"--sbatch-arg {key}=")
        script_value(key, "--sbatch-arg key")
    options["sbatch_args"] = sbatch
    return options


def _script_args(args: Mapping[str, Any]) -> str:
    return "\n".join(f"#SBATCH --{k}={script_value(v, '--' + k)}" if v not in ("", None) else f"#SBATCH --{k}"
                     for k, v in args.items())


_slurm = require("datatrove.executor.slurm", "data")


class CorpusSlurmExecutor(_slurm.SlurmPipelineExecutor):  # type: ignore[misc]
    """``SlurmPipelineExecutor`` writing the scripts described in the module docstring.

    Args:
        uses_device: whether the stage's tasks run a model (they get the GPUs and the GPU ``#SBATCH`` keys).
        *args / **kwargs: ``SlurmPipelineExecutor``'s (``sbatch_args``: the user's, written last, as given).
    """

    def __init__(self, *args: Any, uses_device: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.uses_device = uses_device
        if not uses_device:
            self.gpus_per_task = 0
            self._sbatch_args = {k: v for k, v in self._sbatch_args.items() if k not in GPU_SBATCH_KEYS}

    def get_sbatch_args(self, max_array: int = 1) -> dict:
        """Datatrove's directives, then the user's ``sbatch_args`` (never overridden)."""
        args = super().get_sbatch_args(max_array)
        gb = float(self.mem_per_cpu_gb)
        if not gb.is_integer():  # Slurm takes whole numbers: 0.5G is 512M
            args["mem-per-cpu"] = f"{max(round(gb * 1024), 1)}M"
        args.update(self._sbatch_args)
        return args

    def launch_merge_stats(self) -> None:
        """Datatrove's statistics job: one CPU, no GPU, quoted paths."""
        args = {k: v for k, v in self.get_sbatch_args().items() if k not in GPU_SBATCH_KEYS}
        args.update({"cpus-per-task": 1, "mem-per-cpu": "1G", "dependency": f"afterok:{self.job_id}"})
        command = (f"merge_stats {script_value(self.logging_dir.resolve_paths('stats'), 'the work folder')} "
                   f"-o {script_value(self.logging_dir.resolve_paths('stats.json'), 'the work folder')}")
        _slurm.launch_slurm_job(self.get_launch_file_contents(args, command), self.job_id_retriever)

    def _run_command(self) -> str:
        pickled = script_value(self.logging_dir.resolve_paths("executor.pik"), "the work folder")
        if not self.with_srun:
            return f"launch_pickled_pipeline {pickled}"
        srun = " ".join(f"--{k}={script_value(v, '--' + str(k))}" for k, v in (self.srun_args or {}).items())
        return f"srun {srun} -l -n {int(self.nodes_per_task)} launch_pickled_pipeline {pickled}".replace("  ", " ")

    def _environment(self) -> str:
        if self.env_command:
            return self.env_command
        if self.condaenv:
            return f"conda activate {script_value(self.condaenv, 'condaenv')}"
        if self.venv_path:
            activate = script_value(self.venv_path, "--venv-path")
            return (f"source {activate} || {{ echo \"cannot activate \"{activate} >&2; exit 1; }}\n"
                    + ACTIVATE_CHECK.format(where=" after activating \"" + activate + "\""))
        return ACTIVATE_CHECK.format(where="")

    def get_launch_file_contents(self, sbatch_args: dict, run_script: str) -> str:
        """The job script: quoted directives, errors on before the environment is activated and checked."""
        if "launch_pickled_pipeline" in run_script:
            run_script = self._run_command()  # datatrove's line pastes the path unquoted
        elif not run_script.startswith("merge_stats "):
            raise CorpusError(f"unexpected Slurm command from datatrove: {run_script!r}")
        name = script_value(self.job_name, "the job name")
        return (f"#!/bin/bash\n{_script_args(sbatch_args)}\nset -e\necho \"Starting data processing job \"{name}\n"
                f"{self._environment()}\nset -x\nexport PYTHONUNBUFFERED=TRUE\n{run_script}\n")


def slurm_executors(spec: Any, stages: Sequence[Any], run: Any) -> list[Any]:
    """One :class:`CorpusSlurmExecutor` per stage, each depending on the one before (not launched).

    Raises:
        InvalidOptionError / CorpusError: bad Slurm options (see :func:`slurm_options`).
    """
    options = slurm_options(run.cluster)
    script_value(os.path.abspath(spec.work_dir), "the work folder")
    executors: list[Any] = []
    name = options.pop("job_name", f"paranmt-{spec.command}")
    for stage in stages:
        executors.append(CorpusSlurmExecutor(
            stage.steps, tasks=_stage_tasks(stage, spec), workers=run.workers or -1, job_name=f"{name}-{stage.name}",
            logging_dir=os.path.abspath(spec.stage_dir(stage.name) / "logs"),
            depends=executors[-1] if executors else None, uses_device=stage_uses_device(stage), **options))
    return executors


# ---- Ray -----------------------------------------------------------------------------------------------------------


def ray_address() -> str:
    """``$RAY_ADDRESS``, else the address of the cluster ``ray start`` last started on this machine.

    Raises:
        CorpusError: neither (one sentence saying how to start or name one).
    """
    address = os.environ.get("RAY_ADDRESS", "").strip()
    if address:
        return address
    from ray._common.utils import get_ray_address_file

    found = Path(get_ray_address_file(None))
    if found.is_file() and found.read_text(encoding="utf-8").strip():
        return found.read_text(encoding="utf-8").strip()
    raise CorpusError(f"no Ray cluster to connect to: start one with `ray start --head` on this machine (it writes "
                      f"its address to {found}) or set RAY_ADDRESS=HOST:PORT")


@contextlib.contextmanager
def _quiet(name: str) -> Iterator[None]:
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def connect_ray() -> bool:
    """Connect this process to the Ray cluster (:func:`ray_address`); False when it already was.

    With ``$RAY_AUTH_MODE`` unset and a token at hand (``$RAY_AUTH_TOKEN``, ``$RAY_AUTH_TOKEN_PATH``,
    ``~/.ray/auth_token``), token authentication is turned on, as Ray does for a cluster it finds by itself.

    Raises:
        CorpusError: no cluster, or it refused the connection (one sentence naming what to set).
    """
    ray = require("ray", "ray")
    if ray.is_initialized():
        return False
    address = ray_address()
    with contextlib.suppress(ImportError), _quiet("ray._private.authentication.authentication_token_setup"):
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )

        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ray.exceptions.RaySystemError) as err:
        token = "RAY_AUTH_TOKEN" in os.environ or "RAY_AUTH_TOKEN_PATH" in os.environ or \
            (Path.home() / ".ray" / "auth_token").is_file()
        hint = ("check that this machine's token is the cluster's" if token else
                "if the cluster uses token authentication, give this machine its token (`ray get-auth-token` on the "
                "head node prints it) in RAY_AUTH_TOKEN, in a file named by RAY_AUTH_TOKEN_PATH or in "
                "~/.ray/auth_token")
        raise CorpusError(f"cannot connect to the Ray cluster at {address} "
                          f"({str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__}): "
                          f"check that it runs and that RAY_ADDRESS names it; {hint}") from None
    return True


def run_ray(spec: Any, stages: Sequence[Any], run: Any,
            progress: Callable[[Any], contextlib.AbstractContextManager[Any]] | None = None) -> bool:
    """Run the stages one after the other on the Ray cluster (:func:`connect_ray`); True when all are done.

    ``progress(stage)``: a context manager showing the stage's progress while it runs. Only the stages that run a
    model get ``gpus_per_task``.
    """
    ray_executor = require("datatrove.executor.ray", "ray")
    connected = connect_ray()
    try:
        for stage in stages:
            folder = spec.stage_dir(stage.name)
            (folder / "progress").mkdir(parents=True, exist_ok=True)
            options = {k: v for k, v in run.cluster.items() if k in RAY_OPTIONS and v is not None}
            if not stage_uses_device(stage):
                options.pop("gpus_per_task", None)
            tasks = _stage_tasks(stage, spec)
            executor = ray_executor.RayPipelineExecutor(stage.steps, tasks=tasks, workers=run.workers or tasks,
                                                        logging_dir=os.path.abspath(folder / "logs"), **options)
            with progress(stage) if progress is not None else contextlib.nullcontext():
                executor.run()
            if executor.get_incomplete_ranks():
                raise CorpusError(f"stage {stage.name}: tasks {executor.get_incomplete_ranks()} did not complete; "
                                  f"see their logs in {folder / 'logs' / 'logs'}")
    finally:
        if connected:
            require("ray", "ray").shutdown()
    return True

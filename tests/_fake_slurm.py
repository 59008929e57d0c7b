"""A fake Slurm for tests: ``sbatch``, ``srun`` and ``scontrol`` scripts on PATH, and a scheduler that runs the
submitted job arrays here.

``sbatch`` records each submission (the script's text, its command-line arguments) in a spool folder and prints
``Submitted batch job N`` as Slurm does. :meth:`FakeSlurm.run_all` then runs every job as a node would: for each
index of its ``#SBATCH --array`` it runs the script with bash, ``SLURM_ARRAY_TASK_ID`` and the ``--export``ed
variables set, after the jobs its ``--dependency`` names (``afterok``: they must have succeeded). The jobs see a
PATH without this interpreter's folder, so the script must activate its environment itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

SBATCH = """#!{python}
import json, sys
from pathlib import Path
spool = Path({spool!r})
number = len(list(spool.glob("*.json"))) + 1
script = Path(sys.argv[-1]).read_text()
(spool / f"{{number:04d}}.json").write_text(json.dumps({{"args": sys.argv[1:-1], "script": script}}))
print(f"Submitted batch job {{number}}")
"""

SRUN = """#!/bin/bash
# srun [--KEY=VALUE ...] [-l] [-n N] COMMAND ...: run COMMAND here
while [ $# -gt 0 ]; do
  case "$1" in
    -n|-N|-c) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
exec "$@"
"""

SCONTROL = """#!/bin/bash
if [ "$1" = "show" ] && [ "$2" = "hostnames" ]; then echo localhost; exit 0; fi
echo "fake scontrol: $*" >&2; exit 1
"""


@dataclass
class Job:
    """One submission."""

    number: int
    args: list[str]
    script: str
    returncodes: list[int] = field(default_factory=list)

    def directives(self) -> dict[str, str]:
        """The ``#SBATCH --key=value`` lines (the value as written, quotes included)."""
        found = {}
        for line in self.script.splitlines():
            match = re.match(r"#SBATCH --([\w-]+)(?:=(.*))?$", line)
            if match:
                found[match.group(1)] = match.group(2) or ""
        return found

    def dependencies(self) -> list[tuple[str, int]]:
        """``(kind, job)`` of ``--dependency=afterok:1,afterany:2``."""
        deps = []
        for arg in self.args:
            if arg.startswith("--dependency="):
                for item in arg.split("=", 1)[1].split(","):
                    kind, _, jobs = item.partition(":")
                    deps += [(kind, int(j)) for j in jobs.split(":") if j]
        return deps

    def exports(self) -> dict[str, str]:
        """The variables of ``--export=ALL,NAME=VALUE``."""
        found = {}
        for arg in self.args:
            if arg.startswith("--export="):
                for item in arg.split("=", 1)[1].split(","):
                    if "=" in item:
                        name, _, value = item.partition("=")
                        found[name] = value
        return found

    def indices(self) -> range:
        """The array indices (``0-K%W``)."""
        spec = self.directives().get("array", "0").split("%")[0]
        low, _, high = spec.partition("-")
        return range(int(low), int(high or low) + 1)


class FakeSlurm:
    """The fake commands in ``root/bin`` and their spool ``root/spool``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin, self.spool = root / "bin", root / "spool"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.spool.mkdir(parents=True, exist_ok=True)
        for name, text in (("sbatch", SBATCH.format(python=sys.executable, spool=str(self.spool))),
                           ("srun", SRUN), ("scontrol", SCONTROL)):
            path = self.bin / name
            path.write_text(text)
            path.chmod(0o755)

    def jobs(self) -> list[Job]:
        """The submissions, in order."""
        return [Job(int(p.stem), **json.loads(p.read_text())) for p in sorted(self.spool.glob("*.json"))]

    def job_env(self) -> dict[str, str]:
        """A node's environment: this one without this interpreter's folder on PATH (the job activates it), nor any
        other folder holding datatrove's ``launch_pickled_pipeline`` (another environment's, active in the shell)."""
        here = os.path.realpath(os.path.dirname(sys.executable))
        path = [str(self.bin), *(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                 if p and os.path.realpath(p) != here
                                 and not os.path.exists(os.path.join(p, "launch_pickled_pipeline")))]
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
        return env | {"PATH": os.pathsep.join(path), "SLURM_NODELIST": "localhost"}

    def run_all(self, cwd: Path) -> list[Job]:
        """Run every submitted job, in dependency order, each array index as a node would; returns the jobs."""
        jobs = {job.number: job for job in self.jobs()}
        done: dict[int, bool] = {}
        while len(done) < len(jobs):
            ready = [j for n, j in sorted(jobs.items()) if n not in done
                     and all(dep in done for _, dep in j.dependencies())]
            assert ready, f"jobs waiting on jobs that never ran: {sorted(set(jobs) - set(done))}"
            job = ready[0]
            if not all(done[dep] for kind, dep in job.dependencies() if kind == "afterok"):
                done[job.number] = False  # Slurm never starts it
                continue
            for index in job.indices():
                env = self.job_env() | job.exports() | {"SLURM_ARRAY_TASK_ID": str(index),
                                                         "SLURM_JOB_ID": str(job.number * 1000 + index),
                                                         "SLURM_ARRAY_JOB_ID": str(job.number)}
                script = self.root / f"job-{job.number}.sh"
                script.write_text(job.script)
                proc = subprocess.run(["bash", str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                                      timeout=600)
                (self.root / f"job-{job.number}-{index}.log").write_text(proc.stdout + proc.stderr)
                job.returncodes.append(proc.returncode)
            done[job.number] = all(rc == 0 for rc in job.returncodes)
        return list(jobs.values())

    def log(self, job: Job, index: int = 0) -> str:
        """The output of a job's array index."""
        return (self.root / f"job-{job.number}-{index}.log").read_text()

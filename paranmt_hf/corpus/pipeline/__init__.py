"""The plumbing of the scale commands.

datatrove stages and steps, tasks and executors (local, Slurm, Ray), input chunks, task processes, part files
and their records, the runner (work folder, resume, merge), progress.
"""

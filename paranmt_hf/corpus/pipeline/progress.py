"""A progress bar for the tools that read pair files in this process (lexicon, pivot): lines, lines/s, ETA.

The scale commands run as datatrove tasks and have their own bar
(:class:`paranmt_hf.corpus.pipeline.runner.ProgressBar`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from ...data.reader import input_bytes
from ...data.records import BadLineReport, LineFormat, iter_parsed


class Progress:
    """A tqdm bar over input lines with lines/s and an ETA estimated from the bytes read (when sizes are known)."""

    def __init__(self, total_bytes: int | None, desc: str, enabled: bool = True) -> None:
        from tqdm.auto import tqdm

        self.total_bytes = total_bytes
        self.bar: Any = tqdm(desc=desc, unit=" lines", unit_scale=True, dynamic_ncols=True, disable=not enabled,
                             smoothing=0.1)

    def update(self, lines: int, position: int) -> None:
        """``lines`` more lines done; ``position`` bytes of the inputs read so far."""
        bar = self.bar
        if self.total_bytes and position:
            estimate = int((bar.n + lines) * self.total_bytes / min(position, self.total_bytes))
            bar.total = max(estimate, bar.n + lines)
        bar.update(lines)

    def close(self) -> None:
        """Finish the bar (its total becomes the true line count)."""
        self.bar.total = self.bar.n
        self.bar.refresh()
        self.bar.close()


def iter_records_progress(
    paths: Sequence[str | os.PathLike[str]],
    fmt: LineFormat | str,
    *,
    strict: bool = False,
    member_pattern: str | None = None,
    desc: str = "lines",
    progress: bool = True,
) -> Iterator[dict[str, Any]]:
    """The valid records of ``paths`` (as :func:`paranmt_hf.data.records.iter_records`) with a progress bar."""
    bar = Progress(input_bytes(paths), desc, progress)
    report = BadLineReport()
    try:
        for parsed in iter_parsed(paths, fmt, strict, member_pattern, report=report):
            yield from parsed.records()
            bar.update(len(parsed) + parsed.report.total_bad, parsed.position)
    finally:
        bar.close()

"""Writing a measurement's outputs into its folder: ``<stem>.json``, ``README.md`` and the plot ``<stem>.png``.

Shared by ``results/speed/benchmark.py`` and ``results/light/measure.py``: the JSON and the README are written
atomically (a reader never sees half a file), then the plot; the README text is printed too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_report(
    folder: Path, stem: str, report: dict[str, Any], markdown: Callable[[dict[str, Any]], str],
    plot: Callable[[dict[str, Any], Path], None],
) -> None:
    """Write ``report`` as ``folder/<stem>.json``, its ``markdown`` as ``folder/README.md`` and its ``plot``."""
    from paranmt_hf.utils.atomic import atomic_write_json, atomic_write_text

    text = markdown(report)
    atomic_write_json(folder / f"{stem}.json", report, indent=1)
    atomic_write_text(folder / "README.md", text)
    plot(report, folder / f"{stem}.png")
    print(text)

"""Writing a converted checkpoint: the model folder and its ``conversion_report.json``, atomically."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPORT_NAME = "conversion_report.json"
"""The file, in a converted model's folder, that says what the conversion kept, mapped and left out."""


def save_converted(encoder: Any, report: Any, output: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]],
                   *, overwrite: bool = False, sentence_transformers: bool = True) -> Path:
    """Write ``output``: the converted encoder's folder (and its sentence-transformers files) with the report.

    The folder appears only when complete, never replaces an input, nor an existing folder without ``overwrite``.

    Args:
        encoder: the converted :class:`~paranmt_hf.model.encoder.ParaNMTEncoder`.
        report: its ``ConversionReport`` (anything with ``to_dict()``).
        output: the folder to write.
        inputs: the checkpoint files it was converted from.
        overwrite: replace an existing folder.
        sentence_transformers: also write the sentence-transformers module files.

    Returns:
        the path of the report in ``output``.
    """
    from ...utils.atomic import atomic_output

    with atomic_output(output, inputs, overwrite=overwrite, directory=True) as tmp:
        encoder.save_pretrained(tmp, sentence_transformers=sentence_transformers)
        Path(tmp, REPORT_NAME).write_text(json.dumps(report.to_dict(), ensure_ascii=False, indent=2),
                                          encoding="utf-8")
    return Path(output) / REPORT_NAME

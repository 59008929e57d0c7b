"""Training pairs for sentence-transformers: ``(anchor, positive)`` datasets from any source the builder reads."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..data.configs import CONFIGS, bitext_sides
from ..data.records import FORMATS
from ..utils.imports import require

_REPEAT = re.compile(r"@(\d+)$")


class SourceSpecError(ValueError):
    """A training source spelled wrongly (``--train``): a repeat count after ``@`` below 1."""


def split_repeat(spec: str) -> tuple[str, int]:
    """``("CONFIG:PATH[,PATH]", N)`` from ``"CONFIG:PATH[,PATH]@N"`` (N = 1 without the suffix).

    Raises:
        SourceSpecError: ``N`` is below 1.
    """
    match = _REPEAT.search(spec)
    if not match:
        return spec, 1
    repeat = int(match.group(1))
    if repeat < 1:
        raise SourceSpecError(f"training source {spec!r}: the repeat count after '@' must be 1 or more (the times "
                              f"the source is read per epoch), got {repeat}")
    return spec[: match.start()], repeat


@dataclass(frozen=True)
class PairSource:
    """One training source: files read by one builder config (``pairs`` for any 2-4 column TSV).

    ``repeat`` reads the source that many times per epoch (upsampling a small, valuable corpus next to a large one).
    """

    config: str
    files: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = ()
    repeat: int = 1

    def __str__(self) -> str:
        return f"{self.config}:{','.join(self.files)}" + (f"@{self.repeat}" if self.repeat != 1 else "")

    @classmethod
    def parse(cls, spec: str) -> PairSource:
        """Parse ``"CONFIG:PATH[,PATH...][@N]"`` or just ``PATH[@N]``.

        Without a config, ``bitext`` is guessed for ``en-xx`` / ``xx-en`` file names (the one rule of
        :func:`paranmt_hf.data.configs.bitext_sides`, ``-`` or ``_``) and ``pairs`` otherwise. ``@N`` repeats the
        source N times per epoch.
        """
        spec, repeat = split_repeat(spec)
        config, sep, rest = spec.partition(":")
        if sep and config in CONFIGS:
            paths = rest
        else:
            paths = spec
            name = os.path.basename(spec.split(",")[0])
            config = "bitext" if bitext_sides(name) is not None else "pairs"
        files = tuple(p for p in paths.split(",") if p)
        for path in files:
            if "://" not in path and not os.path.exists(path):
                raise FileNotFoundError(f"training file {path!r} does not exist")
            check_training_file(path, config)
        return cls(config, files, repeat=repeat)


PAIRS_FORMAT = "a training file holds one pair per line: two tab-separated sentences (plain text, .gz or .zip)"
HEAD_BYTES = 1 << 16
"""How much of a training file :func:`check_training_file` reads."""


def check_training_file(path: str, config: str = "pairs") -> None:
    """Refuse at once, in one sentence, a training file that cannot hold pairs.

    An empty file, a binary file (a NumPy ``.npy`` array, any file with NUL bytes or not UTF-8), a file whose
    first lines have no tab (one column), and one whose first lines have fewer columns than ``config``'s line
    format needs (two columns read as ``full``, which needs the score) are refused before anything is loaded; a URL,
    a zip archive (its members are read by the builder) and a file whose first lines look like pairs are left to the
    builder, which counts the bad lines it meets.

    Raises:
        InputError: the file is empty, not text, has one column, or too few for ``config``.
    """
    import gzip
    import zipfile

    from ..data.reader import InputError

    if "://" in path or zipfile.is_zipfile(path):
        return
    if os.path.isdir(path):
        raise InputError(f"training file {path!r} is a folder; {PAIRS_FORMAT}")
    try:
        with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as handle:
            head = handle.read(HEAD_BYTES)
    except (OSError, EOFError):  # a damaged .gz: the reader names it with its own error
        return
    if not head.strip():
        raise InputError(f"training file {path!r} is empty; {PAIRS_FORMAT}")
    if head.startswith(b"\x93NUMPY"):
        raise InputError(f"training file {path!r} is a NumPy array (.npy), not text; {PAIRS_FORMAT}")
    text = head.decode("utf-8", "replace")
    if b"\0" in head or text[: len(text) - 4].count("\ufffd") > 0:
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return  # UTF-16: the reader's own error says how to convert it
        raise InputError(f"training file {path!r} is binary, not UTF-8 text; {PAIRS_FORMAT}")
    lines = [line for line in text.splitlines()[:-1 if len(head) == HEAD_BYTES else None] if line.strip()]
    if lines and not any("\t" in line for line in lines):
        raise InputError(f"training file {path!r} has one column (no tab in its first {len(lines)} line(s)); "
                         f"{PAIRS_FORMAT}")
    need = FORMATS[CONFIGS[config].line_format].min_columns if config in CONFIGS else 2
    if lines and not any(line.count("\t") + 1 >= need for line in lines):
        most = max(line.count("\t") + 1 for line in lines)
        raise InputError(f"training file {path!r} has {most} columns in its first {len(lines)} line(s), and the "
                         f"{config} config reads {need} (reference, paraphrase, paraphrase score): give it as "
                         f"pairs:{path} to train on its pairs")


def load_pairs(sources: Sequence[PairSource | str], max_pairs: int | None = None, seed: int = 0) -> Any:
    """All sources as one shuffled ``datasets.Dataset`` with columns ``anchor`` and ``positive``.

    When X-English bitext is mixed with paraphrase sources, a ``label`` column marks each pair's kind (1: a
    translation, English first; 0: a paraphrase pair), so that the mega-batch loss mines each pair's negatives by
    its own rule (PRAS: the other language for bitext, any sentence for paraphrases).

    Args:
        sources: :class:`PairSource` objects or their string form (``"bitext:en-de.tsv.gz"``).
        max_pairs: keep the first ``max_pairs`` pairs after shuffling.
        seed: shuffling seed.
    """
    datasets = require("datasets", "data")
    from ..dataset_scripts.loading import load_paranmt

    parsed = [PairSource.parse(s) if isinstance(s, str) else s for s in sources]
    mixed = len({src.config == "bitext" for src in parsed}) > 1
    parts = []
    for src in parsed:
        ds = load_paranmt(src.config, list(src.files), streaming=False, **dict(src.options))
        anchor, positive = CONFIGS[src.config].anchor, CONFIGS[src.config].positive
        ds = ds.select_columns([anchor, positive]).rename_columns({anchor: "anchor", positive: "positive"})
        if mixed:
            ds = ds.add_column("label", [int(src.config == "bitext")] * len(ds))
        parts.extend([ds] * src.repeat)
    if not parts:
        raise ValueError("no training sources given")
    pairs = datasets.concatenate_datasets(parts).shuffle(seed=seed)
    if max_pairs is not None:
        pairs = pairs.select(range(min(max_pairs, len(pairs))))
    if len(pairs) == 0:
        from ..data.reader import InputError

        raise InputError("the training sources hold no valid pair")
    return pairs.flatten_indices()


def has_bitext(sources: Sequence[PairSource | str]) -> bool:
    """Whether any source is X-English bitext (negatives then come from the other language)."""
    return any((PairSource.parse(s) if isinstance(s, str) else s).config == "bitext" for s in sources)

"""Readers for the STS evaluation sets: SemEval STS 2012-2016, STS Benchmark, STS 2017 and any STS-format folder.

The readers follow the papers' ``evaluate_sts.py`` (jwieting/paraphrastic-representations-at-scale):

- ``STS.input.<ds>.txt`` holds ``s1 <TAB> s2`` (2016 files carry two more source columns, ignored);
  ``STS.gs.<ds>.txt`` holds one gold score per line. **Empty gold lines (2015, 2016) mark unscored pairs: they are
  skipped**, pair and score together.
- STS Benchmark files are tab-separated ``genre, file, year, id, score, s1, s2[, extra...]``; read by splitting on
  tabs (never with a CSV reader: the sentences contain unbalanced quotes).
- Sentences are whitespace-normalised (``" ".join(s.split())``), as the papers' batcher does.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UnknownTaskError
from .reader import read_text_lines

# Datasets of each SemEval English test set, in the papers' order. STS13 "SMT" is absent for licence reasons (as
# in SentEval): the papers' list names it, but no public copy exists, so it is left out here.
STS_YEARS: dict[str, tuple[str, list[str]]] = {
    "STS12": ("STS12-en-test", ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"]),
    "STS13": ("STS13-en-test", ["FNWN", "headlines", "OnWN"]),
    "STS14": ("STS14-en-test", ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"]),
    "STS15": ("STS15-en-test", ["answers-forums", "answers-students", "belief", "headlines", "images"]),
    "STS16": ("STS16-en-test", ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"]),
}

# STS 2017 tracks: file stem -> (subset name, languages of column 1 and 2 as mteb ISO codes). Track 4a has Spanish
# first; ar-en, tr-en and 4b have English first (column order as in the files).
STS17_TRACKS: dict[str, tuple[str, list[str]]] = {
    "track1.ar-ar": ("ar-ar", ["ara-Arab"]),
    "track2.ar-en": ("ar-en", ["eng-Latn", "ara-Arab"]),
    "track3.es-es": ("es-es", ["spa-Latn"]),
    "track4a.es-en": ("es-en", ["spa-Latn", "eng-Latn"]),
    "track4b.es-en": ("es-en-wmt", ["eng-Latn", "spa-Latn"]),
    "track5.en-en": ("en-en", ["eng-Latn"]),
    "track6.tr-en": ("tr-en", ["eng-Latn", "tur-Latn"]),
}

logger = logging.getLogger(__name__)

STSB_SPLITS = {"train": "sts-train.csv", "validation": "sts-dev.csv", "test": "sts-test.csv"}


@dataclass
class STSPairs:
    """Scored sentence pairs of one STS dataset.

    Attributes:
        name: dataset name (the mteb ``hf_subset``), e.g. ``"MSRpar"`` or ``"en-en"``.
        sentences1, sentences2: the pairs.
        scores: gold similarity scores (0-5).
        languages: mteb language codes of the dataset, e.g. ``["eng-Latn"]``.
        n_skipped: pairs dropped because their gold score was empty or not finite (``nan``; warned with file:line).
    """

    name: str
    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]
    languages: list[str] = field(default_factory=lambda: ["eng-Latn"])
    n_skipped: int = 0

    def __len__(self) -> int:
        return len(self.scores)

    def subsample(self, n: int) -> STSPairs:
        """The first ``n`` pairs (for quick checks)."""
        return STSPairs(self.name, self.sentences1[:n], self.sentences2[:n], self.scores[:n], self.languages, 0)


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace to one space and strip (the papers' ``" ".join(s.split())``)."""
    return " ".join(text.split())


def _gold(text: str, path: str | os.PathLike[str], lineno: int) -> float | None:
    """The gold score of a line (``None``, with a warning, for ``nan``/``inf``: such a pair is skipped and counted).

    Raises:
        ValueError: not a number (``file:line``).
    """
    try:
        score = float(text)
    except ValueError as err:
        raise ValueError(f"{path}:{lineno}: gold score {text[:40]!r} is not a number") from err
    if not math.isfinite(score):
        logger.warning("%s:%d: gold score %r is not finite: pair skipped (counted in n_skipped)", path, lineno, text)
        return None
    return score


def _read_lines(path: Path) -> list[str]:
    return read_text_lines(path)  # "\n" only: U+2028 inside a sentence is not a line end


def read_sts_pair_files(
    input_path: str | os.PathLike[str],
    gold_path: str | os.PathLike[str],
    name: str,
    languages: list[str] | None = None,
) -> STSPairs:
    """Read an ``STS.input`` / ``STS.gs`` file pair, skipping pairs whose gold line is empty.

    Raises:
        ValueError: when the two files have different numbers of lines, a line has fewer than two tab-separated
            fields, a gold score is not a number, or all gold scores are equal.
    """
    inputs, golds = _read_lines(Path(input_path)), _read_lines(Path(gold_path))
    # a trailing empty line at the very end of both files is not a pair
    while inputs and golds and len(inputs) > len(golds) and not inputs[-1].strip():
        inputs.pop()
    if len(inputs) != len(golds):
        raise ValueError(f"{input_path} has {len(inputs)} lines but {gold_path} has {len(golds)}")
    s1, s2, scores, skipped = [], [], [], 0
    for lineno, (line, gold) in enumerate(zip(inputs, golds, strict=True), start=1):
        if not gold.strip():
            skipped += 1
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise ValueError(f"{input_path}:{lineno}: expected 'sentence1<TAB>sentence2', got {line[:80]!r}")
        score = _gold(gold.split("\t")[0], gold_path, lineno)
        if score is None:
            skipped += 1
            continue
        s1.append(normalize_space(cols[0]))
        s2.append(normalize_space(cols[1]))
        scores.append(score)
    if len(scores) > 1 and min(scores) == max(scores):
        raise ValueError(f"{gold_path}: all {len(scores)} gold scores are equal ({scores[0]:g}): a correlation with "
                         "them is undefined (is it the right gold file?)")
    return STSPairs(name, s1, s2, scores, list(languages or ["eng-Latn"]), skipped)


def load_sts_year(root: str | os.PathLike[str], year: str) -> list[STSPairs]:
    """All datasets of one SemEval year (``"STS12"`` ... ``"STS16"``) from ``root`` = the ``eval/sts`` folder."""
    if year not in STS_YEARS:
        raise KeyError(f"unknown STS year {year!r}; expected one of {sorted(STS_YEARS)}")
    folder, datasets = STS_YEARS[year]
    base = Path(root) / folder
    if not base.is_dir():
        raise FileNotFoundError(f"{base} not found (expected the SemEval {year} English test set there)")
    return [read_sts_pair_files(base / f"STS.input.{d}.txt", base / f"STS.gs.{d}.txt", d) for d in datasets]


def load_sts_dir(directory: str | os.PathLike[str], languages: list[str] | None = None) -> list[STSPairs]:
    """Every ``STS.input.<name>.txt`` with a matching ``STS.gs.<name>.txt`` in ``directory``, sorted by name.

    Raises:
        FileNotFoundError: when the folder holds no such file pair.
    """
    base = Path(directory)
    found = []
    for path in sorted(base.glob("STS.input.*.txt")):
        name = path.name[len("STS.input.") : -len(".txt")]
        gold = base / f"STS.gs.{name}.txt"
        if gold.is_file():
            found.append(read_sts_pair_files(path, gold, name, languages))
    if not found:
        raise FileNotFoundError(f"no STS.input.<name>.txt + STS.gs.<name>.txt file pair in {base}")
    return found


def load_sts17(root: str | os.PathLike[str], tracks: list[str] | None = None) -> list[STSPairs]:
    """STS 2017 tracks (all seven by default) from ``root/STS17``; ``tracks`` are file stems or subset names."""
    base = Path(root) / "STS17"
    selected = []
    for stem, (subset, langs) in STS17_TRACKS.items():
        if tracks is None or stem in tracks or subset in tracks:
            selected.append(
                read_sts_pair_files(base / f"STS.input.{stem}.txt", base / f"STS.gs.{stem}.txt", subset, langs)
            )
    if tracks is not None and len(selected) != len(set(tracks)):
        unknown = [t for t in tracks if t not in STS17_TRACKS and t not in {v[0] for v in STS17_TRACKS.values()}]
        raise UnknownTaskError(f"STS17: unknown track(s) {', '.join(unknown)}; known: "
                               f"{', '.join(v[0] for v in STS17_TRACKS.values())}")
    return selected


def load_stsb(root: str | os.PathLike[str], split: str = "test") -> STSPairs:
    """One STS Benchmark split (``train``, ``validation``/``dev`` or ``test``) from ``root/STSBenchmark``."""
    split = "validation" if split == "dev" else split
    if split not in STSB_SPLITS:
        raise KeyError(f"unknown STS-B split {split!r}; expected one of {sorted(STSB_SPLITS)}")
    path = Path(root) / "STSBenchmark" / STSB_SPLITS[split]
    s1, s2, scores, skipped = [], [], [], 0
    for lineno, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 7:
            raise ValueError(f"{path}:{lineno}: expected at least 7 tab-separated fields, got {len(cols)}")
        score = _gold(cols[4], path, lineno)
        if score is None:
            skipped += 1
            continue
        scores.append(score)
        s1.append(normalize_space(cols[5]))
        s2.append(normalize_space(cols[6]))
    return STSPairs("default", s1, s2, scores, n_skipped=skipped)


def input_sentences(folder: str | os.PathLike[str]) -> list[str]:
    """Both sentences of every line of every ``STS.input.*.txt`` in ``folder``, scored or not (as written)."""
    out = []
    for path in sorted(Path(folder).glob("STS.input.*.txt")):
        for line in _read_lines(path):
            out.extend(line.split("\t")[:2])
    return out


def stsb_sentences(root: str | os.PathLike[str]) -> list[str]:
    """Both sentences of every line of the three STS Benchmark files below ``root`` (as written)."""
    out = []
    for name in STSB_SPLITS.values():
        for line in _read_lines(Path(root) / "STSBenchmark" / name):
            out.extend(line.split("\t")[5:7])
    return out

"""Reader for the LASER Tatoeba bitext-mining test sets (``tatoeba.<xx>-eng.<xx>`` + ``tatoeba.<xx>-eng.eng``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .reader import read_text_lines

# Languages evaluated by default (those of the papers' bilingual models), with mteb ISO codes.
TATOEBA_LANGS: dict[str, str] = {
    "ara": "ara-Arab",
    "cmn": "cmn-Hans",
    "deu": "deu-Latn",
    "fra": "fra-Latn",
    "rus": "rus-Cyrl",
    "spa": "spa-Latn",
    "tur": "tur-Latn",
}


@dataclass
class BitextPairs:
    """Line-aligned translations: ``source[i]`` (language ``lang``) translates ``english[i]``."""

    lang: str
    source: list[str]
    english: list[str]

    @property
    def name(self) -> str:
        """The mteb-style subset name, e.g. ``"fra-eng"``."""
        return f"{self.lang}-eng"

    @property
    def languages(self) -> list[str]:
        """Mteb language codes of the two sides."""
        return [TATOEBA_LANGS.get(self.lang, f"{self.lang}-Zzzz"), "eng-Latn"]

    def __len__(self) -> int:
        return len(self.source)


def load_tatoeba(root: str | os.PathLike[str], langs: list[str] | None = None) -> list[BitextPairs]:
    """Tatoeba test sets from ``root`` (the ``eval/tatoeba`` folder); all languages found when ``langs`` is None.

    Raises:
        FileNotFoundError: a requested language is missing. ValueError: the two sides differ in length.
    """
    base = Path(root)
    if langs is None:
        langs = sorted(p.name.split(".")[1].split("-")[0] for p in base.glob("tatoeba.*-eng.eng"))
        if not langs:
            raise FileNotFoundError(f"no tatoeba.<xx>-eng.eng file in {base}")
    out = []
    for lang in langs:
        src_path, eng_path = base / f"tatoeba.{lang}-eng.{lang}", base / f"tatoeba.{lang}-eng.eng"
        for path in (src_path, eng_path):
            if not path.is_file():
                raise FileNotFoundError(f"{path} not found (LASER Tatoeba test set for {lang}-eng)")
        source = _lines(src_path)
        english = _lines(eng_path)
        if len(source) != len(english):
            raise ValueError(f"{src_path} has {len(source)} lines but {eng_path} has {len(english)}")
        out.append(BitextPairs(lang, source, english))
    return out


def _lines(path: Path) -> list[str]:
    return [" ".join(line.split()) for line in read_text_lines(path)]  # "\n" only, as its aligned partner


def all_sentences(root: str | os.PathLike[str]) -> list[str]:
    """Every line of every ``tatoeba.*-eng.*`` file below ``root`` (both sides, every language)."""
    return [line for path in sorted(Path(root).glob("tatoeba.*-eng.*")) for line in _lines(path)]

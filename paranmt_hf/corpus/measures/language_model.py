"""An n-gram language model of English references and the perplexity of translations (EMNLP 2017 §5.6).

E17 trains a 3-gram KenLM model on references held out from mining and filters by an upper bound on the
perplexity of the translations. Training runs KenLM's ``lmplz`` (modified Kneser-Ney, ``--discount_fallback`` so
that small corpora train): give it as ``lmplz=``, put it on ``PATH`` or set ``KENLM_BIN`` to its folder (the
``kenlm`` wheel only queries models; see docs/make-your-own-paranmt.md). Scoring uses the ``kenlm`` module.

Text is normalised the same way for training and scoring: lower-cased ``nltk.word_tokenize`` tokens joined by
spaces. A sentence's perplexity is KenLM's ``Model.perplexity`` (the end-of-sentence token counts).

A model folder holds ``model.arpa`` (or ``model.binary``) and ``paranmt_lm.json`` (order, normalisation, training
size); a bare ARPA/binary file is read with the default normalisation.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...utils.atomic import atomic_output
from ...utils.imports import require
from ..text.tokens import tokenize_many

CONFIG_NAME = "paranmt_lm.json"
_KENLM_SPECIAL = {"<s>", "</s>", "<unk>"}


class LanguageModelError(RuntimeError):
    """KenLM's estimator is missing or failed."""


def normalize_for_lm(texts: Sequence[str], tokenizer: str = "nltk", lowercase: bool = True) -> list[str]:
    """The text a model is trained on and scores: (lower-cased) tokens joined by single spaces.

    KenLM's own markers (``<s>``, ``</s>``, ``<unk>``) in the text become ``<_s>``-style tokens so that they are
    read as words.
    """
    prepared = [t.strip().lower() if lowercase else t.strip() for t in texts]
    out = []
    for tokens in tokenize_many(prepared, tokenizer):
        out.append(" ".join(t.replace("<", "<_", 1) if t in _KENLM_SPECIAL else t for t in tokens))
    return out


def find_kenlm_program(name: str = "lmplz", given: str | os.PathLike[str] | None = None) -> Path:
    """The path of a KenLM program: ``given``, else ``$KENLM_BIN/name``, else ``name`` on ``PATH``."""
    candidates = []
    if given is not None:
        candidates.append(Path(given))
    if os.environ.get("KENLM_BIN"):
        candidates.append(Path(os.environ["KENLM_BIN"]) / name)
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise LanguageModelError(
        f"KenLM's {name} was not found (looked at {', '.join(map(str, candidates)) or 'nothing given'}, KENLM_BIN "
        f"and PATH): the kenlm Python package only queries models; build {name} from KenLM's sources (cmake, Boost; "
        "see docs/make-your-own-paranmt.md, 'The language model') and pass --lmplz / set KENLM_BIN, or train an ARPA "
        "model elsewhere and pass it")


def train_language_model(
    texts: Iterable[str],
    output: str | os.PathLike[str],
    order: int = 3,
    tokenizer: str = "nltk",
    lowercase: bool = True,
    lmplz: str | os.PathLike[str] | None = None,
    memory: str = "1G",
    binary: bool = False,
    overwrite: bool = False,
) -> Path:
    """Train a KenLM n-gram model on ``texts`` into the folder ``output`` (atomically).

    Args:
        texts: English sentences (E17: 40,000 references held out from mining).
        output: the model folder to write.
        order: n-gram order (E17: 3).
        tokenizer: ``"nltk"``, ``"fast"`` or ``"whitespace"`` (the same normalisation is applied when scoring).
        lowercase: lower-case before tokenising.
        lmplz: the ``lmplz`` program (default: ``$KENLM_BIN`` or ``PATH``).
        memory: ``lmplz -S`` (its sorting memory).
        binary: also convert to KenLM's binary format with ``build_binary`` (faster to load) and drop the ARPA.
        overwrite: replace an existing ``output``.
    """
    program = find_kenlm_program("lmplz", lmplz)
    builder = find_kenlm_program("build_binary", Path(program).parent / "build_binary") if binary else None
    with atomic_output(output, overwrite=overwrite, directory=True) as tmp:
        corpus = tmp / "corpus.txt"
        count = 0
        with open(corpus, "w", encoding="utf-8", newline="\n") as f:
            chunk: list[str] = []
            for text in texts:
                chunk.append(text)
                if len(chunk) >= 8192:
                    f.write("".join(line + "\n" for line in normalize_for_lm(chunk, tokenizer, lowercase)))
                    count += len(chunk)
                    chunk = []
            if chunk:
                f.write("".join(line + "\n" for line in normalize_for_lm(chunk, tokenizer, lowercase)))
                count += len(chunk)
        if count == 0:
            raise ValueError("no sentence to train the language model on")
        arpa = tmp / "model.arpa"
        command = [str(program), "-o", str(order), "-S", memory, "-T", str(tmp), "--text", str(corpus), "--arpa",
                   str(arpa), "--discount_fallback"]
        _run(command)
        corpus.unlink()
        model_file = arpa
        if builder is not None:
            model_file = tmp / "model.binary"
            _run([str(builder), str(arpa), str(model_file)])
            arpa.unlink()
        config = {"model_file": model_file.name, "order": order, "tokenizer": tokenizer, "lowercase": lowercase,
                  "sentences": count, "estimator": "kenlm lmplz (modified Kneser-Ney, --discount_fallback)",
                  "perplexity": "10 ** (-log10 p(sentence </s> | <s>) / (tokens + 1))"}
        (tmp / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return Path(output)


def _run(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        raise LanguageModelError(f"{Path(command[0]).name} failed (exit {result.returncode}): {tail}")


class NgramLanguageModel:
    """A KenLM model (folder written by :func:`train_language_model`, or an ARPA / binary file) that scores text.

    Args:
        path: the model folder or file.
        tokenizer / lowercase: the normalisation, for a bare model file (a folder records its own).
    """

    def __init__(self, path: str | os.PathLike[str], tokenizer: str = "nltk", lowercase: bool = True) -> None:
        kenlm = require("kenlm", "filters")
        path = Path(path)
        if path.is_dir():
            config_path = path / CONFIG_NAME
            if not config_path.is_file():
                raise FileNotFoundError(f"{path} is not a language-model folder (no {CONFIG_NAME})")
            self.config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8"))
            model_file = path / self.config["model_file"]
        elif path.is_file():
            self.config = {"model_file": path.name, "tokenizer": tokenizer, "lowercase": lowercase}
            model_file = path
        else:
            raise FileNotFoundError(f"language model not found: {path}")
        self.path = path
        config = kenlm.Config()
        config.show_progress = False  # KenLM prints a loading bar to stderr otherwise
        self.model = kenlm.Model(str(model_file), config)
        self.order = int(self.model.order)

    def normalize(self, texts: Sequence[str]) -> list[str]:
        """The model's normalisation of ``texts``."""
        return normalize_for_lm(texts, self.config.get("tokenizer", "nltk"), self.config.get("lowercase", True))

    def perplexity_many(self, texts: Sequence[str]) -> np.ndarray:
        """Per-sentence perplexity (``</s>`` counted; see the module docstring)."""
        perplexity = self.model.perplexity
        return np.fromiter((perplexity(line) for line in self.normalize(texts)), dtype=np.float64, count=len(texts))

"""What the back-translation scripts share: German Multi30k sentences, the random Marian, raw ``model.generate``."""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BITEXT = Path("train") / "bitext" / "multi30k-en-de.tsv.gz"
"""The shared Multi30k en-de bitext, under the data folder: English reference, tab, German sentence."""
TINY = {"d_model": 32, "layers": 1, "heads": 2, "ffn": 64, "vocab_size": 2000}


def bitext_lines(path: Path, count: int) -> list[str]:
    """The first ``count`` lines of the bitext at ``path``."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line for _, line in zip(range(count), f, strict=False)]


def german(lines: Iterable[str]) -> list[str]:
    """The German sentences of bitext lines."""
    return [line.rstrip("\n").split("\t")[1] for line in lines]


def build_model(folder: Path, texts: list[str], tiny: bool = False) -> Path:
    """The tests' opus-mt-sized Marian (6+6 layers, 512 dims, 58,101 tokens; ``tiny``: 1 layer of 32) with seeded
    random weights and a vocabulary trained on ``texts``, built once: every candidate runs to the length limit."""
    sys.path.insert(0, str(ROOT / "tests"))  # the test fixtures
    from _synthetic_translation import OPUS_MT_SIZE, build_translation_model

    if not (folder / "config.json").is_file():
        size = TINY if tiny else {k: OPUS_MT_SIZE[k] for k in ("d_model", "layers", "heads", "ffn", "vocab_size")}
        build_translation_model(folder, texts, kind="marian", spm_pieces=1000 if tiny else 8000, max_length=512,
                                seed=0, init_std=0.02, eos_scale=1.0, **size)
    return folder


def generate(model: Any, tokenizer: Any, batches: Iterable[list[str]], beams: int, max_new: int,
             device: str = "cpu") -> int:
    """``model.generate`` on each batch of sentences, decoded as a user would; the target tokens generated."""
    import torch

    tokens = 0
    with torch.inference_mode():
        for texts in batches:
            inputs = tokenizer(texts, return_tensors="pt", padding=True).to(device)
            out = model.generate(**inputs, num_beams=beams, max_new_tokens=max_new, forced_eos_token_id=None)
            tokenizer.batch_decode(out, skip_special_tokens=True)
            tokens += int((out[:, 1:] != model.config.pad_token_id).sum())
    return tokens

"""The translation engines by name.

``"transformers"`` (:mod:`paranmt_hf.corpus.translation`) and ``"ctranslate2"``
(:mod:`paranmt_hf.corpus.translation_ct2`).
"""

from __future__ import annotations

import os
from typing import Any

from .translation import DecodingOptions, Translator

ENGINES = ("transformers", "ctranslate2")


def load_translator(model: str | os.PathLike[str], options: DecodingOptions | None = None, *,
                    engine: str = "transformers", **kwargs: Any) -> Translator:
    """A translator for ``engine`` (``"transformers"`` or ``"ctranslate2"``); ``kwargs`` go to its class.

    transformers: ``device``, ``dtype``, ``threads``, ``trust_remote_code``. ctranslate2: ``compute_type``
    (``"int8"``, ``"float32"``...), ``device``, ``threads``, ``cache_dir``, ``trust_remote_code``.
    """
    if engine == "transformers":
        from .translation import TransformersTranslator

        return TransformersTranslator(model, options, **kwargs)
    if engine == "ctranslate2":
        from .translation_ct2 import CTranslate2Translator

        return CTranslate2Translator(model, options, **kwargs)
    raise ValueError(f"unknown engine {engine!r}; choose one of {ENGINES}")

"""The translation engines by name: :data:`ENGINES`, their typed options, and loading one.

``"transformers"`` (:class:`~paranmt_hf.corpus.translation.transformers_engine.TransformersTranslator`, options
:class:`~paranmt_hf.corpus.translation.transformers_engine.TransformersOptions`) and ``"ctranslate2"``
(:class:`~paranmt_hf.corpus.translation.ctranslate2_engine.CTranslate2Translator`, options
:class:`~paranmt_hf.corpus.translation.ctranslate2_engine.CTranslate2Options`). Each engine class names its options
class (``options_type``) and the decoding options it refuses (``check_decoding``); :func:`engine_options` builds the
typed options of an engine from its name and keywords (the CLI's flags) and refuses a setting of
another engine in one sentence. Adding an engine: its module (translator + options class), its entry here, and its
flags in the CLI when it has settings of its own.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidOptionError
from .ctranslate2_engine import CTranslate2Translator
from .transformers_engine import DecodingOptions, EngineOptions, Seq2SeqEngine, TransformersTranslator

ENGINES: dict[str, type[Seq2SeqEngine]] = {
    "transformers": TransformersTranslator,
    "ctranslate2": CTranslate2Translator,
}
"""Engine name -> translator class (its ``options_type`` is the engine's options)."""


def get_engine(name: str) -> type[Seq2SeqEngine]:
    """The translator class of engine ``name``.

    Raises:
        InvalidOptionError: an unknown engine.
    """
    if name not in ENGINES:
        raise InvalidOptionError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
    return ENGINES[name]


def _fields(options_type: type[EngineOptions]) -> list[str]:
    return [f.name for f in dataclasses.fields(options_type)]


def engine_options(engine: str | EngineOptions = "transformers",
                   settings: Mapping[str, Any] | None = None) -> EngineOptions:
    """The typed options of an engine.

    ``engine`` itself when it is an options object, else built from ``settings`` (keywords of the engine's options
    class; None values are left at their defaults).

    Raises:
        InvalidOptionError: an unknown engine, a setting the engine does not have (naming the engine that has it),
            a bad value, or both an options object and ``settings``.
    """
    given = {k: v for k, v in (settings or {}).items() if v is not None}
    if isinstance(engine, EngineOptions):
        if given:
            raise InvalidOptionError("give an engine's settings either as its options object or as settings, not "
                                     "both")
        return engine
    options_type = get_engine(engine).options_type
    known = _fields(options_type)
    for key in given:
        if key not in known:
            owners = [name for name, cls in ENGINES.items() if key in _fields(cls.options_type)]
            if owners:
                owner = ENGINES[owners[0]]
                raise InvalidOptionError(
                    f"{key} is a {getattr(owner, 'display_name', owners[0])} setting, not one of the {engine} "
                    f"engine's ({', '.join(known)}): add engine={owners[0]!r} (--engine {owners[0]})")
            raise InvalidOptionError(f"unknown setting {key!r} of the {engine} engine; its settings: "
                                     f"{', '.join(known)}")
    return options_type(**given)


def engine_name(settings: EngineOptions) -> str:
    """The name of the engine whose options ``settings`` are."""
    for name, cls in ENGINES.items():
        if type(settings) is cls.options_type:
            return name
    raise InvalidOptionError(f"{type(settings).__name__} is no engine's options; the engines: {', '.join(ENGINES)}")


def check_decoding(settings: EngineOptions, options: DecodingOptions) -> None:
    """Refuse decoding options or a device the engine of ``settings`` cannot honour (before any work)."""
    engine = ENGINES[engine_name(settings)]
    engine.check_decoding(options)
    engine.check_device(settings)


def load_translator(model: str | os.PathLike[str], options: DecodingOptions | None = None,
                    engine: str | EngineOptions = "transformers", *, rank: int | None = None,
                    **settings: Any) -> Seq2SeqEngine:
    """A translator: ``engine`` an engine's options object, or its name with its settings as keywords.

    transformers: ``device``, ``dtype``, ``threads``, ``trust_remote_code``. ctranslate2: ``compute_type``
    (``"int8"``, ``"float32"``...), ``device``, ``threads``, ``cache_dir``, ``trust_remote_code``. ``rank``: the
    corpus task's rank (its GPU, :func:`~paranmt_hf.corpus.translation.placement.task_device`).
    """
    typed = engine_options(engine, settings)
    return ENGINES[engine_name(typed)](model, options, typed, rank=rank)


def concurrent_tasks(settings: EngineOptions, workers: int, tasks: int) -> tuple[int, str | None]:
    """How many decoding tasks of ``settings``' engine run at once here, and the line saying so.

    :func:`~paranmt_hf.corpus.translation.placement.concurrent_tasks` with the CUDA devices the engine sees.
    """
    from .placement import concurrent_tasks as rule

    return rule(settings.device, ENGINES[engine_name(settings)].cuda_devices(), workers, tasks)

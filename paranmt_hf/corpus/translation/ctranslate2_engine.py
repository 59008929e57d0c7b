"""The CTranslate2 engine: a transformers translation model converted once (offline, cached) and run in C++.

``CTranslate2Translator(model, options, CTranslate2Options(compute_type="int8"))`` converts the model folder (or the
local snapshot of a Hub id) with ``ctranslate2.converters.TransformersConverter`` into
``<cache>/ctranslate2/<name>-<digest>`` (the digest hashes the content of the model's files, whatever their times; the
corpus commands keep it beside the run's prepared copy of the model), then translates with ``ctranslate2.Translator``:
the model's own tokenizer makes the source tokens, the target language of NLLB / M2M100 / mBART models is the target
prefix, CTranslate2 sorts and batches by tokens, and the translation cost is computed by scoring each candidate
(``Translator.score_batch``, the language token excluded) when sampling, and from the decoder's own scores under beam
and greedy search (CTranslate2 sums the same log-probabilities, end token included, the forced language token excluded,
with no mask renormalising them at ``min_decoding_length=0``), so it has the definition of
:mod:`paranmt_hf.corpus.translation.transformers_engine` whatever the engine (tests/test_backtranslate.py checks both
ways against a full scoring). Weights are stored in float32; ``compute_type`` (``int8`` on CPU by default, ``float32``
for exact float arithmetic) chooses how they run.
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...utils.atomic import atomic_output
from ...utils.imports import require
from ...utils.paths import cache_dir
from .model_prep import DIGEST_CHARS, model_sha256, resolve_translation_model
from .transformers_engine import (
    DecodingOptions,
    EngineOptions,
    Seq2SeqEngine,
    Translation,
    TranslationModelError,
    check_loading_info,
)

CUDA_RUNTIME = ("libcublas.so.12",)
"""The CUDA libraries CTranslate2's PyPI wheels load when they decode on a GPU (their CUDA runtime is linked in;
cuBLAS 12 is loaded by name at the first GPU translation)."""


def missing_cuda_runtime() -> str | None:
    """The first library of :data:`CUDA_RUNTIME` that cannot be loaded here (None: all load).

    Loaded by name, as CTranslate2 loads it: found on the library path, the system's cache, or already loaded (by a
    CUDA 12 build of torch, for one).
    """
    import ctypes

    for name in CUDA_RUNTIME:
        try:
            ctypes.CDLL(name)
        except OSError:
            return name
    return None


SOURCE_RECORD = "paranmt_hf_source.json"
"""The record of a conversion: the model it was made from and that model's content hash."""

def model_folder(model: str, revision: str | None = None) -> Path:
    """The local folder of a model: the folder itself, or the snapshot of a Hub id at ``revision`` (fetched once).

    Raises:
        TranslationModelError: not a model folder, or a Hub id that cannot be fetched.
    """
    return resolve_translation_model(model, revision).folder


def model_digest(folder: str | os.PathLike[str]) -> str:
    """The content key of a model folder: the start of its content hash (:func:`~.model_prep.model_sha256`).

    Never modification times, sizes or the cache's location: a model replaced in place, whatever its times, gets
    another key.
    """
    return model_sha256(folder)[:DIGEST_CHARS]


def _converter(folder: Path, trust_remote_code: bool) -> Any:
    """``TransformersConverter`` for ``folder``, with M2M100's language tokens restored.

    CTranslate2 4.x reads M2M100's language tokens (``__en__``...) from the tokenizer's
    ``additional_special_tokens``, which transformers 5's ``M2M100Tokenizer`` no longer fills, so its vocabulary
    came out without them; the converter below gives the tokenizer's vocabulary with its language tokens.
    """
    ctranslate2 = require("ctranslate2", "translate")

    class Converter(ctranslate2.converters.TransformersConverter):
        def load_model(self, model_class: Any, model_name_or_path: str, **kwargs: Any) -> Any:
            # as strict as the transformers engine: a tensor missing, unexpected or misshapen is refused
            model, info = model_class.from_pretrained(model_name_or_path, output_loading_info=True, **kwargs)
            check_loading_info(str(folder), info)
            return model

        def load_tokenizer(self, tokenizer_class: Any, model_name_or_path: str, **kwargs: Any) -> Any:
            tokenizer = super().load_tokenizer(tokenizer_class, model_name_or_path, **kwargs)
            languages = getattr(tokenizer, "lang_token_to_id", None)
            if languages and type(tokenizer).__name__ == "M2M100Tokenizer":
                vocab = {**tokenizer.get_vocab(), **languages}
                tokenizer.get_vocab = lambda: dict(vocab)
            return tokenizer

    return Converter(str(folder), trust_remote_code=trust_remote_code)


def converted_model(model: str, cache: str | os.PathLike[str] | None = None, trust_remote_code: bool = False,
                    progress: bool = False) -> Path:
    """The CTranslate2 copy of ``model`` (converted on first use, into the cache; float32 weights).

    Kept in ``<cache>/<folder name>-<content key>`` (:func:`model_digest`): the key is the content of the model's
    weight, configuration and tokenizer files, so model B is never served model A's conversion, whatever their names,
    sizes or modification times. ``cache``: where (default ``<paranmt_hf cache>/ctranslate2``; the corpus commands
    pass their run's model folder or ``--model-cache``).

    Raises:
        TranslationModelError: CTranslate2 cannot convert this kind of model.
    """
    folder = model_folder(model)
    sha256 = model_sha256(folder)
    base = Path(cache) if cache is not None else cache_dir() / "ctranslate2"
    target = base / f"{folder.name}-{sha256[:DIGEST_CHARS]}"
    if (target / "model.bin").is_file() and _converted_from(target) == sha256:
        return target
    base.mkdir(parents=True, exist_ok=True)
    if progress:
        logging.getLogger("paranmt_hf.corpus").warning("converting %s to CTranslate2 (once) -> %s", model, target)
    with atomic_output(target, directory=True, overwrite=True, wait=600.0) as tmp:
        converter = _converter(folder, trust_remote_code)
        try:
            converter.convert(str(tmp), force=True)
        except (ValueError, NotImplementedError, KeyError) as err:
            raise TranslationModelError(f"CTranslate2 cannot convert {model}: {err} (use --engine transformers)") \
                from None
        if model_sha256(folder) != sha256:
            raise TranslationModelError(f"the files of {model} changed while it was converted: run the command again")
        (Path(tmp) / SOURCE_RECORD).write_text(json.dumps({"model": str(model), "folder": str(folder),
                                                           "sha256": sha256}), encoding="utf-8")
    return target


def _converted_from(target: Path) -> str | None:
    """The content hash of the model a conversion was made from (None: unknown)."""
    try:
        return json.loads((target / SOURCE_RECORD).read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        return None


@dataclass(frozen=True)
class CTranslate2Options(EngineOptions):
    """The CTranslate2 engine's options.

    Attributes:
        compute_type: ``"int8"`` (default on CPU), ``"float32"``, ``"int8_float32"``, ``"float16"`` (GPU default)...
        inter_threads: batches decoded in parallel (CTranslate2's ``inter_threads``; None: 1); ``threads`` are
            shared among them.
        cache_dir: where converted models are kept (default ``<paranmt_hf cache>/ctranslate2``).
    """

    compute_type: str | None = None
    inter_threads: int | None = None
    cache_dir: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.inter_threads is not None and self.inter_threads < 1:
            from ..errors import InvalidOptionError

            raise InvalidOptionError(f"inter_threads must be >= 1, got {self.inter_threads}")


class CTranslate2Translator(Seq2SeqEngine):
    """Translate with CTranslate2 (see the module docstring).

    Sampling draws from CTranslate2's random stream, which ``set_random_seed`` seeds only for a worker thread that
    has not drawn yet: every sampling call therefore runs on a fresh ``ctranslate2.Translator`` (one worker thread,
    seeded with the call's seed), so a call's samples depend only on its sentences and seed, never on earlier calls
    (the corpus runner calls once per chunk: any task count, worker count or resume gives the same samples).

    Made as every engine (:class:`~paranmt_hf.corpus.translation.transformers_engine.Seq2SeqEngine`); its settings
    are :class:`CTranslate2Options` (compute_type, device, threads, cache_dir, trust_remote_code).
    """

    engine = "ctranslate2"
    display_name = "CTranslate2"
    summary = "runs the model converted once (cached), int8 on CPU by default"
    options_type = CTranslate2Options
    settings: CTranslate2Options

    @classmethod
    def check_decoding(cls, options: DecodingOptions) -> None:
        """CTranslate2 samples with beam 1 only.

        Raises:
            InvalidOptionError: sampling with a beam width above 1.
        """
        from ..errors import InvalidOptionError

        if options.do_sample and (options.num_beams or 1) > 1:
            raise InvalidOptionError("the ctranslate2 engine samples with beam 1 only (independent samples): drop "
                                     "num_beams (--num-beams), or use the transformers engine for beam sampling")

    @classmethod
    def cuda_devices(cls) -> int:
        """The CUDA devices CTranslate2 sees here (0 without CUDA, or without ctranslate2)."""
        try:
            import ctranslate2
        except ImportError:
            return 0
        return int(ctranslate2.get_cuda_device_count())

    @classmethod
    def check_device(cls, settings: CTranslate2Options) -> None:
        """Refuse, in one sentence, a GPU that CTranslate2 sees but cannot use: no CUDA 12 runtime here.

        Raises:
            InvalidOptionError: a device setting that would decode on a GPU (``auto`` with a GPU visible, ``cuda``,
                ``cuda:N``) where :func:`missing_cuda_runtime` finds a library missing.
        """
        from ..errors import InvalidOptionError

        gpus = cls.cuda_devices() if settings.device != "cpu" else 0
        missing = missing_cuda_runtime() if gpus else None
        if missing:
            raise InvalidOptionError(
                f"CTranslate2 sees {gpus} GPU{'s' if gpus > 1 else ''} but cannot load {missing}, the CUDA 12 "
                "runtime its wheels are built for (not installed here, or another CUDA version): install it (pip "
                "install nvidia-cublas-cu12, on the library path), or decode with --device cpu or --engine "
                "transformers")

    def __init__(self, model: str | os.PathLike[str], options: DecodingOptions | None = None,
                 settings: CTranslate2Options | None = None, *, rank: int | None = None) -> None:
        ctranslate2 = require("ctranslate2", "translate")
        from .placement import task_device

        self._load_model_files(model, options, settings)
        self.check_device(self.settings)
        trust = self.settings.trust_remote_code
        self.path = converted_model(self.name, self.settings.cache_dir, trust)
        device = task_device(self.settings.device, ctranslate2.get_cuda_device_count(), rank)
        self.device, _, index = device.partition(":")
        self.device_index = int(index or 0)
        self.compute_type = self.settings.compute_type or ("int8" if self.device == "cpu" else "float16")
        self.translator = self._new_translator()
        eos = self.generation.eos_token_id if self.generation.eos_token_id is not None else self.config.eos_token_id
        eos = eos[0] if isinstance(eos, list) else eos
        self.eos_token = self.tokenizer.convert_ids_to_tokens(int(eos))
        self.prefix = list(self.languages.target_prefix)

    def _new_translator(self, inter_threads: int | None = None) -> Any:
        """A ``ctranslate2.Translator`` of the converted model on this task's device."""
        ctranslate2 = require("ctranslate2", "translate")
        kwargs: dict[str, Any] = {"device": self.device, "device_index": self.device_index,
                                  "compute_type": self.compute_type}
        inter = inter_threads if inter_threads is not None else self.settings.inter_threads
        if inter is not None:
            kwargs["inter_threads"] = inter
        if self.settings.threads is not None:
            kwargs["intra_threads"] = max(self.settings.threads // (inter or 1), 1)
        return ctranslate2.Translator(str(self.path), **kwargs)

    def _scorer(self) -> Any:
        """The translator that scores sampled candidates, on one thread.

        A cost's last digits then do not depend on the task's thread count (float32 scoring sums in another order on
        more threads).
        """
        if self.settings.threads == 1 or self.device != "cpu":
            return self.translator
        if getattr(self, "_one_thread", None) is None:
            ctranslate2 = require("ctranslate2", "translate")
            self._one_thread = ctranslate2.Translator(str(self.path), device=self.device,
                                                      device_index=self.device_index,
                                                      compute_type=self.compute_type, intra_threads=1)
        return self._one_thread

    @property
    def max_decoding(self) -> int:
        """CTranslate2's ``max_decoding_length``: the plan's cap (the target prefix counts, as in transformers)."""
        return self.plan.max_new_tokens

    def translate_kwargs(self) -> dict[str, Any]:
        """The keyword arguments passed to ``Translator.translate_batch`` (the plan's, :class:`DecodingPlan`)."""
        p = self.plan
        width = max(p.num_beams, p.num_return)
        kwargs: dict[str, Any] = {
            "beam_size": p.num_beams, "num_hypotheses": p.num_return,
            "max_batch_size": max(self.batch_tokens // width, 1), "batch_type": "tokens",
            "max_decoding_length": self.max_decoding, "min_decoding_length": p.min_length,
            "max_input_length": 0, "return_end_token": True, "length_penalty": p.length_penalty,
            "no_repeat_ngram_size": p.no_repeat_ngram_size,
        }
        if p.do_sample:
            kwargs.update(sampling_topk=int(p.top_k or 0), sampling_topp=float(p.top_p or 1.0),
                          sampling_temperature=float(p.temperature or 1.0))
        return kwargs

    def translate_ids(self, ids: list[list[int]], seed: int | None) -> list[list[Translation]]:
        """The candidates of each source, best first."""
        ctranslate2 = require("ctranslate2", "translate")
        source = [self.tokenizer.convert_ids_to_tokens(x) for x in ids]
        translator = self.translator
        if self.plan.do_sample:  # a fresh worker thread, seeded for this call (see the class docstring)
            ctranslate2.set_random_seed(self.options.seed if seed is None else seed)
            translator = self._new_translator(inter_threads=1)
        prefix = [self.prefix] * len(source) if self.prefix else None
        # beam / greedy search: the cost comes from the decoder's own scores (Σ log p over the decoded tokens, the
        # end token included, / L ** length_penalty; no mask renormalises them, as min_decoding_length is the
        # model's, normally 0); sampling: by scoring each candidate
        kwargs = self.translate_kwargs()
        from_scores = not self.plan.do_sample and not kwargs["min_decoding_length"]
        results = translator.translate_batch(source, target_prefix=prefix, return_scores=from_scores, **kwargs)
        rows: list[tuple[int, list[str], bool, float | None]] = []
        for index, result in enumerate(results):
            scores = result.scores if from_scores else [None] * len(result.hypotheses)
            for tokens, score in zip(result.hypotheses, scores, strict=True):
                finished = bool(tokens) and tokens[-1] == self.eos_token
                rows.append((index, tokens[:-1] if finished else list(tokens), finished, score))
        if from_scores:
            penalty = kwargs["length_penalty"]
            costs = []
            for _, tokens, finished, score in rows:
                # CTranslate2 normalises by every generated token (target prefix and end token included) but sums
                # the log-probabilities of the decoded ones only: the prefix is forced, not scored
                length = len(tokens) + int(finished)
                counted = length - len(self.prefix)
                costs.append((-score * length**penalty / counted if counted else math.nan, counted))
        else:
            scored = self._scorer().score_batch([source[i] for i, _, _, _ in rows], [t for _, t, _, _ in rows],
                                                 max_batch_size=self.batch_tokens, batch_type="tokens",
                                                 max_input_length=0, offset=len(self.prefix))
            costs = []
            for (_, _, finished, _), result in zip(rows, scored, strict=True):
                log_probs = list(result.log_probs) if finished else list(result.log_probs)[:-1]  # no end token
                costs.append((-math.fsum(log_probs) / len(log_probs) if log_probs else math.nan, len(log_probs)))
        out: list[list[Translation]] = [[] for _ in ids]
        for (index, tokens, finished, _), (cost, counted) in zip(rows, costs, strict=True):
            candidate = self.tokenizer.convert_tokens_to_ids(tokens[len(self.prefix):])
            text = self.tokenizer.decode(candidate, skip_special_tokens=True)
            out[index].append(Translation(text, cost, counted, finished, tuple(candidate)))
        return out

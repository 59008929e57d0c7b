"""Translate sentences with a ``transformers`` seq2seq model: n-best lists with the translation cost of each.

:class:`DecodingOptions` holds what the papers vary; :class:`TransformersTranslator` is the default engine
(:func:`paranmt_hf.corpus.translation.engines.load_translator` picks) and returns a :class:`TranslatedBatch`.

The translation cost is EMNLP 2017's (§5.6): the mean, over the candidate's subword tokens plus its end token, of
``-log p(token | source, previous tokens)`` in nats under the plain softmax (no logits processor), scored by
teacher forcing, so both engines give the same cost for the same candidate; a forced language token is not
counted. At most ``max_new_tokens`` tokens follow the decoder start (:func:`decoding_plan`); no end token is
forced at the cap, so a candidate reaching it is unfinished and its cost counts only its own tokens.

Samples are fixed by the call's seed and sentences (the runner derives a seed per chunk), so any split of the run
gives the same samples. Sentences are sorted by length and batched under ``batch_tokens``; each sentence's output
is that of ``model.generate`` on it alone (tests/test_backtranslate.py checks it).
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ...utils.imports import require
from ..errors import CorpusError, InvalidOptionError


class TranslationModelError(CorpusError):
    """A model that cannot translate here: not a seq2seq model, an unknown language code, a missing code..."""


@dataclass(frozen=True)
class DecodingOptions:
    """How to decode, in both engines and the paraphrase generator (every field optional; None: the model's).

    Attributes:
        num_beams: beam width (EMNLP 2017: 50, ACL 2018: 12); None: 1 when sampling, else the generation config.
        num_return: candidates kept per sentence, best first; at most the beam width, unless sampling with beam 1.
        do_sample: sample instead of searching (beam sampling, transformers only, when ``num_beams`` > 1).
        top_k / top_p / temperature: sampling settings.
        max_length: longest source in tokens; longer sources are truncated (and counted).
        max_new_tokens: most tokens generated after the decoder start, capped at the model's position limit.
        no_repeat_ngram_size: forbid repeating n-grams of this size (0: off).
        source_lang / target_lang: language codes for models that need them (NLLB: ``ces_Latn`` / ``eng_Latn``).
        batch_tokens: budget of one batch: sentences x longest source x max(beams, num_return) (None: per device).
        batch_size: most sentences in one batch (None: the token budget alone decides).
        seed: sampling seed (the corpus runner derives one per chunk of input from it).
    """

    num_beams: int | None = None
    num_return: int = 1
    do_sample: bool = False
    top_k: int | None = None
    top_p: float | None = None
    temperature: float | None = None
    max_length: int | None = None
    max_new_tokens: int | None = None
    no_repeat_ngram_size: int | None = None
    source_lang: str | None = None
    target_lang: str | None = None
    batch_tokens: int | None = None
    batch_size: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("num_beams", "max_length", "max_new_tokens", "top_k", "batch_size"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidOptionError(f"{name} must be >= 1, got {value}")
        if self.num_return < 1:
            raise InvalidOptionError(f"num_return must be >= 1, got {self.num_return}")
        if self.no_repeat_ngram_size is not None and self.no_repeat_ngram_size < 0:
            raise InvalidOptionError(f"no_repeat_ngram_size must be >= 0, got {self.no_repeat_ngram_size}")
        if self.num_beams is not None and self.num_return > self.num_beams and \
                not (self.do_sample and self.num_beams == 1):
            raise InvalidOptionError(f"num_return ({self.num_return}) cannot exceed num_beams ({self.num_beams}): a "
                                     "beam search returns at most its width of candidates (sampling without "
                                     "num_beams draws any number)")
        if not self.do_sample and any(v is not None for v in (self.top_k, self.top_p, self.temperature)):
            raise InvalidOptionError("top_k / top_p / temperature are sampling settings: add do_sample=True "
                                     "(--do-sample)")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise InvalidOptionError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.temperature is not None and self.temperature <= 0:
            raise InvalidOptionError(f"temperature must be > 0, got {self.temperature}")
        if self.batch_tokens is not None and self.batch_tokens < 1:
            raise InvalidOptionError(f"batch_tokens must be >= 1, got {self.batch_tokens}")


@dataclass(frozen=True)
class DecodingPlan:
    """What both engines decode with, resolved from :class:`DecodingOptions` and the model (one rule for both).

    Attributes:
        num_beams: the beam width (1 when sampling without ``num_beams``).
        do_sample / num_return: as given.
        top_k / top_p / temperature: the sampling settings (the options', else the generation config's, else
            :data:`SAMPLING_DEFAULTS`; None when not sampling; ``top_k=0``: no top-k cut).
        max_new_tokens: most tokens generated after the decoder start, the forced language token and the end token
            included: the options', else the generation config's ``max_new_tokens``, else its ``max_length`` - 1,
            capped at the decoder's positions. Neither engine forces an end token at this cap (a model's
            ``forced_eos_token_id`` is not applied): a candidate that reaches it has no end token and is counted
            unfinished.
        min_length: the generation config's ``min_length`` (tokens after the decoder start).
        no_repeat_ngram_size: the options', else the generation config's (0: off).
        length_penalty: the generation config's (beam search ranking).
    """

    num_beams: int
    num_return: int
    do_sample: bool
    top_k: int | None
    top_p: float | None
    temperature: float | None
    max_new_tokens: int
    min_length: int
    no_repeat_ngram_size: int
    length_penalty: float


def decoding_plan(options: DecodingOptions, generation: Any, config: Any, model: str = "the model") -> DecodingPlan:
    """The plan of ``options`` for a model with this generation config and config (see :class:`DecodingPlan`).

    Raises:
        InvalidOptionError: ``num_return`` above the model's default beam width (without sampling), or
            ``max_new_tokens`` beyond the model's positions.
    """
    o = options
    num_beams = o.num_beams or (1 if o.do_sample else int(getattr(generation, "num_beams", None) or 1))
    if o.num_return > num_beams and not (o.do_sample and num_beams == 1):
        raise InvalidOptionError(f"num_return ({o.num_return}) exceeds the beam width ({num_beams}, {model}'s "
                                 "default): give num_beams (--num-beams), or sample (--do-sample)")
    positions = decoder_positions(config)
    if o.max_new_tokens is not None:
        if positions is not None and o.max_new_tokens > positions:
            raise InvalidOptionError(f"max_new_tokens ({o.max_new_tokens}) exceeds the {positions} positions of "
                                     f"{model} (max_position_embeddings): give at most {positions}")
        max_new = o.max_new_tokens
    else:
        given = getattr(generation, "max_new_tokens", None)
        max_new = int(given) if given else max(int(getattr(generation, "max_length", None) or 20) - 1, 1)
        max_new = min(max_new, positions) if positions is not None else max_new

    def sampling(name: str) -> Any:
        if not o.do_sample:
            return None
        for value in (getattr(o, name), getattr(generation, name, None)):
            if value is not None:
                return value
        return SAMPLING_DEFAULTS[name]

    ngram = o.no_repeat_ngram_size if o.no_repeat_ngram_size is not None else \
        getattr(generation, "no_repeat_ngram_size", None)
    penalty = getattr(generation, "length_penalty", None)
    return DecodingPlan(num_beams=num_beams, num_return=o.num_return, do_sample=o.do_sample, top_k=sampling("top_k"),
                        top_p=sampling("top_p"), temperature=sampling("temperature"), max_new_tokens=max_new,
                        min_length=int(getattr(generation, "min_length", None) or 0),
                        no_repeat_ngram_size=int(ngram or 0),
                        length_penalty=float(penalty if penalty is not None else 1.0))


SAMPLING_DEFAULTS = {"top_k": 50, "top_p": 1.0, "temperature": 1.0}
"""What ``generate`` samples with when neither the options nor the model's generation config say (transformers'
defaults; both engines use them)."""


def decoder_positions(config: Any) -> int | None:
    """The decoder's position limit (``max_position_embeddings``; None: the model has none)."""
    if hasattr(config, "get_text_config"):
        config = config.get_text_config(decoder=True)
    value = getattr(config, "max_position_embeddings", None)
    return int(value) if isinstance(value, int) and 0 < value < 10**8 else None


@dataclass(frozen=True)
class EngineOptions:
    """What every translation engine takes besides the decoding (the engines' own options classes add theirs).

    Attributes:
        device: ``auto`` (default), ``cpu``, ``cuda`` or ``cuda:N``; ``auto`` and ``cuda`` give each task its own
            visible GPU (:func:`paranmt_hf.corpus.translation.placement.task_device`).
        threads: CPU threads of the engine (None: the task's share, else the library's default).
        trust_remote_code: run code from the model folder (needed by few translation models).
    """

    device: str = "auto"
    threads: int | None = None
    trust_remote_code: bool = False

    def __post_init__(self) -> None:
        from .placement import check_device

        check_device(self.device)
        if self.threads is not None and self.threads < 1:
            raise InvalidOptionError(f"threads must be >= 1, got {self.threads}")


@dataclass(frozen=True)
class TransformersOptions(EngineOptions):
    """The transformers engine's options.

    Attributes:
        dtype: the weights' dtype: ``float32`` (default), ``float16`` or ``bfloat16``. float32 by measurement: an
            opus-mt-sized model generated faster in float32 than in half precision on an H200
            (benchmarks/backtranslation); half precision pays off for larger models.
    """

    dtype: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.dtype is not None and self.dtype not in DTYPES:
            raise InvalidOptionError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")


DTYPES = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class Translation:
    """One candidate.

    Attributes:
        text: the decoded candidate (special tokens skipped).
        cost: mean negative log-likelihood per counted token, in nats (see the module docstring).
        tokens: the tokens counted in the cost (the candidate's tokens, plus its end token when it has one).
        finished: whether it ended with the end token (False: cut at ``max_new_tokens``).
        token_ids: the candidate's token ids (no decoder-start, forced language or end token).
    """

    text: str
    cost: float
    tokens: int
    finished: bool = True
    token_ids: tuple[int, ...] = ()


@dataclass
class TranslatedBatch:
    """The candidates of each sentence (best first) and which sources were truncated to ``max_length``."""

    hypotheses: list[list[Translation]]
    truncated: list[bool] = field(default_factory=list)

    @property
    def truncated_count(self) -> int:
        """Sources cut to ``max_length``."""
        return sum(self.truncated)


class Translator(Protocol):
    """What both engines do."""

    options: DecodingOptions

    def translate(self, sentences: Sequence[str], seed: int | None = None) -> TranslatedBatch:
        """The candidates of each sentence (``seed``: sampling seed for this call, default ``options.seed``)."""


# ---- the model, its tokenizer and its language codes ------------------------------------------------------------


def resolve_model(model: str | os.PathLike[str]) -> str:
    """A local folder as a string path, after checking it exists; a Hub id unchanged.

    Raises:
        TranslationModelError: a local-looking path that is not a folder.
    """
    from ...utils.paths import looks_local

    name = os.fspath(model)
    if looks_local(name) or Path(name).expanduser().exists():
        path = Path(name).expanduser()
        if not path.is_dir():
            raise TranslationModelError(f"model folder {name} not found (a local path: the Hub was not asked)")
        if not (path / "config.json").is_file():
            raise TranslationModelError(f"{name} is not a transformers model folder (no config.json)")
        return str(path)
    return name


def load_seq2seq_config(model: str, trust_remote_code: bool = False) -> Any:
    """The model's ``transformers`` config, checked to be an encoder-decoder (seq2seq) model.

    Raises:
        TranslationModelError: the model is not an encoder-decoder model, or has no usable config.
    """
    transformers = require("transformers", "translate")
    try:
        config = transformers.AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as err:
        raise TranslationModelError(f"cannot load a transformers config from {model}: {err}") from None
    if not getattr(config, "is_encoder_decoder", False):
        kind = getattr(config, "model_type", "unknown")
        raise TranslationModelError(
            f"{model} is a {kind!r} model, not an encoder-decoder (seq2seq) translation model: use one such as "
            "Helsinki-NLP/opus-mt-cs-en (Marian), facebook/nllb-200-distilled-600M or facebook/m2m100_418M")
    return config


@dataclass(frozen=True)
class LanguageCodes:
    """How a tokenizer marks languages: whether it needs codes, the codes it knows, the forced target token."""

    needed: bool
    known: tuple[str, ...] = ()
    forced_bos_token_id: int | None = None
    target_prefix: tuple[str, ...] = ()

    @classmethod
    def setup(cls, tokenizer: Any, model: str, source_lang: str | None, target_lang: str | None) -> LanguageCodes:
        """Check the codes against the tokenizer, set its source language, and find the forced target token.

        Raises:
            TranslationModelError: a code is missing for a model that needs them, or unknown to its tokenizer.
        """
        needed = hasattr(tokenizer, "src_lang")
        if not needed:
            if source_lang or target_lang:
                raise TranslationModelError(
                    f"{model} translates one language pair and takes no language codes (got "
                    f"{source_lang or target_lang!r}); drop --source-lang/--target-lang")
            return cls(False)
        known = _known_codes(tokenizer)
        for flag, code in (("--source-lang", source_lang), ("--target-lang", target_lang)):
            if not code:
                example = "ces_Latn / eng_Latn" if any("_" in k for k in known) else "cs / en"
                raise TranslationModelError(f"{model} is a multilingual model: give {flag} (its codes look like "
                                            f"{example})")
            if known and code not in known:
                close = [k for k in known if k.split("_")[0].startswith(code[:2])][:8]
                raise TranslationModelError(f"unknown language code {code!r} for {model}"
                                            + (f"; close ones: {', '.join(close)}" if close else "")
                                            + f" ({len(known)} codes, e.g. {', '.join(known[:5])})")
        tokenizer.src_lang = source_lang
        if hasattr(tokenizer, "get_lang_id"):  # M2M100: code "en" -> token "__en__"
            target_id = tokenizer.get_lang_id(target_lang)
        else:
            target_id = tokenizer.convert_tokens_to_ids(target_lang)
        if target_id is None or target_id == tokenizer.unk_token_id:
            raise TranslationModelError(f"unknown language code {target_lang!r} for {model}")
        return cls(True, known, int(target_id), (tokenizer.convert_ids_to_tokens(int(target_id)),))


ENGLISH_CODES = ("en", "eng")
"""The language part of English's codes (NLLB ``eng_Latn``, M2M100 ``en``, mBART ``en_XX``)."""


def require_english_target(target_lang: str | None) -> None:
    """Refuse a target language other than English: back-translation pairs its output with English references.

    Raises:
        TranslationModelError: ``target_lang`` names another language (e.g. NLLB's ``fra_Latn``).
    """
    if target_lang is None:
        return
    language = target_lang.replace("-", "_").split("_")[0].strip("_").lower()
    if language not in ENGLISH_CODES:
        raise TranslationModelError(
            f"--target-lang {target_lang} is not English: back-translation makes English paraphrases of the English "
            "references (give English's code: eng_Latn for NLLB, en for M2M100, en_XX for mBART)")


def _known_codes(tokenizer: Any) -> tuple[str, ...]:
    codes = getattr(tokenizer, "lang_code_to_id", None)
    if codes:
        return tuple(codes)
    special = list(getattr(tokenizer, "extra_special_tokens", None) or [])
    special += list(getattr(tokenizer, "additional_special_tokens", None) or [])
    standard = {str(getattr(tokenizer, f"{name}_token", None)) for name in ("bos", "eos", "unk", "pad", "mask", "cls",
                                                                            "sep")}
    return tuple(dict.fromkeys(t for t in special if isinstance(t, str) and t not in standard))


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """No "Loading weights" bars from transformers while a model loads (every task loads its own)."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def load_tokenizer(model: str, trust_remote_code: bool = False) -> Any:
    """The model's tokenizer (a clear error when it has none)."""
    transformers = require("transformers", "translate")
    try:
        return transformers.AutoTokenizer.from_pretrained(model, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, TypeError) as err:
        raise TranslationModelError(f"cannot load the tokenizer of {model}: {err}") from None


def model_max_length(config: Any, tokenizer: Any) -> int:
    """The longest source the model takes: its position limit, or the tokenizer's, whichever is smaller."""
    limits = [getattr(config, "max_position_embeddings", None), getattr(tokenizer, "model_max_length", None)]
    limits = [int(v) for v in limits if isinstance(v, int | float) and 0 < v < 1e9]
    return min(limits) if limits else 1024


def length_sorted_batches(lengths: Sequence[int], budget: int, width: int,
                          max_items: int | None = None, row_tokens: int = 0) -> list[list[int]]:
    """Indices grouped into batches, longest first.

    Each batch holds at most ``budget`` = sentences x (longest + ``row_tokens``) x ``width`` tokens (and
    ``max_items`` sentences; :class:`BatchBudget`).
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        longest = lengths[current[0]] if current else lengths[index]
        if current and ((len(current) + 1) * (max(longest, 1) + row_tokens) * width > budget
                        or (max_items is not None and len(current) >= max_items)):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


@dataclass
class EncodedSources:
    """Token ids of the sources (truncated to the limit) and which were truncated."""

    ids: list[list[int]]
    truncated: list[bool]


def encode_sources(tokenizer: Any, sentences: Sequence[str], max_length: int) -> EncodedSources:
    """Token ids of each sentence with the tokenizer's special tokens, cut to ``max_length`` (flagged)."""
    ids = tokenizer(list(sentences), add_special_tokens=True, truncation=False)["input_ids"]
    truncated = [len(x) > max_length for x in ids]
    if any(truncated):
        cut = tokenizer([s for s, t in zip(sentences, truncated, strict=True) if t], add_special_tokens=True,
                        truncation=True, max_length=max_length)["input_ids"]
        it = iter(cut)
        ids = [next(it) if t else x for x, t in zip(ids, truncated, strict=True)]
    return EncodedSources(ids, truncated)


def load_generation_config(model: str, config: Any) -> Any:
    """The model's generation config (``generation_config.json``, else derived from its config)."""
    transformers = require("transformers", "translate")
    try:
        return transformers.GenerationConfig.from_pretrained(model)
    except OSError:
        return transformers.GenerationConfig.from_model_config(config)


def load_seq2seq_model(model: str, trust_remote_code: bool = False, **kwargs: Any) -> Any:
    """``AutoModelForSeq2SeqLM.from_pretrained(model)``, refused unless every weight matches its tensor.

    transformers only warns when a tensor of the file is missing, unexpected or of another shape (and starts the
    missing ones at random): here such a folder is refused, as the encoders' loader refuses it.

    Raises:
        TranslationModelError: the model cannot load, or its weights do not match its architecture.
    """
    transformers = require("transformers", "translate")
    try:
        with quiet_loading():
            loaded, info = transformers.AutoModelForSeq2SeqLM.from_pretrained(
                model, trust_remote_code=trust_remote_code, output_loading_info=True, **kwargs)
    except (OSError, ValueError) as err:
        raise TranslationModelError(f"cannot load {model} as a seq2seq model: {err}") from None
    check_loading_info(model, info)
    return loaded


def check_loading_info(model: str, info: dict[str, Any]) -> None:
    """Refuse a model whose weights did not all load (``output_loading_info`` of ``from_pretrained``).

    Raises:
        TranslationModelError: missing, unexpected or mismatched tensors, naming a few of them.
    """
    problems = []
    for key, what in (("missing_keys", "missing"), ("unexpected_keys", "unexpected"),
                      ("mismatched_keys", "of the wrong shape")):
        names = sorted(str(k[0] if isinstance(k, tuple) else k) for k in info.get(key) or ())
        if names:
            problems.append(f"{len(names)} {what} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})")
    if problems:
        raise TranslationModelError(f"the weights of {model} do not match its architecture: tensors "
                                    + "; ".join(problems) + " (a renamed, truncated or foreign checkpoint); refusing "
                                    "to translate with randomly initialised weights")


CPU_BATCH_TOKENS = 16384
"""The token budget of a batch on a CPU (benchmarks/backtranslation: larger batches gain nothing on CPU cores)."""
GPU_MEMORY_SHARE = 0.6
"""On a GPU: the share of its memory, less the model's weights, that one batch may fill (the rest: activations,
the allocator's slack, the CUDA context)."""
GPU_MEMORY_SLACK = 2.0
"""On a GPU: bytes a batch holds at its peak per byte of the cached keys, values and logits counted by
:func:`device_batch_budget` (temporaries of attention, of the feed-forward layers and of the beam search)."""


@dataclass(frozen=True)
class BatchBudget:
    """How many sentences one batch holds.

    A batch of ``n`` sentences whose longest source has ``longest`` tokens, decoded ``width`` = max(beams,
    candidates) wide, holds at most ``tokens`` = n x width x (longest + ``row_tokens``): ``row_tokens`` is the memory
    of one candidate that does not grow with its source (its cached self-attention over the generated tokens, its
    logits over the vocabulary), in units of the memory of one source token (the cross-attention keys and values of
    every decoder layer). On a CPU and for a budget given by the user (``--batch-tokens``) ``row_tokens`` is 0.
    """

    tokens: int
    row_tokens: int = 0


def device_batch_budget(device: str, config: Any = None, *, dtype_bytes: int = 4, max_new_tokens: int = 32,
                        weight_bytes: int = 0, total_memory: int | None = None) -> BatchBudget:
    """The default :class:`BatchBudget` on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``...).

    CPU: :data:`CPU_BATCH_TOKENS` tokens. CUDA: sized from the device's memory (``total_memory``, default what torch
    reads of the device), less the model's weights (``weight_bytes``), of which :data:`GPU_MEMORY_SHARE` holds one
    batch: a source token costs the cross-attention keys and values of every decoder layer and the encoder state
    (``(2 x decoder layers + 1) x d_model x dtype_bytes``), a candidate its self-attention cache over
    ``max_new_tokens`` (twice: the beam search reorders it into a copy) and its logits over the vocabulary in the
    model's dtype and in float32 (the beam search's log-softmax, scores and top-k), all times
    :data:`GPU_MEMORY_SLACK`. The device's total memory, not its free memory, so that a run's batches, and so its
    output, never depend on what else the GPU holds at the time (a GPU shared with other work: give
    ``batch_tokens``). :data:`CPU_BATCH_TOKENS` when the memory cannot be read (no torch with CUDA).
    """
    if not str(device).startswith("cuda"):
        return BatchBudget(CPU_BATCH_TOKENS)
    if total_memory is None:
        try:
            import torch

            index = int(str(device).partition(":")[2] or 0)
            total_memory = int(torch.cuda.get_device_properties(index).total_memory)
        except Exception:  # noqa: BLE001 - no torch with CUDA here (CTranslate2 alone): the CPU budget
            return BatchBudget(CPU_BATCH_TOKENS)
    width = int(_config_value(config, ("d_model", "hidden_size"), 512))
    layers = int(_config_value(config, ("decoder_layers", "num_decoder_layers", "num_hidden_layers"), 6))
    vocab = int(_config_value(config, ("vocab_size",), 32000))
    per_token = (2 * layers + 1) * width * dtype_bytes
    per_row = 2 * 2 * layers * width * max(max_new_tokens, 1) * dtype_bytes + vocab * (dtype_bytes + 3 * 4)
    usable = max(total_memory - weight_bytes, 0) * GPU_MEMORY_SHARE / GPU_MEMORY_SLACK
    return BatchBudget(max(int(usable // per_token), 1), math.ceil(per_row / per_token))


def _config_value(config: Any, names: Sequence[str], default: int) -> int:
    """The first of ``names`` set on the config, else on its decoder's text config (a composite model's), else default.

    The config first: transformers 5.24's ``MarianConfig.get_text_config(decoder=True)`` reports ``decoder_layers``
    as encoder + decoder layers.
    """
    configs = [config]
    if config is not None and hasattr(config, "get_text_config"):
        configs.append(config.get_text_config(decoder=True))
    for candidate in configs:
        for name in names:
            value = getattr(candidate, name, None) if candidate is not None else None
            if isinstance(value, int) and value > 0:
                return value
    return default


def device_batch_tokens(device: str, config: Any = None, **kwargs: Any) -> int:
    """The default budget on ``device`` as plain tokens (sentences x longest x width), for a 32-token source.

    What CTranslate2 takes (its ``max_batch_size`` in tokens): :func:`device_batch_budget` with the memory of a
    candidate's cache and logits spread over a source of 32 tokens.
    """
    budget = device_batch_budget(device, config, **kwargs)
    return max(budget.tokens * 32 // (32 + budget.row_tokens), 1)


class Seq2SeqEngine:
    """What both engines share.

    The model's name, config, generation config, tokenizer and language codes, the source length limit, the
    decoding plan (:func:`decoding_plan`), the task's device, and the sentences -> token ids step of
    :meth:`translate` (an engine implements :meth:`translate_ids`). Every engine is made as
    ``Engine(model, options, settings, rank=...)``: ``model`` a Hub id or local folder of a transformers
    translation model (Marian, NLLB, M2M100, mBART, ...), ``options`` the :class:`DecodingOptions`, ``settings`` the
    engine's options (its ``options_type``), ``rank`` the corpus task's rank, which places the task on its own GPU
    (:func:`~paranmt_hf.corpus.translation.placement.task_device`).
    """

    engine: str
    display_name: str
    summary: str
    """What the engine does, in a few words (the CLI's ``--engine`` help)."""
    options_type: type[EngineOptions] = EngineOptions
    options: DecodingOptions
    settings: EngineOptions
    name: str
    config: Any
    generation: Any
    tokenizer: Any
    languages: LanguageCodes
    max_length: int
    plan: DecodingPlan

    @classmethod
    def check_decoding(cls, options: DecodingOptions) -> None:
        """Refuse decoding options this engine cannot honour (before any model loads)."""

    @classmethod
    def check_device(cls, settings: Any) -> None:
        """Refuse a device this engine cannot use here, in one sentence (before any work)."""

    @classmethod
    def cuda_devices(cls) -> int:
        """The CUDA devices this engine sees here (0 without CUDA)."""
        try:
            import torch
        except ImportError:
            return 0
        return torch.cuda.device_count() if torch.cuda.is_available() else 0

    def _load_model_files(self, model: str | os.PathLike[str], options: DecodingOptions | None,
                          settings: EngineOptions | None) -> None:
        """Load what both engines need.

        Sets ``options``, ``settings``, ``name``, ``config``, ``generation``, ``tokenizer``, ``languages``,
        ``max_length`` and ``plan``.
        """
        self.options = options or DecodingOptions()
        self.settings = settings if settings is not None else self.options_type()
        if not isinstance(self.settings, self.options_type):
            raise InvalidOptionError(f"the {self.engine} engine takes {self.options_type.__name__}, not "
                                     f"{type(self.settings).__name__}")
        self.check_decoding(self.options)
        trust = self.settings.trust_remote_code
        self.name = resolve_model(model)
        self.config = load_seq2seq_config(self.name, trust)
        self.tokenizer = load_tokenizer(self.name, trust)
        self.languages = LanguageCodes.setup(self.tokenizer, self.name, self.options.source_lang,
                                             self.options.target_lang)
        self.generation = load_generation_config(self.name, self.config)
        self.max_length = self.options.max_length or model_max_length(self.config, self.tokenizer)
        self.plan = decoding_plan(self.options, self.generation, self.config, self.name)

    @property
    def num_beams(self) -> int:
        """The beam width decoded with."""
        return self.plan.num_beams

    @property
    def batch_tokens(self) -> int:
        """The token budget of a batch: the options', else the device's (:func:`device_batch_tokens`)."""
        return self.options.batch_tokens or device_batch_tokens(str(getattr(self, "device", "cpu")), self.config,
                                                                max_new_tokens=self.plan.max_new_tokens)

    def translate(self, sentences: Sequence[str], seed: int | None = None) -> TranslatedBatch:
        """The ``num_return`` candidates of each sentence, best first.

        ``seed``: sampling seed for this call (default ``options.seed``); the engine's :meth:`translate_ids` says how
        sampled candidates are ordered.
        """
        sentences = list(sentences)
        if not sentences:
            return TranslatedBatch([], [])
        encoded = encode_sources(self.tokenizer, sentences, self.max_length)
        return TranslatedBatch(self.translate_ids(encoded.ids, seed), encoded.truncated)

    def translate_ids(self, ids: list[list[int]], seed: int | None) -> list[list[Translation]]:
        """The candidates of each source given as token ids (at least one source)."""
        raise NotImplementedError


# ---- the transformers engine --------------------------------------------------------------------------------------


class TransformersTranslator(Seq2SeqEngine):
    """Translate with ``model.generate`` (any ``AutoModelForSeq2SeqLM``), n-best lists with their costs.

    Made as every engine (:class:`Seq2SeqEngine`); its settings are :class:`TransformersOptions` (device, dtype,
    threads, trust_remote_code).
    """

    engine = "transformers"
    display_name = "transformers"
    summary = "runs model.generate (exact)"
    options_type = TransformersOptions
    settings: TransformersOptions

    def __init__(self, model: str | os.PathLike[str], options: DecodingOptions | None = None,
                 settings: TransformersOptions | None = None, *, rank: int | None = None) -> None:
        torch = require("torch", "translate")
        from .placement import task_device

        self._load_model_files(model, options, settings)
        if self.settings.threads is not None:
            torch.set_num_threads(self.settings.threads)
        self.device = torch.device(task_device(self.settings.device,
                                               torch.cuda.device_count() if torch.cuda.is_available() else 0, rank))
        kwargs: dict[str, Any] = {}
        if self.settings.dtype:
            kwargs["dtype"] = getattr(torch, self.settings.dtype)
        model_object = load_seq2seq_model(self.name, self.settings.trust_remote_code, **kwargs)
        self._use_model(model_object.to(self.device))

    @classmethod
    def from_model(cls, model: Any, tokenizer: Any, options: DecodingOptions | None = None,
                   name: str = "the model", generation: Any = None) -> TransformersTranslator:
        """A translator around an already loaded model and tokenizer (kept on the model's device).

        ``generation``: the model's generation config as saved (default: a copy of ``model.generation_config``,
        which the translator sets to its length cap).
        """
        self = cls.__new__(cls)
        self.options = options or DecodingOptions()
        self.settings = TransformersOptions()
        self.name, self.config, self.tokenizer = name, model.config, tokenizer
        self.languages = LanguageCodes.setup(tokenizer, name, self.options.source_lang, self.options.target_lang)
        self.generation = generation if generation is not None else copy.deepcopy(model.generation_config)
        self.max_length = self.options.max_length or model_max_length(self.config, tokenizer)
        self.plan = decoding_plan(self.options, self.generation, self.config, name)
        self.device = model.device
        self._use_model(model)
        return self

    def _use_model(self, model: Any) -> None:
        """Keep the model (evaluation mode) and its end, pad and forced tokens."""
        self.model = model.eval()
        self.scores = True
        generation = self.model.generation_config
        self.eos_ids = _as_set(generation.eos_token_id if generation.eos_token_id is not None
                               else self.config.eos_token_id)
        self.pad_id = generation.pad_token_id if generation.pad_token_id is not None else self.config.pad_token_id
        self.forced_bos = self.languages.forced_bos_token_id if self.languages.needed else \
            generation.forced_bos_token_id
        parameters = list(self.model.parameters()) if hasattr(self.model, "parameters") else []
        self.dtype = parameters[0].dtype if parameters else None
        self._weight_bytes = sum(p.numel() * p.element_size() for p in parameters)
        # the model generates with the plan's length cap (also when called directly); a max_length left beside it
        # would only add transformers' warning that both are set
        generation.max_new_tokens, generation.max_length = self.plan.max_new_tokens, None

    @property
    def batch_budget(self) -> BatchBudget:
        """What one batch holds: ``batch_tokens`` when given, else the device's.

        :func:`device_batch_budget`: on a GPU sized from its memory, the model's weights, its dtype and the length cap.
        """
        if self.options.batch_tokens:
            return BatchBudget(self.options.batch_tokens)
        size = self.dtype.itemsize if self.dtype is not None else 4
        return device_batch_budget(str(self.device), self.config, dtype_bytes=size,
                                   max_new_tokens=self.plan.max_new_tokens, weight_bytes=self._weight_bytes)

    def generate_kwargs(self) -> dict[str, Any]:
        """The keyword arguments passed to ``model.generate`` (besides the inputs).

        The plan's (:class:`DecodingPlan`): no forced end token (``forced_eos_token_id=None``), the length cap as
        ``max_new_tokens``.
        """
        p = self.plan
        kwargs: dict[str, Any] = {"num_beams": p.num_beams, "num_return_sequences": p.num_return,
                                  "do_sample": p.do_sample, "max_new_tokens": p.max_new_tokens,
                                  "forced_eos_token_id": None, "no_repeat_ngram_size": p.no_repeat_ngram_size}
        if p.do_sample:
            kwargs.update(top_k=p.top_k, top_p=p.top_p, temperature=p.temperature)
        if self.languages.needed:
            kwargs["forced_bos_token_id"] = self.languages.forced_bos_token_id
        return kwargs

    def translate_ids(self, ids: list[list[int]], seed: int | None,
                      progress: Any = None) -> list[list[Translation]]:
        """The candidates of each source, best first (sampled ones in draw order), in batches of similar length.

        ``progress``: called with the number of sources of each finished batch.
        """
        torch = require("torch", "translate")
        width = max(self.plan.num_beams, self.plan.num_return)
        budget = self.batch_budget
        out: list[list[Translation]] = [[] for _ in ids]
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.inference_mode(), torch.random.fork_rng(devices=devices):
            torch.manual_seed(self.options.seed if seed is None else seed)
            for batch in length_sorted_batches([len(x) for x in ids], budget.tokens, width, self.options.batch_size,
                                               budget.row_tokens):
                for index, hyps in zip(batch, self._translate_batch([ids[i] for i in batch]), strict=True):
                    out[index] = hyps
                if progress is not None:
                    progress(len(batch))
        return out

    def _translate_batch(self, ids: list[list[int]]) -> list[list[Translation]]:
        torch = require("torch", "translate")
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.pad_id
        longest = max(map(len, ids))
        # right padding, as the tokenizer pads for seq2seq models
        input_ids = torch.full((len(ids), longest), pad, dtype=torch.long)
        mask = torch.zeros((len(ids), longest), dtype=torch.long)
        for row, x in enumerate(ids):
            input_ids[row, : len(x)] = torch.tensor(x, dtype=torch.long)
            mask[row, : len(x)] = 1
        input_ids, mask = input_ids.to(self.device), mask.to(self.device)
        sequences = self.model.generate(input_ids=input_ids, attention_mask=mask, **self.generate_kwargs())
        n = self.plan.num_return
        generated = sequences.tolist()  # the one copy of the candidates to the host
        rows = self._candidate_rows(generated)
        if self.scores:
            with one_cpu_thread(self.device.type == "cpu"):
                costs = self._costs(input_ids, mask, sequences, rows, n)
        else:
            costs = [(math.nan, max(r[0] - (1 if self.forced_bos is not None else 0), 0)) for r in rows]
        skip = 1 if self.forced_bos is not None else 0
        candidates = [row[1 + skip : 1 + length - int(finished)]
                      for row, (length, finished) in zip(generated, rows, strict=True)]
        texts = self.tokenizer.batch_decode(candidates, skip_special_tokens=True)
        flat = [Translation(text, cost, count, finished, tuple(candidate))
                for text, (cost, count), (_, finished), candidate in zip(texts, costs, rows, candidates, strict=True)]
        return [flat[i * n : (i + 1) * n] for i in range(len(ids))]

    def _candidate_rows(self, sequences: list[list[int]]) -> list[tuple[int, bool]]:
        """Per generated row: its tokens after the decoder start up to its end token (included), and if it ended."""
        out = []
        for row in (r[1:] for r in sequences):
            end = next((i for i, t in enumerate(row) if t in self.eos_ids), None)
            if end is None:
                length = len(row)
                while length and row[length - 1] == self.pad_id:
                    length -= 1
                out.append((length, False))
            else:
                out.append((end + 1, True))
        return out

    def _costs(self, input_ids: Any, mask: Any, sequences: Any, rows: list[tuple[int, bool]],
               n: int) -> list[tuple[float, int]]:
        """Teacher-forced mean NLL per counted token of every generated row (see the module docstring)."""
        torch = require("torch", "translate")
        from transformers.modeling_outputs import BaseModelOutput

        encoder = self.model.get_encoder()(input_ids=input_ids, attention_mask=mask).last_hidden_state
        skip = 1 if self.forced_bos is not None else 0  # the forced target-language token is not counted
        vocab = int(self.model.config.get_text_config(decoder=True).vocab_size
                    if hasattr(self.model.config, "get_text_config") else self.model.config.vocab_size)
        length = max(max(r[0] for r in rows), 1)
        counts = torch.tensor([r[0] for r in rows], device=input_ids.device)
        # positions skip..count-1 of a row are counted: its tokens after a forced language token, end token included
        positions = torch.arange(length, device=input_ids.device)
        counted = (positions >= skip) & (positions < counts[:, None])
        chunk = self._cost_rows(length, vocab)
        sums = []
        for start in range(0, len(rows), chunk):
            idx = torch.arange(start, min(start + chunk, len(rows)), device=input_ids.device)
            source = idx // n
            decoder_input = sequences[idx, :length]
            target = sequences[idx, 1 : length + 1]
            if target.shape[1] < length:  # rows are padded to the longest: pad the target the same way
                target = torch.nn.functional.pad(target, (0, length - target.shape[1]), value=self.pad_id)
            logits = self.model(encoder_outputs=BaseModelOutput(last_hidden_state=encoder[source]),
                                attention_mask=mask[source], decoder_input_ids=decoder_input).logits
            logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)
            sums.append(torch.where(counted[idx], logp, 0.0).sum(-1))
        totals = torch.cat(sums).tolist()  # one copy to the host per batch, no synchronisation per row
        out: list[tuple[float, int]] = []
        for total, (count, _) in zip(totals, rows, strict=True):
            tokens = max(count - skip, 0)
            out.append((-total / tokens if tokens else math.nan, tokens))
        return out

    def _cost_rows(self, length: int, vocab: int) -> int:
        """Candidates scored at once: on a CPU 32M logits; on a GPU as many as the batch budget's memory holds."""
        if self.device.type != "cuda" or self.options.batch_tokens:
            return max(1, (1 << 25) // max(length * vocab, 1))
        budget = self.batch_budget
        size = self.dtype.itemsize if self.dtype is not None else 4
        # the budget's bytes (tokens x bytes per source token) over a candidate's logits: model dtype + 2 float32
        per_token = (2 * _config_value(self.config, ("decoder_layers", "num_decoder_layers", "num_hidden_layers"), 6)
                     + 1) * _config_value(self.config, ("d_model", "hidden_size"), 512) * size
        return max(1, int(budget.tokens * per_token // (length * vocab * (size + 8))))


@contextlib.contextmanager
def one_cpu_thread(active: bool = True) -> Iterator[None]:
    """One CPU thread for torch inside the block (when ``active``), restored after.

    The costs are computed this way: torch's CPU kernels sum in another order with another thread count, which moves
    a cost's last digits, and the threads of a task depend on ``--workers``; on one thread the costs are the same
    whatever the tasks, workers or threads.
    """
    torch = require("torch", "translate")
    before = torch.get_num_threads()
    if active and before != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if active and before != 1:
            torch.set_num_threads(before)


def _as_set(value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, list | tuple | set):
        return {int(v) for v in value}
    return {int(value)}

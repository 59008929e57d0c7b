"""The CTranslate2 engine: a transformers translation model converted once (offline, cached) and run in C++.

``CTranslate2Translator(model, options, compute_type="int8")`` converts the model folder (or the local snapshot of a
Hub id) with ``ctranslate2.converters.TransformersConverter`` into ``<cache>/ctranslate2/<name>-<digest>`` (the digest
hashes the content of the model's files, whatever their times), then translates with ``ctranslate2.Translator``:
the model's own tokenizer makes the source tokens, the target language of NLLB / M2M100 / mBART models is the
target prefix, CTranslate2 sorts and batches by tokens, and the translation cost is computed by scoring each
candidate (``Translator.score_batch``, the language token excluded) when sampling, and from the decoder's own
scores under beam and greedy search (CTranslate2 sums the same log-probabilities, end token included, the forced
language token excluded, with no mask renormalising them at ``min_decoding_length=0``),
so it has the definition of :mod:`paranmt_hf.corpus.translation` whatever the engine (tests/test_backtranslate.py
checks both ways against a full scoring). Weights are stored in float32; ``compute_type``
(``int8`` on CPU by default, ``float32`` for exact float arithmetic) chooses how they run.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

from ..utils.atomic import atomic_output
from ..utils.imports import require
from ..utils.paths import cache_dir
from .model_prep import DIGEST_CHARS, model_sha256, resolve_translation_model
from .translation import (
    DecodingOptions,
    Seq2SeqEngine,
    Translation,
    TranslationModelError,
)

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


class CTranslate2Translator(Seq2SeqEngine):
    """Translate with CTranslate2 (see the module docstring).

    Args:
        model: Hub id or local folder of a transformers translation model (Marian, NLLB, M2M100, mBART, ...).
        options: decoding options.
        compute_type: ``"int8"`` (default on CPU), ``"float32"``, ``"int8_float32"``, ``"float16"`` (GPU)...
        device: ``"cpu"`` or ``"cuda"`` (None: CUDA when CTranslate2 sees a GPU).
        threads: CPU threads of the translator (None: CTranslate2's default).
        inter_threads: batches decoded in parallel (CTranslate2's ``inter_threads``; None: 1); ``threads`` are
            shared among them.
        cache_dir: where converted models are kept (default ``<paranmt_hf cache>/ctranslate2``).
        trust_remote_code: allow code from the model folder (conversion and tokenizer).
    """

    engine = "ctranslate2"

    def __init__(self, model: str | os.PathLike[str], options: DecodingOptions | None = None, *,
                 compute_type: str | None = None, device: str | None = None, threads: int | None = None,
                 inter_threads: int | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 trust_remote_code: bool = False) -> None:
        ctranslate2 = require("ctranslate2", "translate")
        self._load_model_files(model, options, trust_remote_code)
        transformers = require("transformers", "translate")
        try:
            self.generation = transformers.GenerationConfig.from_pretrained(self.name)
        except OSError:
            self.generation = transformers.GenerationConfig.from_model_config(self.config)
        self.path = converted_model(self.name, cache_dir, trust_remote_code)
        self.device = device or ("cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu")
        self.compute_type = compute_type or ("int8" if self.device == "cpu" else "float16")
        kwargs: dict[str, Any] = {"device": self.device, "compute_type": self.compute_type}
        if inter_threads is not None:
            if inter_threads < 1:
                raise TranslationModelError(f"inter_threads must be >= 1, got {inter_threads}")
            kwargs["inter_threads"] = inter_threads
        if threads is not None:
            kwargs["intra_threads"] = max(threads // (inter_threads or 1), 1)
        self.translator = ctranslate2.Translator(str(self.path), **kwargs)
        self._set_limits(self.generation.num_beams)
        eos = self.generation.eos_token_id if self.generation.eos_token_id is not None else self.config.eos_token_id
        eos = eos[0] if isinstance(eos, list) else eos
        self.eos_token = self.tokenizer.convert_ids_to_tokens(int(eos))
        self.prefix = list(self.languages.target_prefix)
        # the generated tokens after the decoder start: the language token, the candidate, the end token
        self.max_decoding = self.options.max_new_tokens or max((self.generation.max_length or 256) - 1, 1)

    def translate_kwargs(self) -> dict[str, Any]:
        """The keyword arguments passed to ``Translator.translate_batch``."""
        o = self.options
        width = max(self.num_beams, o.num_return)
        kwargs: dict[str, Any] = {
            "beam_size": 1 if o.do_sample else self.num_beams, "num_hypotheses": o.num_return,
            "max_batch_size": max(o.batch_tokens // width, 1), "batch_type": "tokens",
            "max_decoding_length": self.max_decoding, "min_decoding_length": int(self.generation.min_length or 0),
            "max_input_length": 0, "return_end_token": True,
            "length_penalty": float(self.generation.length_penalty if self.generation.length_penalty is not None
                                    else 1.0),
        }
        if o.do_sample:
            top_k = o.top_k if o.top_k is not None else self.generation.top_k
            kwargs.update(sampling_topk=int(top_k or 0), sampling_topp=float(o.top_p or self.generation.top_p or 1.0),
                          sampling_temperature=float(o.temperature or self.generation.temperature or 1.0))
        return kwargs

    def translate_ids(self, ids: list[list[int]], seed: int | None) -> list[list[Translation]]:
        """The candidates of each source, best first."""
        ctranslate2 = require("ctranslate2", "translate")
        source = [self.tokenizer.convert_ids_to_tokens(x) for x in ids]
        if self.options.do_sample:
            ctranslate2.set_random_seed(self.options.seed if seed is None else seed)
        prefix = [self.prefix] * len(source) if self.prefix else None
        # beam / greedy search: the cost comes from the decoder's own scores (Σ log p over the decoded tokens, the
        # end token included, / L ** length_penalty; no mask renormalises them, as min_decoding_length is the
        # model's, normally 0); sampling: by scoring each candidate
        kwargs = self.translate_kwargs()
        from_scores = not self.options.do_sample and not kwargs["min_decoding_length"]
        results = self.translator.translate_batch(source, target_prefix=prefix, return_scores=from_scores, **kwargs)
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
            scored = self.translator.score_batch([source[i] for i, _, _, _ in rows], [t for _, t, _, _ in rows],
                                                 max_batch_size=self.options.batch_tokens, batch_type="tokens",
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

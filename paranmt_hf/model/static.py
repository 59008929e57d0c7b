"""Torch-free inference for averaging models: NumPy and ``tokenizers`` only (``huggingface_hub`` for Hub ids).

A saved model of an averaging encoder (``word``, ``trigram``, ``sp``, ``subword`` and their combinations) embeds text
without torch or transformers, from the files every saved directory holds (``config.json``, the tokenizer files,
``model.safetensors``, memory-mapped; float16 weights are upcast, int8 weights dequantised)::

    from paranmt_hf import StaticEncoder             # imports neither torch nor transformers
    enc = StaticEncoder.from_pretrained("outputs/main/model")       # a directory or a Hub id
    emb = enc.encode(["A man plays the guitar.", "Someone is playing a guitar."], normalize_embeddings=True)
    enc.similarity(emb, emb)                                          # cosine matrix (NumPy)

It reads text with the model's tokenizer files and the exact batched token ids of every loader (:mod:`.token_ids`),
and averages with the model's rules from a per-chunk cache of summed rows (:mod:`paranmt_hf.model.averaging`): the
embeddings equal ``ParaNMTEncoder``'s up to float32 rounding. ``encode`` takes sentence-transformers' keywords.
Recurrent models (LSTM, BiLSTM, GRAN) need torch: ``ParaNMTEncoder`` (the ``torch`` extra).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..modeling.kinds_paranmt import ENCODER_KIND_SPECS, renamed_fields, resolve_components
from ..modeling.segmentation_paranmt import Segmenters
from .averaging import AveragingModel, ChunkAverager
from .encode_api import cosine_matrix, deliver, pairwise_cosine, prepare_texts
from .storage import INT8_FILE, SCALE_SUFFIX
from .token_ids import fast_token_ids, ids_to_flat

WEIGHTS_FILE = "model.safetensors"
PARANMT_TOKENIZER_FILE = "paranmt_tokenizer.json"
TOKENIZER_FILE = "tokenizer.json"


def _file(name_or_path: str, filename: str, hub: dict[str, Any], required: bool = True) -> str | None:
    """The local path of ``filename`` of a model directory or Hub repository (None when absent and not required)."""
    if os.path.isdir(name_or_path):
        path = os.path.join(name_or_path, filename)
        if os.path.isfile(path):
            return path
        if required:
            raise FileNotFoundError(f"{name_or_path} has no {filename}: is it a model directory saved by paranmt_hf?")
        return None
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    from .locate import hub_failure_said

    with hub_failure_said(name_or_path, hub.get("revision")):  # the sentence ParaNMTEncoder and `embed` say
        try:
            return hf_hub_download(name_or_path, filename, **hub)
        except EntryNotFoundError:
            if required:
                raise
            return None


def _read_json(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


_SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "I8": np.int8, "F64": np.float64, "I64": np.int64}


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file as read-only NumPy views of a memory map (nothing is copied).

    The format: an 8-byte little-endian header size, a JSON header (``dtype``, ``shape``, ``data_offsets`` of each
    tensor), then the data.

    Raises:
        ValueError: a file that is not safetensors, or a dtype NumPy has no exact equivalent for (bfloat16).
    """
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        try:
            header = json.loads(f.read(size))
        except ValueError as err:
            raise ValueError(f"{path} is not a safetensors file") from err
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {key} has dtype {info['dtype']}, which the torch-free path cannot read")
        start, end = info["data_offsets"]
        tensors[key] = data[start:end].view(dtype).reshape(info["shape"])
    return tensors


def _load_tables(path: str, count: int) -> list[np.ndarray]:
    """The float32 embedding table of each component (``encoders.*``: earlier names; int8 rows dequantised)."""
    tensors = read_safetensors(path)
    tables = []
    for k in range(count):
        key = next((name for name in (f"components.{k}.embedding.weight", f"encoders.{k}.embedding.weight")
                    if name in tensors), None)
        if key is None:
            raise ValueError(f"{path} has no embedding table for component {k}")
        table = tensors[key]
        scale = tensors.get(key + SCALE_SUFFIX)
        if scale is not None:  # the rows of ``storage.quantize_rows``, as ``storage.dequantize_rows``
            table = table.astype(np.float32) * scale.astype(np.float32)[:, None]
        tables.append(table if table.dtype == np.float32 else table.astype(np.float32))
    return tables


class StaticEncoder:
    """An averaging ParaNMT model that embeds text with NumPy (no torch, no transformers).

    Args:
        model: the tables and averaging rules.
        tokenizer: a ``Segmenters`` (trigram and combined models: ``paranmt_tokenizer.json``) or a
            ``tokenizers.Tokenizer`` (word / sp / subword models: ``tokenizer.json``).

    Use :meth:`from_pretrained`.
    """

    similarity_fn_name = "cosine"
    """How :meth:`similarity` compares embeddings (sentence-transformers' attribute)."""

    def __init__(self, model: AveragingModel, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        if isinstance(tokenizer, Segmenters):
            sizes = tokenizer.component_vocab_sizes
            self.reference = lambda texts: [tokenizer.encode_ids(t) for t in texts]
        else:
            sizes = [tokenizer.get_vocab_size(with_added_tokens=True)]
            self.reference = lambda texts: [e.ids for e in tokenizer.encode_batch_fast(list(texts),
                                                                                        add_special_tokens=False)]
        expected = [t.shape[0] for t in model.tables]
        if sizes != expected:
            raise ValueError(f"tokenizer vocabulary sizes {sizes} do not match the model's tables {expected}")
        self.fast_ids = fast_token_ids(tokenizer)
        ids = self.fast_ids if self.fast_ids is not None else (lambda texts: ids_to_flat(self.reference(texts)))
        self.averager = ChunkAverager(model, ids, self.fast_ids)

    @property
    def embedding_dim(self) -> int:
        """Size of the sentence embeddings."""
        return int(self.model.dim)

    def get_embedding_dimension(self) -> int:
        """Size of the sentence embeddings (sentence-transformers' name)."""
        return self.embedding_dim

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str | os.PathLike[str],
        revision: str | None = None,
        token: str | bool | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        local_files_only: bool = False,
    ) -> StaticEncoder:
        """Load a model directory or Hub repository saved by paranmt_hf (``ParaNMTEncoder.save_pretrained``).

        Raises:
            FileNotFoundError: a missing local path, a directory without the model's files, or a name that is no
                folder here and that the Hub (offline: its cache) does not give: one sentence.
            ValueError: a recurrent model (it needs torch: ``ParaNMTEncoder``), or files that do not match.
        """
        from ..utils.imports import install_command
        from ..utils.integrity import check_model_path
        from .folder_kind import check_paranmt_folder

        name = os.fspath(name_or_path)
        check_model_path(name)
        if any(os.path.isfile(os.path.join(name, f)) for f in ("config.json", "modules.json")):
            check_paranmt_folder(name)  # a model2vec / sentence-transformers folder: how to load it instead
        hub = {"revision": revision, "token": token, "cache_dir": cache_dir, "local_files_only": local_files_only}
        config = renamed_fields(_read_json(_file(name, "config.json", hub)))
        if config.get("model_type") != "paranmt":
            raise ValueError(f"{name} is not a ParaNMT model (config.json model_type={config.get('model_type')!r})")
        components = resolve_components(config)
        recurrent = [c["kind"] for c in components if not ENCODER_KIND_SPECS[c["kind"]].averaging]
        if recurrent:
            raise ValueError(f"{name} is a recurrent model ({'+'.join(recurrent)}): StaticEncoder embeds averaging "
                             "models only; load it with ParaNMTEncoder (the [torch] extra: "
                             f"`{install_command(['torch'])}`)")
        int8 = config.get("paranmt_weight_storage") == "int8"
        tables = _load_tables(_file(name, INT8_FILE if int8 else WEIGHTS_FILE, hub), len(components))
        model = AveragingModel(tables, components, config.get("combination", "concat"), config.get("pooling", "mean"),
                               config.get("max_seq_length"))
        tokenizer_config = _read_json(_file(name, "tokenizer_config.json", hub))
        if tokenizer_config.get("tokenizer_class") == "ParaNMTTokenizer":
            tokenizer: Any = Segmenters.from_file(_file(name, PARANMT_TOKENIZER_FILE, hub))
        else:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(_file(name, TOKENIZER_FILE, hub))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            tokenizer.encode_special_tokens = bool(tokenizer_config.get("split_special_tokens", False))
        return cls(model, tokenizer)

    def encode(
        self,
        sentences: str | Sequence[str],
        batch_size: int | None = None,
        show_progress_bar: bool | None = None,
        output_value: str | None = "sentence_embedding",
        precision: str = "float32",
        convert_to_numpy: bool = True,
        convert_to_tensor: bool = False,
        normalize_embeddings: bool = False,
        truncate_dim: int | None = None,
        prompt_name: str | None = None,
        prompt: str | None = None,
    ) -> np.ndarray | list[np.ndarray]:
        """``[len(sentences), dim]`` embeddings (``[dim]`` for one string); sentence-transformers' ``encode`` keywords.

        Args:
            sentences: a string or a sequence of strings (an empty string gets the unknown token's embedding).
            batch_size: sentences per step (default 8192).
            show_progress_bar: show a tqdm bar; default: when there are more than 10 batches.
            output_value: ``"sentence_embedding"`` (the only output of these encoders).
            precision: ``"float32"``, ``"int8"``, ``"uint8"``, ``"binary"`` or ``"ubinary"`` (as ``ParaNMTEncoder``).
            convert_to_numpy: return one array (else a list of one array per sentence).
            convert_to_tensor: return a torch tensor (needs torch).
            normalize_embeddings: L2-normalise the embeddings.
            truncate_dim: keep the first ``truncate_dim`` dimensions (before normalising).
            prompt_name: ``"query"`` or ``"document"``: both empty.
            prompt: text put before every sentence.
        """
        texts, single = prepare_texts(sentences, output_value, precision, truncate_dim, prompt, prompt_name)
        batch_size = 8192 if batch_size is None else int(batch_size)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        starts = range(0, len(texts), batch_size)
        bar = None
        if (len(starts) > 10) if show_progress_bar is None else show_progress_bar:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(starts), desc="Encoding", unit="batch")
        out = np.empty((len(texts), self.embedding_dim), dtype=np.float32)
        try:
            for start in starts:
                self.averager(texts[start : start + batch_size], out=out[start : start + batch_size])
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        return deliver(out, single, normalize_embeddings, truncate_dim, precision, convert_to_numpy, convert_to_tensor,
                       rows_as_tensors=False)

    def similarity(self, embeddings1: Any, embeddings2: Any) -> np.ndarray:
        """The cosine matrix of two sets of embeddings, as sentence-transformers' ``similarity`` (NumPy).

        ``[len(embeddings1), len(embeddings2)]``: every embedding of ``embeddings1`` with every one of ``embeddings2``.
        """
        return cosine_matrix(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> np.ndarray:
        """Cosine of embedding ``i`` of ``embeddings1`` with embedding ``i`` of ``embeddings2`` (``[n]``)."""
        return pairwise_cosine(embeddings1, embeddings2)

    def __repr__(self) -> str:
        kinds = "+".join(c["kind"] for c in self.model.components)
        return f"StaticEncoder({kinds}, dim={self.embedding_dim})"


__all__ = ["StaticEncoder"]

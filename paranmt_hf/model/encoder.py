"""``ParaNMTEncoder``: a ParaNMT model plus its tokenizer, with a fast ``encode`` and one ``save_pretrained``."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..modeling.configuration_paranmt import ParaNMTConfig
from ..modeling.featurization_paranmt import ParaNMTFeaturizer, component_vocab_sizes
from ..modeling.modeling_paranmt import ParaNMTModel
from ..modeling.tokenization_paranmt import load_tokenizer
from .encode_api import check_sentences

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

DEFAULT_MULTIPROCESSING_THRESHOLD = 100_000
"""``encode`` uses several processes by default from this many sentences on."""


class ParaNMTEncoder:
    """A paraphrastic sentence encoder ready to embed text: a :class:`ParaNMTModel` and its tokenizer.

    Args:
        model: the ``ParaNMTModel``.
        tokenizer: its tokenizer: a transformers fast tokenizer (word / sp / subword models) or a
            ``ParaNMTTokenizer`` (trigram and combined models).

    Example:
    ```python
    >>> from paranmt_hf import build_encoder
    >>> enc = build_encoder("word", corpus=["a man plays a guitar .", "a dog runs ."], embedding_dim=8)
    >>> enc.encode(["a man plays"]).shape
    (1, 8)
    ```
    """

    def __init__(self, model: ParaNMTModel, tokenizer: PreTrainedTokenizerBase) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.featurizer = ParaNMTFeaturizer.for_model(model, tokenizer)

    @staticmethod
    def component_vocab_sizes(tokenizer: PreTrainedTokenizerBase) -> list[int]:
        """Vocabulary size of each component as the tokenizer sees it."""
        return component_vocab_sizes(tokenizer)

    @property
    def is_flat(self) -> bool:
        """Whether batches use the flat EmbeddingBag layout (averaging encoders and their combinations)."""
        return self.featurizer.flat

    @property
    def config(self) -> ParaNMTConfig:
        """The model's configuration."""
        return self.model.config

    @property
    def embedding_dim(self) -> int:
        """Size of the sentence embeddings."""
        return int(self.model.config.hidden_size)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike[str], **kwargs: Any) -> ParaNMTEncoder:
        """Load a model directory or Hub repository saved by :meth:`save_pretrained`.

        Keyword arguments (``revision``, ``token``, ``cache_dir``, ``local_files_only``, ``trust_remote_code``, ...) go
        to both the model's and the tokenizer's ``from_pretrained``. Directories with int8 weight storage are
        dequantised (:mod:`paranmt_hf.model.storage`).

        Raises:
            FileNotFoundError: a missing local path (``./m``, ``/abs/m``, ``models/m`` where ``models/`` exists), or
                a name that is no folder here and that the Hub (offline: its cache) does not give: one sentence.
            WeightsMismatchError: the weights file does not hold exactly the model's tensors (file and keys named).
            DamagedFileError: a file of the folder is damaged (truncated, not valid JSON; the file is named).
            NotAParaNMTFolderError: a local folder of another library (model2vec, sentence-transformers): the
                message says how to load it.
            UnsafePickleError: the only weights are a pickle that names code (nothing ran; the file is named).
        """
        from ..modeling.modeling_paranmt import WeightsMismatchError
        from ..utils.integrity import check_model_path, damaged_file_error
        from .folder_kind import check_paranmt_folder
        from .storage import is_int8_dir, load_int8_model

        check_model_path(name_or_path)  # a missing local folder is reported as such, not as a Hub error
        check_paranmt_folder(name_or_path)  # a model2vec / sentence-transformers folder: how to load it instead

        try:
            if os.path.isdir(name_or_path) and is_int8_dir(name_or_path):
                model = load_int8_model(name_or_path)
            else:
                model = ParaNMTModel.from_pretrained(name_or_path, **kwargs)
            return cls(model, load_tokenizer(name_or_path, **kwargs))
        except WeightsMismatchError:
            raise
        except Exception as err:  # a damaged file: name it (DamagedFileError), else the loader's own error
            from .pickled_weights import pickled_code_error

            refused = pickled_code_error(err)
            if refused is not None:
                raise refused from None
            if not os.path.isdir(name_or_path):  # a Hub id the Hub did not give: the sentence every loader says
                from .locate import hub_error, not_found

                said = hub_error(str(name_or_path), err, kwargs.get("revision"))
                if said is None and isinstance(err, OSError):
                    detail = str(err).splitlines()[0].rstrip(".") if str(err) else type(err).__name__
                    said = not_found(str(name_or_path), f"the Hub did not give it ({detail})")
                if said is not None:
                    raise said from None
            damaged = damaged_file_error(name_or_path, err) if os.path.isdir(name_or_path) else None
            if damaged is None:
                raise
            raise damaged from err

    MODEL_FILES = frozenset({
        "config.json", "model.safetensors", "model_int8.safetensors", "pytorch_model.bin", "tokenizer.json",
        "tokenizer_config.json", "paranmt_tokenizer.json", "special_tokens_map.json", "added_tokens.json",
        "modules.json", "sentence_bert_config.json", "paranmt_st_config.json", "config_sentence_transformers.json",
        "static",
    })
    """Entries of a model directory that belong to the saved model (with the ``*_paranmt.py`` remote-code files):
    never carried over from an earlier save into a new one."""

    @classmethod
    def is_model_file(cls, name: str) -> bool:
        """Whether a directory entry belongs to the saved model (see :attr:`MODEL_FILES`)."""
        return name in cls.MODEL_FILES or name.endswith("_paranmt.py")

    def save_pretrained(
        self,
        directory: str | os.PathLike[str],
        sentence_transformers: bool = True,
        weight_dtype: str = "float32",
        static: bool = False,
    ) -> None:
        """Write everything every loader needs into ``directory``, atomically.

        config.json (with ``auto_map``), model.safetensors, the remote-code files, the tokenizer files and the
        sentence-transformers files are written into a temporary sibling folder that then replaces ``directory``, so a
        killed process leaves the complete old model or the complete new one. Other entries of ``directory`` are kept.

        Args:
            directory: the model directory.
            sentence_transformers: also write the sentence-transformers files.
            weight_dtype: ``"float32"``, ``"float16"`` or ``"int8"`` (:mod:`paranmt_hf.model.storage`).
            static: also write ``static/``, a stock ``StaticEmbedding`` copy (single averaging encoders, float32 only).
        """
        from ..utils.atomic import atomic_output
        from .storage import store_weights

        with atomic_output(directory, overwrite=True, directory=True, keep=lambda n: not self.is_model_file(n)) as tmp:
            self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)
            if sentence_transformers and weight_dtype != "int8":
                from .st_layout import write_sentence_transformers_files

                write_sentence_transformers_files(self.model, self.tokenizer, tmp, static=static)
            store_weights(self.model, tmp, weight_dtype)

    # ---- tokenisation -------------------------------------------------------------------------------------------
    def flat_token_ids(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """All token ids of a batch back to back (int64) and the number of tokens of each sentence."""
        return self.featurizer.token_ids(sentences)

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Model token ids of each sentence (no special tokens, no padding)."""
        flat, lengths = self.flat_token_ids(sentences)
        flat_list, ends = flat.tolist(), np.cumsum(lengths).tolist()
        return [flat_list[e - n : e] for e, n in zip(ends, lengths.tolist(), strict=True)]

    def features(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Model inputs for a batch: flat ``input_ids`` + ``offsets`` (averaging) or padded ids + mask."""
        return self.featurizer(sentences)

    # ---- encoding -----------------------------------------------------------------------------------------------
    def _batches(self, sentences: list[str], batch_size: int) -> tuple[np.ndarray | None, list[tuple[int, int]]]:
        """The batch plan: an order of the sentences (None: as given) and ``(start, end)`` of each batch in it.

        Recurrent models batch sentences of similar length together to limit padding. The plan fixes every batch,
        so single- and multi-process encoding run exactly the same forward passes.
        """
        order = None
        if not self.is_flat:
            order = np.argsort(np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences)), kind="stable")
        bounds = [(s, min(s + batch_size, len(sentences))) for s in range(0, len(sentences), batch_size)]
        return order, bounds

    @torch.inference_mode()
    def encode_plan(
        self, sentences: list[str], order: np.ndarray | None, bounds: Sequence[tuple[int, int]], progress: Any = None
    ) -> torch.Tensor:
        """Embeddings of the batches ``bounds`` of a plan (:meth:`_batches`), rows in plan order.

        Batch ``(start, end)`` holds ``sentences[order[start:end]]`` (``sentences[start:end]`` when ``order`` is
        None). Worker processes of :func:`paranmt_hf.model.parallel.encode_parallel` call this on their share of
        batches.
        """
        total = sum(e - s for s, e in bounds)
        out = torch.empty(total, self.embedding_dim, dtype=torch.float32)
        row = 0
        # Averaging models: tokenisation (one Python thread) dominates and an embedding bag is memory-bound, so
        # intra-op threads buy little and stall badly on a busy machine; scale with processes instead (parallel.py).
        threads = torch.get_num_threads()
        if self.is_flat and threads > 1:
            torch.set_num_threads(1)
        try:
            for start, end in bounds:
                batch = sentences[start:end] if order is None else [sentences[i] for i in order[start:end]]
                features = self.features(batch)
                if self.model.device.type != "cpu":
                    features = {k: v.to(self.model.device) for k, v in features.items()}
                out[row : row + end - start] = self.model(**features).pooler_output.cpu()
                row += end - start
                if progress is not None:
                    progress.update(1)
        finally:
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
        return out

    @torch.inference_mode()
    def encode(
        self,
        sentences: str | Sequence[str],
        batch_size: int | None = None,
        show_progress_bar: bool | None = None,
        output_value: str | None = "sentence_embedding",
        precision: str = "float32",
        convert_to_numpy: bool = True,
        convert_to_tensor: bool = False,
        device: str | torch.device | None = None,
        normalize_embeddings: bool = False,
        truncate_dim: int | None = None,
        prompt_name: str | None = None,
        prompt: str | None = None,
        num_processes: int | None = None,
        multiprocessing_threshold: int = DEFAULT_MULTIPROCESSING_THRESHOLD,
    ) -> np.ndarray | torch.Tensor | list[torch.Tensor]:
        """Embed sentences; the keywords and their meanings are sentence-transformers' ``encode``'s.

        Args:
            sentences: a string or a sequence of strings (an empty string gets the unknown token's embedding).
            batch_size: sentences per forward pass (``None``: 8192 for averaging models, 512 for recurrent ones).
            show_progress_bar: show a tqdm bar; default: when there are more than 10 batches.
            output_value: ``"sentence_embedding"`` (the only output of these encoders).
            precision: ``"float32"``, ``"int8"``/``"uint8"`` or ``"binary"``/``"ubinary"`` (``quantize_embeddings``).
            convert_to_numpy: return one NumPy array (else, unless ``convert_to_tensor``, a list of tensors).
            convert_to_tensor: return one torch tensor (overrides ``convert_to_numpy``).
            device: where the model runs (``None``: where it is).
            normalize_embeddings: L2-normalise the embeddings (cosine similarity = dot product).
            truncate_dim: keep the first ``truncate_dim`` dimensions (before normalising, as sentence-transformers).
            prompt_name: ``"query"`` or ``"document"``: both empty (the papers' models have no prompts).
            prompt: text put before every sentence.
            num_processes: worker processes (``None``: every core above the threshold, else 1).
            multiprocessing_threshold: fewest sentences for which ``num_processes=None`` uses several processes.

        Returns:
            ``[len(sentences), dim]`` embeddings (``[dim]`` for a single string), float32 or the quantized dtype.
        """
        from functools import partial

        from .encode_api import deliver, prepare_texts
        from .parallel import encode_parallel, resolve_processes

        texts, single = prepare_texts(sentences, output_value, precision, truncate_dim, prompt, prompt_name)
        if batch_size is None:
            batch_size = 8192 if self.is_flat else 512
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if device is not None:
            self.model.to(device)
        on_cpu = self.model.device.type == "cpu"
        order, bounds = self._batches(texts, batch_size)
        progress = len(bounds) > 10 if show_progress_bar is None else show_progress_bar
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(bounds), desc="Encoding", unit="batch")
        was_training = self.model.training
        self.model.eval()
        processes = 1
        if on_cpu:
            processes = resolve_processes(num_processes, len(texts), multiprocessing_threshold, len(bounds))
        try:
            if processes > 1:
                out = encode_parallel(partial(self.encode_plan, texts, order), bounds, self.embedding_dim, processes,
                                      bar)
            else:
                out = self.encode_plan(texts, order, bounds, bar)
        finally:
            self.model.train(was_training)
            if bar is not None:
                bar.close()
        if order is not None:
            unsorted = torch.empty_like(out)
            unsorted[torch.from_numpy(order)] = out
            out = unsorted
        return deliver(out.numpy(), single, normalize_embeddings, truncate_dim, precision, convert_to_numpy,
                       convert_to_tensor, rows_as_tensors=True)

    similarity_fn_name = "cosine"
    """How :meth:`similarity` compares embeddings (sentence-transformers' attribute)."""

    def similarity(self, embeddings1: Any, embeddings2: Any) -> torch.Tensor:
        """The cosine matrix of two sets of embeddings, as sentence-transformers' ``similarity``.

        A ``[len(embeddings1), len(embeddings2)]`` tensor: every embedding of ``embeddings1`` with every one of
        ``embeddings2``.

        Embeddings may be NumPy arrays, tensors or lists (one vector counts as one row); texts are refused
        (``TypeError``): the cosine of each text of ``a`` with the text of ``b`` at the same position is
        :meth:`paired_text_similarity`.
        """
        from .encode_api import cosine_matrix

        return torch.from_numpy(cosine_matrix(embeddings1, embeddings2))

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> torch.Tensor:
        """Cosine of embedding ``i`` of ``embeddings1`` with embedding ``i`` of ``embeddings2`` (``[n]``).

        As sentence-transformers' ``similarity_pairwise``.
        """
        from .encode_api import pairwise_cosine

        return torch.from_numpy(pairwise_cosine(embeddings1, embeddings2))

    def paired_text_similarity(self, a: str | Sequence[str], b: str | Sequence[str]) -> np.ndarray:
        """Cosine similarity of each text of ``a`` with the text of ``b`` at the same position (``[n]`` NumPy)."""
        ea = self.encode(check_sentences(a), normalize_embeddings=True)
        eb = self.encode(check_sentences(b), normalize_embeddings=True)
        if ea.shape != eb.shape:
            raise ValueError(f"a and b must have the same number of sentences ({len(ea)} vs {len(eb)})")
        return (ea * eb).sum(axis=1)

    def __repr__(self) -> str:
        kinds = "+".join(c["kind"] for c in self.config.resolved_components())
        return f"ParaNMTEncoder({kinds}, dim={self.embedding_dim}, vocab={self.component_vocab_sizes(self.tokenizer)})"

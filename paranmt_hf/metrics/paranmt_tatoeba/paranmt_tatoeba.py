"""``paranmt_tatoeba``: LASER's Tatoeba bitext-mining error as an ``evaluate`` metric.

Each sentence's nearest neighbour (cosine) among the other side's sentences must be its translation; the error is
the share of misses in %, in both directions, and their mean (the papers' Tatoeba numbers). mteb's bitext-mining
precision / recall / F1 of the ``xx -> en`` direction are reported alongside.
"""

from __future__ import annotations

import datasets
import evaluate
import numpy as np

from .mining import bitext_error_rates

_CITATION = """\
@article{artetxe-schwenk-2019-massively,
  title = {Massively Multilingual Sentence Embeddings for Zero-Shot Cross-Lingual Transfer and Beyond},
  author = {Artetxe, Mikel and Schwenk, Holger}, journal = {TACL}, volume = {7}, year = {2019}}
@article{wieting-etal-2021-paraphrastic,
  title = {Paraphrastic Representations at Scale},
  author = {Wieting, John and Gimpel, Kevin and Neubig, Graham and Berg-Kirkpatrick, Taylor},
  journal = {arXiv preprint arXiv:2104.15114}, year = {2021}}
"""

_DESCRIPTION = """\
Tatoeba bitext-mining error (LASER's similarity search): for line-aligned translations, the share (%) of sentences
whose cosine nearest neighbour on the other side is not their translation, in both directions and on average.
"""

_KWARGS_DESCRIPTION = """
Args:
    source_embeddings (list of list of float): embeddings of the non-English sentences.
    target_embeddings (list of list of float): embeddings of their English translations (same order).
Returns:
    error_xx2en, error_en2xx (float): error in % of each direction; error (float): their mean.
    accuracy (float): 1 - error / 100.
    xx2en_precision, xx2en_recall, xx2en_f1, xx2en_accuracy (float): mteb's bitext-mining metrics (0-1).
    main_score (float): xx2en_f1 (mteb's main score for Tatoeba). n_pairs (int).
Examples:
    >>> from paranmt_hf.metrics import metric_path  # this module's folder; from the Hub: "<owner>/paranmt_tatoeba"
    >>> metric = evaluate.load(metric_path("paranmt_tatoeba"))
    >>> metric.compute(source_embeddings=[[1, 0], [0, 1]], target_embeddings=[[0.9, 0.1], [0.2, 0.8]])["error"]
    0.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ParanmtTatoeba(evaluate.Metric):
    """Tatoeba mining error in both directions, and mteb's bitext-mining scores."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "source_embeddings": datasets.Sequence(datasets.Value("float32")),
                "target_embeddings": datasets.Sequence(datasets.Value("float32")),
            }),
            homepage="https://github.com/facebookresearch/LASER/tree/main/data/tatoeba/v1",
            reference_urls=["https://arxiv.org/abs/1812.10464", "https://arxiv.org/abs/2104.15114"],
        )

    def _compute(self, source_embeddings: list[list[float]], target_embeddings: list[list[float]]) -> dict:
        return bitext_error_rates(np.asarray(source_embeddings, dtype=np.float32),
                                  np.asarray(target_embeddings, dtype=np.float32))

"""``paranmt_sts``: the STS protocol of Wieting & Gimpel's papers as an ``evaluate`` metric.

Pearson's r x 100 between the model's similarities and the gold scores, per dataset; with ``subsets`` named
``"<year>/<dataset>"`` the mean over each year's datasets, then over years (the STS12-16 number of ParaNMT-50M,
the back-translation paper and "Paraphrastic Representations at Scale"). Spearman is reported alongside.
"""

from __future__ import annotations

import datasets
import evaluate

from .sts_protocol import paper_scores

_CITATION = """\
@inproceedings{wieting-gimpel-2018-paranmt,
  title = {{ParaNMT-50M}: Pushing the Limits of Paraphrastic Sentence Embeddings with Millions of Machine
           Translations},
  author = {Wieting, John and Gimpel, Kevin}, booktitle = {Proceedings of ACL}, year = {2018}}
"""

_DESCRIPTION = """\
The papers' semantic textual similarity protocol: Pearson's r x 100 of the model's similarity (the cosine of the two
sentence embeddings; a zero vector counts as 0) with the gold scores, per dataset, averaged over the datasets of a
SemEval year and then over years. Spearman's rho is computed the same way. Constant predictions score 0.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of float): the model's similarity of each sentence pair.
    references (list of float): the gold similarity of each pair (0-5 for SemEval STS).
    subsets (list of str, optional): the dataset of each pair. Name them "<group>/<dataset>" (e.g.
        "STS12/MSRpar") to average per group first, as the papers do per SemEval year.
Returns:
    pearson (float): the headline Pearson x 100 (mean over groups of group means, or over datasets).
    spearman (float): the same for Spearman x 100.
    pearson_per_subset, spearman_per_subset (dict): per dataset (with subsets).
    pearson_per_group, spearman_per_group (dict): per group (with "<group>/<dataset>" subsets).
    n_pairs (int): pairs scored.
Examples:
    >>> from paranmt_hf.metrics import metric_path  # this module's folder; from the Hub: "<owner>/paranmt_sts"
    >>> metric = evaluate.load(metric_path("paranmt_sts"))
    >>> round(metric.compute(predictions=[0.1, 0.5, 0.9], references=[0.0, 2.5, 5.0])["pearson"], 1)
    100.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ParanmtSts(evaluate.Metric):
    """Pearson x 100 per dataset and the papers' year averages."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
            homepage="https://github.com/jwieting/paraphrastic-representations-at-scale",
            reference_urls=["https://aclanthology.org/P18-1042/", "https://arxiv.org/abs/2104.15114"],
        )

    def _compute(self, predictions: list[float], references: list[float], subsets: list[str] | None = None) -> dict:
        return paper_scores(predictions, references, subsets)

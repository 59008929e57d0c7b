"""The papers' evaluation protocols as ``evaluate`` metric modules, loadable offline.

```python
import evaluate
from paranmt_hf.metrics import metric_path

sts = evaluate.load(metric_path("paranmt_sts"))          # Pearson x 100 per dataset, year averages
sts.compute(predictions=cosines, references=gold, subsets=["STS12/MSRpar", ...])
tatoeba = evaluate.load(metric_path("paranmt_tatoeba"))  # LASER's Tatoeba mining error, both directions
tatoeba.compute(source_embeddings=xx, target_embeddings=en)
```

Each metric is a folder ``<name>/<name>.py`` (an ``evaluate.Metric``) with the module that computes it
(``sts_protocol.py``, ``mining.py``: NumPy/SciPy only), the code ``paranmt-hf eval`` uses too, and a ``README.md``
(the metric card). :func:`paranmt_hf.hub.metric_space.push_metric` publishes one as a Hub metric (a Space).
"""

from __future__ import annotations

from pathlib import Path

METRICS = ("paranmt_sts", "paranmt_tatoeba")


def metric_path(name: str) -> str:
    """The folder of a metric module, for ``evaluate.load``.

    Raises:
        KeyError: unknown metric.
    """
    if name not in METRICS:
        raise KeyError(f"unknown metric {name!r}; available: {list(METRICS)}")
    return str(Path(__file__).resolve().parent / name)

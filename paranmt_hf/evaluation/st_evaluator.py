"""A sentence-transformers evaluator running the STS suite during training (model selection as in the papers).

```python
from paranmt_hf.evaluation.st_evaluator import STSSuiteEvaluator

evaluator = STSSuiteEvaluator()                      # STS17 en-en, Pearson: the papers' model-selection set
trainer = SentenceTransformerTrainer(model=model, ..., evaluator=evaluator)
```
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..utils.imports import require
from .runner import run_task
from .tasks import eval_root, resolve_tasks

BaseEvaluator = require("sentence_transformers.base.evaluation.evaluator", "st").BaseEvaluator


class STSSuiteEvaluator(BaseEvaluator):
    """Pearson / Spearman of cosine similarity on a configurable STS suite; higher is better.

    Args:
        tasks: task names or groups (see :mod:`paranmt_hf.evaluation.tasks`); default ``STS17:en-en`` (the 250-pair
            English set the papers select models on). Bitext tasks are not allowed here.
        data_dir: data folder (default ``$PARANMT_HF_DATA`` / ``../shared/data``). The data is read once, here.
        metric: ``"pearson"`` (papers) or ``"spearman"`` (mteb): the primary metric is its mean over the suite's
            datasets (for STS12-16 years: the papers' per-year mean, then the mean over tasks).
        batch_size: encode batch size.
        name: prefix of the metric names.
        max_pairs: first N pairs of each dataset only (quick checks).

    Returns (when called): ``{"<name>_<task>_<subset>_pearson": ..., ..., "<name>_mean_<metric>": ...}``.
    """

    def __init__(
        self,
        tasks: Sequence[str] | str = ("STS17:en-en",),
        data_dir: str | os.PathLike[str] | None = None,
        metric: str = "pearson",
        batch_size: int = 256,
        name: str = "sts",
        max_pairs: int | None = None,
    ) -> None:
        super().__init__()
        from ..utils.paths import data_dir as resolve_data_dir

        if metric not in ("pearson", "spearman"):
            raise ValueError(f"metric must be 'pearson' or 'spearman', got {metric!r}")
        self.task_list = resolve_tasks(list(tasks) if not isinstance(tasks, str) else tasks)
        bad = [t.name for t in self.task_list if t.kind != "sts"]
        if bad:
            raise ValueError(f"STSSuiteEvaluator runs STS tasks only, not {bad}")
        self.root = resolve_data_dir(data_dir)
        self.data = {t.name: t.load(eval_root(self.root)) for t in self.task_list}
        self.metric, self.batch_size, self.name, self.max_pairs = metric, batch_size, name, max_pairs
        self.greater_is_better = True
        self.primary_metric = f"mean_{metric}"

    def __call__(
        self, model: Any, output_path: str | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        """Encode the suite with ``model`` and return the metrics (also stored in the model card data)."""
        metrics: dict[str, float] = {}
        task_scores = []
        for task in self.task_list:
            result = run_task(model, task, self.root, self.batch_size, False, self.max_pairs, self.data[task.name])
            key = f"paper_{self.metric}" if self.metric == "pearson" else "cosine_spearman"
            for split, entries in result.scores.items():
                for e in entries:
                    prefix = f"{task.name}_{e['hf_subset']}" + ("" if split == "test" else f"_{split}")
                    metrics[f"{prefix}_pearson"] = e["paper_pearson"]
                    metrics[f"{prefix}_spearman"] = e["cosine_spearman"]
            if task.paper_year:
                task_scores.append(result.subset("default")[f"paper_{self.metric}_mean"])
            else:
                task_scores += [e[key] for entries in result.scores.values() for e in entries]
        metrics[f"mean_{self.metric}"] = float(np.mean(task_scores))
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics

    def get_config_dict(self) -> dict[str, Any]:
        """Configuration shown in the model card."""
        return {"tasks": [t.name for t in self.task_list], "metric": self.metric}

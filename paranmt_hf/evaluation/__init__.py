"""Evaluation: STS 2012-2016 (papers' protocol and mteb's), STS-B, STS 2017, Tatoeba bitext mining; mteb integration.

```python
from paranmt_hf import ParaNMTEncoder
from paranmt_hf.evaluation import evaluate, format_table, write_results

encoder = ParaNMTEncoder.from_pretrained("my-model")          # or any object with encode(list[str]) -> [N, D]
results = evaluate(encoder, ["sts12-16", "STSBenchmark"], data_dir="../shared/data")
print(format_table(results, "my-model"))
write_results(results, "results", "me/my-model")               # mteb layout: me__my-model/<revision>/<Task>.json
```

The mteb encoder wrapper and ``ModelMeta`` builders live in :mod:`paranmt_hf.evaluation.mteb_meta` (imports mteb);
the sentence-transformers evaluator in :mod:`paranmt_hf.evaluation.st_evaluator`.
"""

from __future__ import annotations

from ..data.sts import STSPairs, load_sts17, load_sts_dir, load_sts_year, load_stsb, read_sts_pair_files
from ..data.tatoeba import BitextPairs, load_tatoeba
from .encoders import SupportsEncode, encode, load_encoder
from .metrics import bitext_error_rates, mteb_paired_cosine, paired_cosine, sts_correlations
from .results import format_table, read_results, read_task_json, task_json, write_results
from .runner import TaskResult, evaluate, paper_average, run_task
from .tasks import ALL_TASKS, GROUPS, EvalTask, get_task, resolve_tasks

__all__ = [
    "ALL_TASKS",
    "GROUPS",
    "BitextPairs",
    "SupportsEncode",
    "EvalTask",
    "STSPairs",
    "TaskResult",
    "bitext_error_rates",
    "encode",
    "evaluate",
    "format_table",
    "get_task",
    "load_encoder",
    "load_sts17",
    "load_sts_dir",
    "load_sts_year",
    "load_stsb",
    "load_tatoeba",
    "mteb_paired_cosine",
    "paired_cosine",
    "paper_average",
    "read_results",
    "read_sts_pair_files",
    "read_task_json",
    "resolve_tasks",
    "run_task",
    "sts_correlations",
    "task_json",
    "write_results",
]

"""Multi-process encoding: identical results to one process, threshold logic."""

from __future__ import annotations

import numpy as np
import pytest

from paranmt_hf import build_encoder
from paranmt_hf.model.parallel import resolve_processes, tasks_for

CORPUS = ["a man plays a guitar .", "a dog runs in the park .", "the women slice onions quickly ."] * 3
SENTENCES = [f"a man {i} plays {'the dog ' * (i % 7)}guitar {i % 13} ." for i in range(1000)] + ["", "zzz qqq"]


@pytest.mark.parametrize("kind", ["word", "trigram", "lstm"])
def test_multiprocess_equals_single_process(kind):
    enc = build_encoder(kind, CORPUS, embedding_dim=16, seed=0)
    one = enc.encode(SENTENCES, batch_size=128, num_processes=1)
    two = enc.encode(SENTENCES, batch_size=128, num_processes=2)
    np.testing.assert_array_equal(one, two)
    auto = enc.encode(SENTENCES, batch_size=128, multiprocessing_threshold=100, normalize_embeddings=True)
    one = enc.encode(SENTENCES, batch_size=128, normalize_embeddings=True, num_processes=1)
    np.testing.assert_array_equal(auto, one)


def test_resolve_processes(monkeypatch):
    import paranmt_hf.model.parallel as parallel

    monkeypatch.setattr(parallel, "available_cores", lambda: 8)
    assert resolve_processes(None, 10, threshold=100, n_batches=5) == 1
    assert resolve_processes(None, 1000, threshold=100, n_batches=50) == 8
    assert resolve_processes(None, 1000, threshold=100, n_batches=3) == 3
    assert resolve_processes(4, 10, threshold=100, n_batches=50) == 4
    with pytest.raises(ValueError, match="num_processes"):
        resolve_processes(0, 10, threshold=100, n_batches=5)


def test_tasks_cover_every_batch_once():
    for n_batches, processes in [(1, 4), (7, 2), (100, 3)]:
        tasks = tasks_for(n_batches, processes)
        assert [b for lo, hi in tasks for b in range(lo, hi)] == list(range(n_batches))

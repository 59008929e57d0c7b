"""MegaBatchMarginLoss under torch.distributed (gloo, 2 CPU processes): the negative pool spans all processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")

WORKER = textwrap.dedent(
    '''
    import json, os, sys
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    sys.path.insert(0, sys.argv[2])  # tests/: the reference computation
    from _megabatch_reference import reference_loss

    # step -> rank -> (anchors, positives); ranks hold different numbers of pairs
    STEPS = [
        [(["a man plays a guitar .", "a dog runs .", "the cat sleeps ."],
          ["a guy plays guitar .", "a dog is running .", "a cat is asleep ."]),
         (["kids play soccer .", "a woman sings a song ."], ["children play football .", "a lady is singing ."])],
        [(["the sun is hot .", "a zebra eats grass ."], ["it is a hot day .", "a striped horse grazes ."]),
         (["two men talk .", "a bird flies .", "a dog runs ."],
          ["two guys chat .", "a bird is flying .", "a dog runs fast ."])],
    ]
    CORPUS = [s for step in STEPS for a, b in step for s in a + b]


    def reference(model, rank):
        """This process's loss of step 2 with negatives from both steps of both processes (the pool spans them)."""
        batches = [*STEPS[0], *STEPS[1]]  # rank order within each step, as the gathered pool
        return reference_loss(model, batches, own=len(STEPS[0]) + rank)


    # imported once in the parent: the workers are forked, so they skip these imports
    from sentence_transformers import SentenceTransformer
    from paranmt_hf import build_encoder
    from paranmt_hf.losses import MegaBatchMarginLoss
    from paranmt_hf import ParaNMTInputModule


    def worker(rank, world, init_file, out_dir):
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank, world_size=world)
        encoder = build_encoder("word", corpus=CORPUS, embedding_dim=8, seed=0)
        model = SentenceTransformer(modules=[ParaNMTInputModule.from_encoder(encoder)], device="cpu").train()
        loss = MegaBatchMarginLoss(model, megabatch_size=2, gather_across_devices=True)
        for step in STEPS:
            anchors, positives = step[rank]
            value = loss([model.preprocess(anchors), model.preprocess(positives)])
        model.zero_grad()
        value.backward()
        grad = encoder.model.components[0].embedding.weight.grad.clone()
        expected, chosen = reference(model, rank)
        model.zero_grad()
        expected.backward()
        grad_ref = encoder.model.components[0].embedding.weight.grad
        other = [s for a, b in (STEPS[0][1 - rank], STEPS[1][1 - rank]) for s in a + b]
        result = {
            "value": value.item(), "expected": expected.item(),
            "grad_diff": float((grad - grad_ref).abs().max()), "grad_norm": float(grad.norm()),
            "from_other_rank": sum(n in other for n in chosen[0] + chosen[1]),
            "pool_pairs": len(loss.pool[0]), "weights": float(encoder.model.components[0].embedding.weight.sum()),
        }
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
            json.dump(result, f)
        dist.destroy_process_group()


    if __name__ == "__main__":
        out_dir = sys.argv[1]
        mp.start_processes(worker, args=(2, os.path.join(out_dir, "init"), out_dir), nprocs=2, join=True,
                           start_method="fork")
    '''
)


@pytest.mark.slow
def test_negative_pool_spans_processes(tmp_path):
    script = tmp_path / "ddp_worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(script), str(tmp_path), str(Path(__file__).parent)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert results[0]["weights"] == results[1]["weights"]  # same initial model on both processes
    for result in results:
        assert result["value"] == pytest.approx(result["expected"], abs=1e-5)
        assert result["grad_diff"] < 1e-5 and result["grad_norm"] > 0
        assert result["pool_pairs"] == 5  # the previous step's pairs of both processes (3 + 2)
    assert sum(r["from_other_rank"] for r in results) > 0  # negatives do come from the other process

"""Training: recipes, data sources, the CLI end to end, determinism, resume, and multi-process (torchrun) pools."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from paranmt_hf import ParaNMTEncoder
from paranmt_hf.cli.main import main as cli
from paranmt_hf.training.data import PairSource, has_bitext, load_pairs
from paranmt_hf.training.recipes import RECIPES, get_recipe

SUBJECTS = [
    "a man",
    "a woman",
    "the dog",
    "two kids",
    "a chef",
    "the old cat",
    "a girl",
    "my friend",
    "the band",
    "a cyclist",
]
ACTIONS = [
    ("plays guitar", "is playing a guitar"),
    ("runs in the park", "is running in a park"),
    ("cooks dinner", "is making dinner"),
    ("reads a book", "is reading a novel"),
]


def write_pairs(path, n=40):
    rows = []
    for i in range(n):
        subject, (a, b) = SUBJECTS[i % len(SUBJECTS)], ACTIONS[(i // len(SUBJECTS)) % len(ACTIONS)]
        rows.append(f"{subject} {a} .\t{subject} {b} .\n")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(rows)
    return str(path)


def test_recipes_match_the_papers():
    acl = get_recipe("acl2018-lstm")
    assert (
        acl.batch_size,
        acl.margin,
        acl.learning_rate,
        acl.megabatch_size,
        acl.embedding_dim,
        acl.scramble_rate,
        acl.epochs,
    ) == (100, 0.4, 1e-3, 40, 300, 0.3, 5.0)
    pras = get_recipe("pras-sp")
    assert (pras.batch_size, pras.margin, pras.megabatch_size, pras.anneal, pras.embedding_dim, pras.vocab_size) == (
        128,
        0.4,
        100,
        150,
        1024,
        50_000,
    )
    assert pras.override(batch_size=8, anneal=None).batch_size == 8
    with pytest.raises(ValueError, match="unknown recipe field"):
        pras.override(colour="red")
    with pytest.raises(ValueError, match="unknown recipe"):
        get_recipe("nope")
    assert len(RECIPES) >= 6


def test_pair_sources(tmp_path):
    pairs = write_pairs(tmp_path / "caps.tsv.gz")
    bitext = write_pairs(tmp_path / "tatoeba-en-es.tsv.gz", 10)
    assert PairSource.parse(pairs).config == "pairs"
    assert PairSource.parse(bitext).config == "bitext"
    assert PairSource.parse(f"processed-5m:{pairs}").config == "processed-5m"
    assert has_bitext([pairs, bitext]) and not has_bitext([pairs])
    with pytest.raises(FileNotFoundError):
        PairSource.parse(str(tmp_path / "missing.tsv"))
    ds = load_pairs([pairs, bitext], seed=1)  # mixed kinds: a label column (1 = translation) for the loss
    assert ds.column_names == ["anchor", "positive", "label"] and len(ds) == 50 and sum(ds["label"]) == 10
    assert load_pairs([pairs]).column_names == ["anchor", "positive"]
    assert len(load_pairs([pairs], max_pairs=7)) == 7
    # "@N" repeats a source N times per epoch (upsampling a small corpus)
    repeated = PairSource.parse(f"processed-5m:{pairs}@3")
    assert (repeated.config, repeated.repeat, repeated.files) == ("processed-5m", 3, (pairs,))
    assert str(repeated).endswith("caps.tsv.gz@3") and PairSource.parse(str(repeated)) == repeated
    assert PairSource.parse(f"{bitext}@2").config == "bitext"
    ds = load_pairs([f"{pairs}@3", bitext], seed=1)
    assert len(ds) == 3 * 40 + 10
    assert sum(a == "a man plays guitar ." for a in ds["anchor"]) == 3 + 1  # once in each file
    with pytest.raises(ValueError, match="repeat count"):
        PairSource.parse(f"{pairs}@0")


def _train(tmp_path, name, *extra):
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    out = tmp_path / name
    args = [
        "train",
        "--train",
        data,
        "--output",
        str(out),
        "--kind",
        "word",
        "--embedding-dim",
        "16",
        "--batch-size",
        "4",
        "--megabatch-size",
        "3",
        "--lr",
        "0.01",
        "--no-progress",
        "--save-steps",
        "3",
        "--dev",
        "STS17:en-en",
        *extra,
    ]
    assert cli(args) == 0
    return out


SENTENCES = ["a man plays guitar .", "the dog is running in a park .", "two kids read a book ."]


def test_cli_training_writes_a_loadable_trained_model(tmp_path, data_dir):
    out = _train(tmp_path, "model", "--max-steps", "6")
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["steps"] == 6 and summary["world_size"] == 1
    assert summary["recipe"]["megabatch_size"] == 3
    assert summary["dev_scores"] and "eval_dev_mean_pearson" in summary["dev_scores"][-1]
    # M - 1 previous mini-batches of 4
    assert summary["loss_stats"] == {"pool_pairs": 8, "pool_minibatches": 2, "minibatches_seen": 6}
    trained = ParaNMTEncoder.from_pretrained(out).encode(SENTENCES)
    initial = ParaNMTEncoder.from_pretrained(out / "initial-model").encode(SENTENCES)
    assert not np.allclose(trained, initial)  # the weights moved


def test_training_is_deterministic_for_a_seed(tmp_path, data_dir):
    a = ParaNMTEncoder.from_pretrained(_train(tmp_path, "a", "--max-steps", "4")).encode(SENTENCES)
    b = ParaNMTEncoder.from_pretrained(_train(tmp_path, "b", "--max-steps", "4")).encode(SENTENCES)
    np.testing.assert_array_equal(a, b)
    c = ParaNMTEncoder.from_pretrained(_train(tmp_path, "c", "--max-steps", "4", "--seed", "5")).encode(SENTENCES)
    assert not np.allclose(a, c)


def test_resume_continues_from_the_latest_checkpoint(tmp_path, data_dir):
    out = _train(tmp_path, "r", "--max-steps", "3")
    assert (out / "checkpoints" / "checkpoint-3").is_dir()
    _train(tmp_path, "r", "--max-steps", "6", "--resume")
    state = json.loads((out / "checkpoints" / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["global_step"] == 6
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["steps"] == 6
    assert summary["loss_stats"]["minibatches_seen"] == 6  # the annealing clock resumed at 3, not 0


@pytest.mark.timeout(600)
def test_torchrun_two_processes_share_the_megabatch_pool(tmp_path, data_dir):
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        "29561",
        "-m",
        "paranmt_hf.cli.main",
        "train",
        "--train",
        data,
        "--output",
        str(out),
        "--kind",
        "word",
        "--embedding-dim",
        "8",
        "--batch-size",
        "2",
        "--megabatch-size",
        "3",
        "--max-steps",
        "4",
        "--save-steps",
        "100",
        "--no-progress",
        "--optimizer",
        "lazy_adam",
        "--dev",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=540, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads((out / "training_summary.json").read_text())
    assert summary["world_size"] == 2
    # each pool entry holds both processes' mini-batches: (M - 1) entries x 2 processes x 2 pairs
    assert summary["loss_stats"] == {"pool_pairs": 8, "pool_minibatches": 2, "minibatches_seen": 4}
    trained = ParaNMTEncoder.from_pretrained(out)
    assert trained.config.sparse_embeddings is False  # saved for fine-tuning with any optimizer
    initial = ParaNMTEncoder.from_pretrained(out / "initial-model")
    assert not np.allclose(trained.encode(SENTENCES), initial.encode(SENTENCES))


def test_lazy_adam_refuses_gradient_clipping(tmp_path):
    with pytest.raises(ValueError, match="max_grad_norm"):
        _train(tmp_path, "clip", "--optimizer", "lazy_adam", "--max-grad-norm", "5", "--max-steps", "1")

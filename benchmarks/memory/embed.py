"""Peak memory of ``paranmt-hf embed`` on a 1,000,000-sentence file.

The input is built from the English training corpora and the STS12-16 sentences (435K unique sentences), cycled to
1M lines; from the second pass on, each line gets a unique suffix token (``#<line number>``), so the token cache of
the fast path keeps growing (a worst case for it). ``paranmt-hf embed MODEL --input F --output out.npy`` runs in a
subprocess; its peak RSS is its own ``ru_maxrss`` (``os.wait4``), with ``/proc/<pid>/status`` (VmHWM, RssAnon,
RssFile) sampled every 0.5 s. Models: word (300-d) and sp (1024-d) from ``benchmarks/speed``.

Usage: ``python benchmarks/memory/embed.py [--lines 1000000]``; records the run in ``memory.json`` here (key
``embed``, with its provenance: command, git commit, environment, load average) and prints its table. Models are
built in (or reused from) ``$SPEED_CACHE`` (default ``/tmp/paranmt_speed_models``): an empty folder builds
them with the current code.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "speed"))

from models import build_models, english_corpus, sts_sentences  # noqa: E402

LIMIT_BYTES = 2 * 1024**3


def write_input(path: Path, lines: int) -> int:
    """Write the input file; returns its size in bytes."""
    from paranmt_hf.utils.paths import data_dir

    base = [" ".join(s.split()) for s in english_corpus(data_dir()) + sts_sentences(data_dir())]
    base = [s for s in base if s]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(lines):
            s = base[i % len(base)]
            f.write(f"{s} #{i}\n" if i >= len(base) else s + "\n")
    return path.stat().st_size


def _status(pid: int) -> dict[str, int]:
    out = {}
    try:
        for line in open(f"/proc/{pid}/status"):
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) * 1024
    except FileNotFoundError:
        pass
    return out


SEQUENTIAL = """
import sys, numpy as np
from itertools import islice
from paranmt_hf import ParaNMTEncoder
from paranmt_hf.evaluation.streaming import count_lines
model, src, dst = sys.argv[1:4]
enc = ParaNMTEncoder.from_pretrained(model)
n = count_lines(src)
with open(src, encoding="utf-8", newline="") as f, open(dst, "wb") as out:
    header = {"descr": "<f4", "fortran_order": False, "shape": (n, enc.embedding_dim)}
    np.lib.format.write_array_header_2_0(out, header)
    lines = (line.rstrip("\\r\\n") for line in f)
    while chunk := list(islice(lines, 10000)):
        out.write(enc.encode(chunk, show_progress_bar=False).tobytes())
print(n, enc.embedding_dim)
"""


def run_embed(model: str, input_path: Path, output: Path, sequential: bool = False) -> dict[str, Any]:
    """Run the command (or the sequential-write variant), sample its memory, return the measurements.

    The peak RSS is the child's own ``ru_maxrss`` (``os.wait4``), i.e. the kernel's high-water mark of VmRSS.
    """
    cmd = ["paranmt-hf", "embed", model, "--input", str(input_path), "--output", str(output)]
    if sequential:
        cmd = [sys.executable, "-c", SEQUENTIAL, model, str(input_path), str(output)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peak: dict[str, int] = {}
    samples = []
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        st = _status(proc.pid)
        for k, v in st.items():
            peak[k] = max(peak.get(k, 0), v)
        if st:
            samples.append((round(time.perf_counter() - t0, 1), st.get("VmRSS", 0) // 2**20))
        time.sleep(0.5)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = proc.stdout.read() if proc.stdout else ""
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed with {proc.returncode}")
    ru_max = usage.ru_maxrss * 1024
    return {
        "command": " ".join(cmd) if not sequential else "python -c SEQUENTIAL " + " ".join(cmd[3:]),
        "stdout": stdout.strip(),
        "seconds": seconds,
        "peak_rss_bytes": ru_max,
        "peak_sampled_bytes": peak,
        "rss_mib_timeline": samples[:: max(1, len(samples) // 40)],
        "output_bytes": output.stat().st_size,
        "under_2_gib": ru_max < LIMIT_BYTES,
    }


def main() -> None:
    """Build the input, run embed for each model, write the outputs."""
    from paranmt_hf.utils.paths import data_dir
    from paranmt_hf.utils.provenance import provenance, update_record

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--kinds", default="word,sp")
    args = parser.parse_args()
    cache = os.environ.get("SPEED_CACHE", "/tmp/paranmt_speed_models")
    models = build_models(data_dir(), Path(cache))
    report: dict[str, Any] = {"provenance": provenance(), "models_cache": cache,
                              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "lines": args.lines}
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        input_path = Path(tmp) / "sentences.txt"
        report["input_bytes"] = write_input(input_path, args.lines)
        for kind in args.kinds.split(","):
            for variant, sequential in (("embed", False), ("sequential", True)):
                out = Path(tmp) / f"{kind}.npy"
                report[f"{kind}/{variant}"] = run_embed(models[kind], input_path, out, sequential)
                if sequential:  # same bytes as the command's output
                    report[f"{kind}/{variant}"]["shape_ok"] = np.load(out, mmap_mode="r").shape[0] == args.lines
                out.unlink()
    update_record(HERE / "memory.json", "embed", report)  # the folder's one JSON: light.py's run under "light"
    lines = [
        f"`{report['provenance']['command']}` · {report['date']} · {args.lines:,} lines "
        f"({report['input_bytes'] / 1e6:.0f} MB)", "",
        "| model | writer | peak RSS | VmHWM (sampled) | RssAnon | RssFile | output | time | < 2 GiB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key in report:
        if "/" not in key:
            continue
        kind, variant = key.split("/")
        r = report[key]
        p = r["peak_sampled_bytes"]
        mib = lambda b: f"{(b or 0) / 2**20:,.0f} MiB"  # noqa: E731
        lines.append(
            f"| {kind} | {variant} | {mib(r['peak_rss_bytes'])} | {mib(p.get('VmHWM'))} | {mib(p.get('RssAnon'))} | "
            f"{mib(p.get('RssFile'))} | {r['output_bytes'] / 1e9:.2f} GB | {r['seconds']:.0f} s | "
            f"{'yes' if r['under_2_gib'] else 'NO'} |"
        )
    print("\n".join(lines))


if __name__ == "__main__":
    main()

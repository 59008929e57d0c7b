"""Throughput of the `paranmt-hf corpus` commands on a corpus in the exact para-nmt-50m.txt format.

Usage (one command; the lead reruns it on a quiet machine):

    python benchmarks/corpus_scale/benchmark.py [--lines 300000] [--workdir /tmp/paranmt-corpus-scale] [--quick]

1. Writes (or reuses) a synthetic para-nmt-50m.txt of --lines lines made from real ParaNMT text
   (``write_synthetic_paranmt`` of tests/_synthetic.py: detokenised, scored like Table 3, 3% foreign
   sides, 0.1% bad lines) and builds a trigram and a SentencePiece model for `annotate`.
2. Runs every command with 1 and 2 workers (datatrove tasks; exact NLTK overlap; `--tokenizer fast` and
   `--tokenizer whitespace` rows where a command tokenises), each as its own `paranmt-hf` process: wall time, input
   lines/s, CPU seconds, peak RSS of the whole process tree (sampled), extrapolated time for the 51.4M lines of
   ParaNMT-50M (linear).
3. Checks that 1 and 2 workers give byte-identical outputs, that `filter` keeps exactly the rows of the papers'
   per-line filter (original NLTK call per sentence, fastText per sentence) on the first --reference-lines lines,
   and measures how often the fast and whitespace modes give the exact tokens and overlap on real text.
4. Records the run in benchmarks/corpus_scale/corpus_scale.json (the command, git commit, environment and load
   average of every row) and prints its table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PARANMT_LINES = 51_400_000


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tree_sample(pid: int, cpu: dict[int, float]) -> int:
    """RSS of the process tree of ``pid``; records each process's CPU seconds so far in ``cpu`` (pid -> seconds)."""
    import psutil

    try:
        proc = psutil.Process(pid)
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    rss = 0
    for p in tree:
        try:
            with p.oneshot():
                rss += p.memory_info().rss
                times = p.cpu_times()
                cpu[p.pid] = max(cpu.get(p.pid, 0.0), times.user + times.system)
        except psutil.Error:
            pass
    return rss


def run(args: list[str], lines: int) -> dict:
    """Run `paranmt-hf ARGS` in its own process; wall, CPU, peak tree RSS, lines/s."""
    command = [sys.executable, "-m", "paranmt_hf.cli.main", *args]
    before = os.times()
    load_before = load()
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    sampled_cpu: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_sample(proc.pid, sampled_cpu))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    after = os.times()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{err[-3000:]}")
    summary = [line for line in err.replace("\r", "\n").splitlines() if line.startswith(("read ", "full:",
                                                                                           "filtered:"))]
    # CPU of the whole tree: the reaped children's times, or the sampled per-process times where the workers were
    # not reaped into them (datatrove's pool), whichever is larger (samples miss at most the last 0.1 s of each)
    cpu = max((after.children_user - before.children_user) + (after.children_system - before.children_system),
              sum(sampled_cpu.values()))
    speed = lines / wall
    return {"command": "paranmt-hf " + " ".join(args), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "lines": lines, "lines_per_s": round(speed), "lines_per_cpu_s": round(lines / cpu) if cpu else None,
            "peak_rss_mb": round(peak / 2**20), "extrapolated_51_4M_min": round(PARANMT_LINES / speed / 60, 1),
            "load_before": load_before, "load_after": load(), "summary": summary}


def _tsv_pairs(path: Path, limit: int) -> list[tuple[str, str]]:
    import itertools

    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t")[:2]) for line in itertools.islice(f, limit)]


def agreement(data_dir: Path, workdir: Path, pairs: int = 100_000) -> dict:
    """How often the fast and whitespace modes give exactly NLTK's tokens (per text) and overlap (per pair)."""
    from paranmt_hf.corpus.measures.overlap import overlaps_many
    from paranmt_hf.corpus.text.tokens import tokenize_many
    from paranmt_hf.data.records import iter_records

    raw = [(r["text_a"], r["text_b"]) for _, _, r in iter_records([workdir / "para-nmt-50m.txt"], "paranmt")][:pairs]
    tatoeba = [(en, "") for en, _ in _tsv_pairs(data_dir / "train" / "bitext" / "tatoeba-en-de.tsv.gz", 20_000)]
    out = {}
    for name, rows in (("raw pairs (the synthetic para-nmt-50m.txt)", raw),
                       ("real tokenised pairs (ParaNMT-5M sample)",
                        _tsv_pairs(data_dir / "train" / "paranmt5m-sample-10k.tsv.gz", pairs)),
                       ("Flickr30k caption pairs", _tsv_pairs(data_dir / "train" / "flickr30k-caption-pairs.tsv.gz",
                                                              20_000)),
                       ("Tatoeba English sentences (tokens only)", tatoeba)):
        a, b = [r[0] for r in rows], [r[1] for r in rows]
        texts = [t.strip().lower() for t in (*a, *b) if t]
        exact_tokens = tokenize_many(texts, "nltk")
        exact = overlaps_many(a, b, "nltk")
        out[name] = {"pairs": len(rows), "texts": len(texts)}
        for mode in ("fast", "whitespace"):
            same_tokens = sum(x == y for x, y in zip(exact_tokens, tokenize_many(texts, mode), strict=True))
            row = {"same_tokens_share": round(same_tokens / len(texts), 5)}
            if any(b):
                other = overlaps_many(a, b, mode)
                same = sum(x == y for x, y in zip(exact, other, strict=True))
                side = sum((x > 0.7) == (y > 0.7) for x, y in zip(exact, other, strict=True))
                row.update(equal_overlap=same, equal_overlap_share=round(same / len(rows), 5),
                           same_side_of_0_7=round(side / len(rows), 5))
            out[name][mode] = row
    return out


def reference_rows(path: Path, limit: int) -> list[str]:
    """The PRAS filter line by line, as the original scripts: one NLTK call per sentence, fastText per sentence."""
    from paranmt_hf.corpus.measures.overlap import ngram_overlap
    from paranmt_hf.corpus.text.langid import LanguageIdentifier
    from paranmt_hf.corpus.text.tokens import nltk_word_tokenize_reference as tokenize
    from paranmt_hf.data.records import iter_records

    lid = LanguageIdentifier()
    kept = []
    head = path.with_name("reference-head.txt")
    with open(path, "rb") as src, open(head, "wb") as dst:
        for _, line in zip(range(limit), src, strict=False):
            dst.write(line)
    for _, _, r in iter_records([head], "paranmt"):
        a, b, s = r["text_a"], r["text_b"], r["score"]
        if not 0.4 <= s <= 1.0 or not 5 <= (len(a.split()) + len(b.split())) / 2 <= 40:
            continue
        if ngram_overlap(tokenize(a.strip().lower()), tokenize(b.strip().lower())) > 0.7:
            continue
        if lid.is_english(a) and lid.is_english(b):
            kept.append(f"{a}\t{b}")
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--workdir", default="/tmp/paranmt-corpus-scale")
    parser.add_argument("--data-dir", default=os.environ.get("PARANMT_HF_DATA", str(ROOT.parent / "shared" / "data")))
    parser.add_argument("--reference-lines", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="only filter (3 modes) and annotate (trigram), 1 and 2 "
                                                             "workers")
    parser.add_argument("--json", default=str(HERE / "corpus_scale.json"), help="where to record the run")
    args = parser.parse_args()
    from paranmt_hf.utils.provenance import provenance, update_record

    record = provenance()  # at the start: the load average the run began under
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    work, data = Path(args.workdir), Path(args.data_dir)
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "para-nmt-50m.txt"
    stamp = work / f"corpus-{args.lines}.done"
    if not stamp.exists():
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # the test fixtures
        from _synthetic import write_synthetic_paranmt

        print(f"writing {args.lines:,} synthetic lines to {corpus}", flush=True)
        write_synthetic_paranmt(corpus, args.lines, data, seed=0)
        stamp.write_text("ok\n")
    models = {}
    for kind, extra in (("trigram", ["--embedding-dim", "300"]),
                        ("sp", ["--vocab-size", "8000", "--embedding-dim", "1024"])):
        models[kind] = work / kind
        if not (models[kind] / "config.json").exists():
            subprocess.run([sys.executable, "-m", "paranmt_hf.cli.main", "build", "--kind", kind, "--input",
                            str(data / "train" / "paranmt5m-sample-10k.tsv.gz"),
                            str(data / "train" / "flickr30k-caption-pairs.tsv.gz"), "--columns", "0,1", *extra,
                            "--output", str(models[kind])], check=True, capture_output=True)
    c = str(corpus)
    out = lambda name: str(work / name)  # noqa: E731
    jobs = [  # (name, mode, args, output compared across process counts)
        ("filter (PRAS, language check)", "exact", ["corpus", "filter", c, "-o", out("filter.tsv")], "filter.tsv"),
        ("filter (PRAS, language check)", "fast", ["corpus", "filter", c, "-o", out("filter-fast.tsv"),
                                                   "--tokenizer", "fast"], "filter-fast.tsv"),
        ("filter (PRAS, language check)", "whitespace", ["corpus", "filter", c, "-o", out("filter-ws.tsv"),
                                                         "--tokenizer", "whitespace"], "filter-ws.tsv"),
        ("annotate --model trigram --no-overlap", "-", ["corpus", "annotate", c, "--format", "paranmt", "--model",
                                                        str(models["trigram"]), "--no-overlap", "-o",
                                                        out("ann-tri.tsv")], "ann-tri.tsv"),
        ("annotate --model trigram (+ overlap)", "exact", ["corpus", "annotate", c, "--format", "paranmt", "--model",
                                                           str(models["trigram"]), "-o", out("ann-tri-ovl.tsv")],
         "ann-tri-ovl.tsv"),
        ("annotate --model trigram (+ overlap)", "fast", ["corpus", "annotate", c, "--format", "paranmt", "--model",
                                                          str(models["trigram"]), "--tokenizer", "fast", "-o",
                                                          out("ann-tri-ovl-fast.tsv")], "ann-tri-ovl-fast.tsv"),
        ("annotate --model sp --no-overlap", "-", ["corpus", "annotate", c, "--format", "paranmt", "--model",
                                                   str(models["sp"]), "--no-overlap", "-o", out("ann-sp.tsv")],
         "ann-sp.tsv"),
        ("dedup", "-", ["corpus", "dedup", c, "--format", "paranmt", "-o", out("dedup.tsv")], "dedup.tsv"),
        ("export --config full (Parquet)", "exact", ["corpus", "export", c, "--config", "full", "-o",
                                                     out("export-full")], None),
        ("histogram", "exact", ["corpus", "histogram", c, "--format", "paranmt", "--json", out("hist.json")], None),
    ]
    if args.quick:
        jobs = jobs[:4]
    rows = []
    for name, mode, command, compared in jobs:
        outputs = []
        for workers in (1, 2):
            print(f"{name} [{mode}] x{workers} ...", flush=True)
            row = run([*command, "--workers", str(workers), "--overwrite", "--quiet"], args.lines)
            row.update(name=name, mode=mode, workers=workers)
            rows.append(row)
            print(f"  {row['lines_per_s']:,} lines/s, {row['peak_rss_mb']} MB, load {row['load_after']}", flush=True)
            if compared:
                outputs.append((work / compared).read_bytes())
        if compared:
            rows[-1]["identical_to_1_worker"] = outputs[0] == outputs[1]
    checks = {"agreement_with_exact": agreement(data, work)}
    fast_rows = (work / "filter-fast.tsv", work / "filter.tsv")
    if all(p.exists() for p in fast_rows):
        kept_fast, kept_exact = (set(p.read_bytes().splitlines()) for p in fast_rows)
        checks["filter_fast_vs_exact_kept_rows"] = {"exact": len(kept_exact), "fast": len(kept_fast),
                                                    "only_exact": len(kept_exact - kept_fast),
                                                    "only_fast": len(kept_fast - kept_exact)}
    if args.reference_lines:
        reference = reference_rows(corpus, args.reference_lines)
        head = work / "reference-head.txt"
        subprocess.run([sys.executable, "-m", "paranmt_hf.cli.main", "corpus", "filter", str(head), "-o",
                        out("filter-head.tsv"), "--overwrite", "--quiet"], check=True, capture_output=True)
        ours = ["\t".join(line.split("\t")[:2]) for line in (work / "filter-head.tsv").read_text("utf-8").splitlines()]
        checks["filter_equals_per_line_reference"] = {"lines": args.reference_lines, "reference_rows": len(reference),
                                                      "identical": ours == reference}
    load_at_start = record["load_average"]
    record = provenance(packages=("paranmt_hf", "numpy", "nltk", "datatrove", "pyarrow"))
    record["load_average_at_start"] = load_at_start
    result = {
        "benchmark": "paranmt-hf corpus throughput on a synthetic para-nmt-50m.txt (real ParaNMT text)",
        "provenance": record, "corpus": {"path": str(corpus), "lines": args.lines, "bytes": corpus.stat().st_size},
        "rows": rows, "checks": checks,
    }
    update_record(args.json, "corpus_scale", result)  # the folder's one JSON: older records beside this run
    print(table(result))
    print(json.dumps(checks, indent=2))


def table(result: dict) -> str:
    """The run's table for README.md: one row per command, mode and worker count."""
    lines = [
        "| command | mode | workers | lines/s | lines/CPU-s | peak RSS (MB) | 51.4M lines (min) |"
        " load before / after | identical to 1 worker |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in result["rows"]:
        same = r.get("identical_to_1_worker")
        lines.append(f"| `{r['name']}` | {r['mode']} | {r['workers']} | {r['lines_per_s']:,} | "
                     f"{r['lines_per_cpu_s'] or 0:,} | {r['peak_rss_mb']:,} | {r['extrapolated_51_4M_min']} | "
                     f"{r['load_before']} / {r['load_after']} | {'' if same is None else ('yes' if same else 'NO')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

"""Render results/peers/summary.json as README.md tables and a bar plot (run by run_peers.py; also standalone)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
YEARS = ["STS12", "STS13", "STS14", "STS15", "STS16"]


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def tables(summary: dict) -> str:
    models = summary["models"]
    lines = ["### STS, papers' protocol (Pearson r x 100; STS12-16: mean over each year's datasets)", "",
             "| model | " + " | ".join(YEARS)
             + " | **STS12-16 avg** | STS-B dev | STS-B test | STS17 (mean of tracks) |",
             "|---|" + "---:|" * (len(YEARS) + 4)]
    for name, m in models.items():
        t = m["tasks"]
        lines.append(f"| {name} | " + " | ".join(_fmt(t.get(y)) for y in YEARS)
                     + f" | **{_fmt(m['sts12_16_paper_pearson'])}** | {_fmt(m.get('stsb_dev'))} | "
                     f"{_fmt(m.get('stsb_test'))} | {_fmt(t.get('STS17'))} |")
    lines += ["", "### STS, mteb's protocol (cosine Spearman x 100; STS12-16 pooled over each year, as mteb's tasks)",
              "", "| model | " + " | ".join(YEARS) + " | avg | STSBenchmark | STS17 |", "|---|" + "---:|" * 8]
    for name, m in models.items():
        s = m["mteb_cosine_spearman"]
        avg = sum(s[y] for y in YEARS) / 5 if all(y in s for y in YEARS) else None
        lines.append(f"| {name} | " + " | ".join(_fmt(s.get(y)) for y in YEARS)
                     + f" | {_fmt(avg)} | {_fmt(s.get('STSBenchmark'))} | {_fmt(s.get('STS17'))} |")
    langs = sorted({lang for m in models.values() for lang in m.get("tatoeba_error", {})})
    if langs:
        lines += ["", "### Tatoeba bitext mining error rate % (xx->en / en->xx; lower is better)", "",
                  "| model | " + " | ".join(langs) + " |", "|---|" + "---:|" * len(langs)]
        for name, m in models.items():
            err = m.get("tatoeba_error", {})
            lines.append(f"| {name} | " + " | ".join(
                f"{err[lang][0]:.1f} / {err[lang][1]:.1f}" if lang in err else "–" for lang in langs) + " |")
    return "\n".join(lines)


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = summary["models"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(1, len(models))
    for i, (name, m) in enumerate(models.items()):
        vals = [m["tasks"].get(y) or 0 for y in YEARS] + [m["sts12_16_paper_pearson"] or 0]
        ax.bar([x + i * width for x in range(6)], vals, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(6)], [*YEARS, "avg"])
    ax.set_ylabel("Pearson r x 100")
    ax.set_title("STS12-16, papers' protocol")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def model_numbers(result_dir: Path) -> dict:
    """Headline numbers of one model from its mteb-layout JSON files (so the tables never drift from them).

    The papers' numbers come from our complete scores (the files' ``paranmt_hf`` key); mteb's number of a task is
    the mean ``main_score`` of the file's ``scores`` field, i.e. what ``mteb.TaskResult.get_score()`` reads back.
    """
    from paranmt_hf.evaluation.mteb_layout import full_scores

    tasks = {p.stem: json.loads(p.read_text()) for p in result_dir.glob("*.json") if p.name != "model_meta.json"}
    out: dict = {"tasks": {}, "mteb_cosine_spearman": {}, "tatoeba_error": {}}
    for name, data in tasks.items():
        test = full_scores(data).get("test", [])
        if name.startswith("STS"):
            default = next((e for e in test if e["hf_subset"] == "default"), None)
            paper = default.get("paper_pearson_mean") if default else None
            mean_pearson = sum(e["paper_pearson"] for e in test) / len(test)
            out["tasks"][name] = 100 * (paper if paper is not None else mean_pearson)
            mteb = [e["main_score"] for entries in data["scores"].values() for e in entries]
            out["mteb_cosine_spearman"][name] = 100 * sum(mteb) / len(mteb)
        elif name == "Tatoeba":
            out["tatoeba_error"] = {e["hf_subset"]: [e["error_xx2en"], e["error_en2xx"]] for e in test}
    years = [out["tasks"].get(y) for y in YEARS]
    out["sts12_16_paper_pearson"] = sum(years) / 5 if None not in years else None
    stsb = full_scores(tasks["STSBenchmark"]) if "STSBenchmark" in tasks else {}
    out["stsb_dev"] = 100 * stsb["validation"][0]["paper_pearson"] if "validation" in stsb else None
    out["stsb_test"] = 100 * stsb["test"][0]["paper_pearson"] if "test" in stsb else None
    return out


OLD_RUN = ("2026-11-22 04:10 UTC", "c69fd13")
"""The first run, before summary.json recorded provenance: its date, and the commit its numbers were committed in."""


def provenance_table(summary: dict) -> str:
    """Which run produced each model's numbers: command, commit, date, load (older entries: the first run)."""
    lines = ["| model | commit | date | load (1 min) | command |", "|---|---|---|---:|---|"]
    for name, m in summary["models"].items():
        prov = m.get("provenance")
        if prov is None:
            lines.append(f"| {name} | ≤ `{OLD_RUN[1]}` | {OLD_RUN[0]} | – | the first run, before provenance "
                         "was recorded |")
            continue
        commit = (prov["git_commit"] or "unknown")[:8] + ("+dirty" if prov["git_dirty"] else "")
        date = prov["date"][:16].replace("T", " ")
        lines.append(f"| {name} | `{commit}` | {date} | {prov['load_average'][0]:.1f} | `{prov['command']}` |")
    return "\n".join(lines)


def write_readme(folder: Path = HERE) -> None:
    from paranmt_hf.utils.atomic import atomic_write_json, atomic_write_text

    summary = json.loads((folder / "summary.json").read_text())
    for name, m in summary["models"].items():
        m.update(model_numbers(folder / "mteb_results" / name.replace("/", "__") / "local"))
    atomic_write_json(folder / "summary.json", summary, overwrite=True, indent=2)
    text = (HERE / "README.template.md").read_text().replace("{{TABLES}}", tables(summary)).replace(
        "{{PROVENANCE}}", provenance_table(summary))
    atomic_write_text(folder / "README.md", text, overwrite=True)
    try:
        plot(summary, folder / "peers_sts.png")
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", default=str(HERE), help="folder holding summary.json (default: here)")
    sys.path.insert(0, str(HERE.parents[1]))  # the repository root: paranmt_hf without installing
    write_readme(Path(parser.parse_args().folder))

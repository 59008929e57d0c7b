"""Compare a ``paranmt-hf data fetch`` folder with ``../shared/data``: file sets, bytes, pairs and counts.

Two ways to run it:

    # after a real online fetch
    paranmt-hf data fetch --dest /tmp/fetched && python results/data_fetch/compare.py --dest /tmp/fetched

    # offline, from git clones of the upstream repositories (the registry's pinned GitHub files, real bytes):
    python results/data_fetch/compare.py --upstream-clones CLONES
    # CLONES/<owner>+<name> are clones of multi30k/dataset, facebookresearch/LASER, fh295/fh295.github.io and
    # brmson/dataset-sts; their files are served at the pinned commits by a local HTTP server with the registry's
    # real checksums. Sources not on GitHub (SemEval archives, Tatoeba exports, ParaNMT-5M) are rebuilt from the
    # shared data as in the tests (tests/_fetch_server.py) and are marked so in the JSON.

Writes ``results/data_fetch/comparison.json`` (with the command, git commit, environment and load average).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from paranmt_hf.utils.atomic import atomic_write_json
from paranmt_hf.utils.provenance import provenance

ROOT = Path(__file__).resolve().parents[2]


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def compare(dest: Path, shared: Path) -> dict[str, Any]:
    """Per-file comparison of ``dest`` with ``shared`` (evaluation files by bytes, training files by pairs)."""
    out: dict[str, Any] = {"eval": {}, "train": {}}
    mine, theirs = _files(dest / "eval"), _files(shared / "eval")
    out["eval"]["only_in_fetch"] = sorted(mine - theirs)
    out["eval"]["only_in_shared"] = sorted(theirs - mine)
    out["eval"]["byte_identical"] = sum((dest / "eval" / f).read_bytes() == (shared / "eval" / f).read_bytes()
                                        for f in mine & theirs)
    out["eval"]["different"] = sorted(f for f in mine & theirs
                                      if (dest / "eval" / f).read_bytes() != (shared / "eval" / f).read_bytes())
    stats_path = dest / "train" / "STATS.json"
    stats = json.loads(stats_path.read_text()) if stats_path.is_file() else {}
    shared_stats = json.loads((shared / "train" / "STATS.json").read_text())
    for name, want in shared_stats.items():
        path = dest / name
        if not path.is_file():
            out["train"][name] = {"present": False}
            continue
        got_pairs = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
        want_pairs = gzip.decompress((shared / name).read_bytes()).decode("utf-8").splitlines()
        common = len(set(got_pairs) & set(want_pairs))
        out["train"][name] = {
            "pairs": len(got_pairs), "shared_pairs": want["pairs"], "removed": stats.get(name, {}).get("removed"),
            "shared_removed": want["removed"], "identical": got_pairs == want_pairs, "pairs_in_common": common,
        }
    return out


def _git_blob(clones: Path, url: str) -> bytes | None:
    """The bytes of a pinned GitHub URL, read from a local clone (None when it is not such a URL)."""
    if url.startswith("https://raw.githubusercontent.com/"):
        owner, name, commit, path = url.split("/", 6)[3:7]
    elif url.startswith("https://fh295.github.io/"):
        owner, name, commit, path = "fh295", "fh295.github.io", "HEAD", url.split("/", 3)[3]
    else:
        return None
    repo = clones / f"{owner}+{name}"
    repo = repo / "repo" if (repo / "repo").exists() else repo
    if not repo.exists():
        return None
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout


def run_upstream(clones: Path, shared: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Fetch from a local server holding the real upstream GitHub files (+ rebuilt others) and compare."""
    sys.path.insert(0, str(ROOT / "tests"))
    from _fetch_server import SourceServer, eval_files, server_path, train_files, unpin

    from paranmt_hf.fetch import fetch_data, registry

    rebuilt = {**eval_files(shared), **train_files(shared, plant_sick=False)}  # the real SICK is served
    served: dict[str, bytes] = {}
    origin: dict[str, str] = {}
    remotes = {r.key: r for s in registry.SOURCES.values() for r in registry.all_remotes(s)}
    for key, remote in remotes.items():
        real = _git_blob(clones, remote.urls[0]) if remote.sha256 else None
        if real is not None:
            served[server_path(remote.urls[0])] = real
            origin[key] = "upstream bytes (pinned checksum checked)"
        elif key in rebuilt:
            served[server_path(remote.urls[0])] = rebuilt[key]
            origin[key] = "rebuilt from ../shared/data (first-use checksum)"
    # only the rebuilt files lose their pins
    def fix(sources: tuple[registry.Source, ...]) -> tuple[registry.Source, ...]:
        return tuple(dataclasses.replace(s, remotes=tuple(
            r if origin.get(r.key, "").startswith("upstream") else unpin(r) for r in s.remotes)) for s in sources)

    registry.EVAL_SOURCES, registry.TRAIN_SOURCES = fix(registry.EVAL_SOURCES), fix(registry.TRAIN_SOURCES)
    registry.SOURCES = {s.name: s for s in (*registry.EVAL_SOURCES, *registry.TRAIN_SOURCES)}
    server = SourceServer(served)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            fetch_data(Path(tmp) / "data", mirror=server.url, progress=False)
            elapsed = time.perf_counter() - start
            result = compare(Path(tmp) / "data", shared)
    finally:
        server.close()
    result["fetch_seconds"] = round(elapsed, 1)
    return result, origin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, help="a fetched data folder to compare")
    parser.add_argument("--upstream-clones", type=Path, help="folder of git clones <owner>+<name> (see above)")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("comparison.json"))
    args = parser.parse_args()
    if (args.dest is None) == (args.upstream_clones is None):
        parser.error("give exactly one of --dest and --upstream-clones")
    record = provenance()  # at the start: the load average the run began under
    origin: dict[str, str] = {}
    if args.dest is not None:
        result = compare(args.dest, args.shared)
    else:
        result, origin = run_upstream(args.upstream_clones, args.shared)
    report = {
        "command": record["command"],
        "git_commit": record["git_commit"],
        "date": record["date"],
        "provenance": record | {"load_average_after": [round(x, 2) for x in os.getloadavg()]},
        "sources": origin,
        "comparison": result,
    }
    atomic_write_json(args.out, report, indent=2)
    identical = [n for n, r in result["train"].items() if r.get("identical")]
    print(f"eval: {result['eval']['byte_identical']} files byte-identical, different: {result['eval']['different']}, "
          f"missing: {result['eval']['only_in_shared']}; train identical: {len(identical)}/{len(result['train'])}")


if __name__ == "__main__":
    main()

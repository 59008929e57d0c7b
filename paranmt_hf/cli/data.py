"""``paranmt-hf data``: fetch the evaluation sets and training corpora from public sources, list them, verify them."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

EPILOG = """commands:
  fetch    download, verify and install eval/ (STS 2012-2016, STS-B, STS17, Tatoeba, SimLex-999) and train/
           (Flickr30k caption pairs, Multi30k, Tatoeba bitext, a ParaNMT-5M sample; decontaminated against every
           evaluation set) into --dest, with train/STATS.json, SOURCES.json (URLs, sha256, licences) and
           CHECKSUMS.sha256 (what was built, never recomputed from disk). Resumable: run it again after an
           interruption. Existing outputs that match their recorded checksums are kept; one that fails
           verification (a changed or missing file) is installed again from the verified downloads.
  sources  list every source: URLs, mirrors, pinned checksums, licences
  verify   check a data folder against its CHECKSUMS.sha256
  path     print the data folder the commands use ($PARANMT_HF_DATA, ../shared/data, else the user cache);
           exit status 1, and how to fill it, when it does not exist yet

The default --dest is $PARANMT_HF_DATA when set, else the user cache ($PARANMT_HF_CACHE/data,
$XDG_CACHE_HOME/paranmt_hf/data or ~/.cache/paranmt_hf/data), which every command reads when PARANMT_HF_DATA is unset
and ../shared/data is absent. A source whose download fails can be given by hand: --file KEY=PATH."""


def add_parser(subparsers: Any) -> None:
    """Register ``data``."""
    p = subparsers.add_parser("data", help="fetch the evaluation and training data from public sources",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="data_command", metavar="{fetch,sources,verify,path}")
    f = sub.add_parser("fetch", help="download, verify and install the data")
    f.add_argument("--dest", default=None, help="data folder to fill (default: $PARANMT_HF_DATA when set, else the "
                   "user cache)")
    f.add_argument("--only", choices=["eval", "train"], default=None,
                   help="only the evaluation sets, or only the training corpora (missing evaluation sets are still "
                   "fetched: decontamination needs them)")
    f.add_argument("--verify", choices=["tofu", "strict"], default="tofu",
                   help="tofu (default): pinned checksums must match; files without one are recorded on first "
                   "download in SOURCES.json and must match it later. strict: refuse files without a pinned or "
                   "recorded checksum")
    f.add_argument("--mirror", default=None, help="base URL serving every file as <mirror>/<host>/<path> "
                   "(default: $PARANMT_HF_MIRROR; the original hosts are then not contacted)")
    f.add_argument("--overwrite", action="store_true", help="rebuild outputs that exist (downloads are reused)")
    f.add_argument("--paranmt-sample", type=int, default=10_000, help="lines drawn from ParaNMT-5M (default 10000)")
    f.add_argument("--seed", type=int, default=0, help="seed of the ParaNMT-5M sample (default 0)")
    f.add_argument("--retries", type=int, default=3, help="attempts per URL for interrupted transfers (default 3)")
    f.add_argument("--timeout", type=float, default=60.0, help="socket timeout in seconds (default 60)")
    f.add_argument("--file", action="append", default=[], metavar="KEY=PATH",
                   help="use a copy of a download you obtained yourself (KEY as listed by `data sources`, e.g. "
                   "paranmt/para-nmt-5m-processed.zip=~/Downloads/para-nmt-5m-processed.zip); checked like a "
                   "download; repeatable")
    f.add_argument("--no-progress", action="store_true", help="no progress bars")
    f.set_defaults(func=run_fetch)
    s = sub.add_parser("sources", help="list the sources, their URLs, checksums and licences")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=run_sources)
    v = sub.add_parser("verify", help="check a data folder against its CHECKSUMS.sha256")
    v.add_argument("dest", nargs="?", default=None, help="data folder (default: see `data path`)")
    v.set_defaults(func=run_verify, user_errors=(ValueError,))  # a malformed CHECKSUMS.sha256 line
    w = sub.add_parser("path", help="print the data folder the commands use")
    w.set_defaults(func=run_path)
    p.set_defaults(func=lambda args: p.print_help() or 2)


OFFLINE_HINT = ("this machine looks offline. Run `paranmt-hf data fetch --dest DIR` on a machine with internet, copy "
                "DIR here and set PARANMT_HF_DATA=DIR (or pass --mirror URL to use a local mirror of the sources).")


def run_fetch(args: argparse.Namespace) -> int:
    """Fetch the data and print what was built."""
    from ..fetch import DownloadError, UnpinnedError, UnreachableError, fetch_data
    from ..utils.atomic import OutputExistsError
    from ..utils.paths import cache_data_dir

    dest = args.dest or os.environ.get("PARANMT_HF_DATA") or str(cache_data_dir())
    print(f"paranmt-hf data fetch: into {dest}", file=sys.stderr)  # noqa: T201 - the command's output

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)  # noqa: T201

    files = {}
    for item in args.file:
        key, sep, path = item.partition("=")
        if not sep or not key or not path:
            raise SystemExit(f"paranmt-hf data fetch: --file wants KEY=PATH, got {item!r}")
        files[key] = os.path.expanduser(path)
    try:
        report = fetch_data(dest, only=args.only, verify=args.verify, mirror=args.mirror, overwrite=args.overwrite,
                            paranmt_sample=args.paranmt_sample, seed=args.seed, retries=args.retries,
                            timeout=args.timeout, progress=not args.no_progress, say=say, files=files)
    except UnreachableError as err:
        raise SystemExit(f"paranmt-hf data fetch: cannot download ({err}): {OFFLINE_HINT}") from err
    except (DownloadError, UnpinnedError, OutputExistsError, FileNotFoundError, ValueError) as err:
        raise SystemExit(f"paranmt-hf data fetch: {err}") from err
    print(f"built {len(report.built)} outputs, kept {len(report.kept)} existing ones in {report.dest}")  # noqa: T201
    for output, stats in report.stats.items():
        print(f"  {output}: {stats['pairs']:,} pairs ({stats['removed']:,} removed)")  # noqa: T201
    return 0


def _source_rows() -> list[dict[str, Any]]:
    from ..fetch.registry import SOURCES, all_remotes

    rows = []
    for source in SOURCES.values():
        remotes = [{"key": r.key, "urls": list(r.urls), "sha256": r.sha256, "size": r.size,
                    "fallback": r.fallback.key if r.fallback else None, "note": r.note} for r in all_remotes(source)]
        rows.append({"name": source.name, "kind": source.kind, "description": source.description,
                     "outputs": list(source.outputs), "licence": source.licence, "homepage": source.homepage,
                     "remotes": remotes})
    return rows


def run_sources(args: argparse.Namespace) -> int:
    """Print the registry."""
    rows = _source_rows()
    if args.json:
        print(json.dumps(rows, indent=2))  # noqa: T201
        return 0
    for row in rows:
        print(f"{row['name']} [{row['kind']}] {row['description']}")  # noqa: T201
        print(f"  licence: {row['licence']}")  # noqa: T201
        for remote in row["remotes"]:
            check = f"sha256 {remote['sha256'][:12]}…" if remote["sha256"] else "sha256 recorded on first download"
            print(f"  {remote['key']} ({check})")  # noqa: T201
            for url in remote["urls"]:
                print(f"    {url}")  # noqa: T201
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """Check the files against CHECKSUMS.sha256; exit status 1 when anything changed or is missing."""
    from ..fetch import verify_checksums
    from ..utils.paths import data_dir

    dest = data_dir(args.dest)
    result = verify_checksums(dest)
    print(f"{dest}: {len(result['ok'])} files ok")  # noqa: T201
    for kind in ("changed", "missing", "unlisted"):
        for name in result[kind]:
            print(f"  {kind}: {name}")  # noqa: T201
    return 1 if result["changed"] or result["missing"] else 0


def run_path(args: argparse.Namespace) -> int:
    """Print the data folder; one that does not exist yet is said on stderr, with how to fill it (status 1)."""
    import sys

    from ..utils.paths import data_dir

    folder = data_dir(must_exist=False)
    print(folder)  # noqa: T201 - the command's output, also when missing (`export PARANMT_HF_DATA=$(...)`)
    if not os.path.isdir(folder):
        print(f"paranmt-hf data path: {folder} does not exist yet: `paranmt-hf data fetch` fills it (or set "  # noqa: T201
              "PARANMT_HF_DATA to a data folder)", file=sys.stderr)
        return 1
    return 0

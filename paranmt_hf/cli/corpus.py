"""``paranmt-hf corpus``: annotate, filter, de-duplicate, histogram, export, lexicon and pivot tools for pair corpora.

Inputs are TSV files (plain, .gz or .zip): text_a TAB text_b [TAB score [TAB trigram_overlap]], the
``para-nmt-50m.txt`` format being the 3-column case. Bad lines are skipped and summarised (``--strict``: fail).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

FILTER_OPTIONS = ("sim_low", "sim_high", "max_overlap", "min_mean_tokens", "max_mean_tokens", "min_score",
                  "max_score", "max_tokens", "sample_rate", "seed", "num_folds")


def _inputs(parser: argparse.ArgumentParser, fmt: str = "pairs") -> None:
    parser.add_argument("inputs", nargs="+", help="TSV / TSV.gz / zip files")
    parser.add_argument("--format", default=fmt, choices=["pairs", "paranmt", "processed", "bitext"],
                        help=f"line format (default {fmt}: text_a, text_b[, score[, overlap]])")
    parser.add_argument("--member", default=None, help="glob of the zip member(s) to read")
    parser.add_argument("--strict", action="store_true", help="fail on the first bad line instead of skipping it")


def _records(args: argparse.Namespace) -> Any:
    from ..corpus.records import iter_records

    return (rec for _, _, rec in iter_records(args.inputs, args.format, strict=args.strict,
                                              member_pattern=args.member))


def _filter_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recipe", default="pras", choices=["pras", "acl2018"])
    for name in FILTER_OPTIONS:
        kind = int if name in ("seed", "max_tokens", "num_folds") else float
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=None)
    parser.add_argument("--folds", type=lambda s: tuple(int(x) for x in s.split(",")), default=None,
                        help="acl2018: 1-based score folds to keep, e.g. 9,10")
    parser.add_argument("--no-language-filter", action="store_true", help="pras: skip the English check")
    parser.add_argument("--langid-model", default=None, help="fastText LID model (default: bundled lid.176.ftz)")
    parser.add_argument("--tokenizer", default="nltk", choices=["nltk", "whitespace"], help="overlap tokenizer")


def _filter_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"recipe": args.recipe, "tokenizer": args.tokenizer, "strict": args.strict,
                              "require_english": not args.no_language_filter, "langid_model": args.langid_model}
    kwargs.update({k: getattr(args, k) for k in (*FILTER_OPTIONS, "folds") if getattr(args, k) is not None})
    if getattr(args, "member", None):
        kwargs["member_pattern"] = args.member
    return kwargs


def _annotate(args: argparse.Namespace) -> int:
    from ..corpus.io import write_pairs
    from ..corpus.score import annotate_pairs

    encoder = None
    if args.model:
        from ..encoder import ParaNMTEncoder

        encoder = ParaNMTEncoder.from_pretrained(args.model)
    rows = annotate_pairs(_records(args), encoder, overlap=not args.no_overlap, tokenizer=args.tokenizer,
                          batch_size=args.batch_size)
    columns = ("text_a", "text_b", "score") if args.no_overlap else ("text_a", "text_b", "score", "overlap")
    print(f"wrote {write_pairs(rows, args.output, columns):,} pairs to {args.output}")
    return 0


def _filter(args: argparse.Namespace) -> int:
    from ..corpus.io import write_pairs
    from ..data import load_paranmt

    ds = load_paranmt("filtered", args.inputs, **_filter_kwargs(args))
    rows = ({"text_a": r["reference"], "text_b": r["paraphrase"], "score": r["paraphrase_score"],
             "overlap": r["trigram_overlap"] if args.with_overlap else None} for r in ds)
    print(f"kept {write_pairs(rows, args.output):,} pairs in {args.output}")
    return 0


def _dedup(args: argparse.Namespace) -> int:
    from ..corpus.dedup import DedupStats, dedup_records
    from ..corpus.io import write_pairs

    stats = DedupStats()
    rows = dedup_records(lambda: _records(args), keep=args.keep, key=args.key, stats=stats)
    write_pairs(rows, args.output)
    print(f"read {stats.read:,} pairs, kept {stats.kept:,}, removed {stats.removed:,} -> {args.output}")
    return 0


def _histogram(args: argparse.Namespace) -> int:
    import itertools

    from ..corpus.histogram import TABLE3_PAPER, plot_histogram, score_histogram

    records = _records(args)
    if args.limit:
        records = itertools.islice(records, args.limit)
    result = score_histogram(records, tokenizer=args.tokenizer)
    result["paper_table3"] = TABLE3_PAPER
    result["inputs"] = [str(p) for p in args.inputs]
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)
    if args.plot:
        plot_histogram(result, args.plot)
    return 0


def _export(args: argparse.Namespace) -> int:
    from ..corpus.export import export_hub_folder
    from ..data import load_paranmt

    configs = {}
    for name in args.config:
        kwargs = _filter_kwargs(args) if name == "filtered" else {"strict": args.strict}
        if name in ("full", "pairs"):
            kwargs["tokenizer"] = args.tokenizer
        if name == "pairs":
            kwargs["compute_overlap"] = True
        if args.member:
            kwargs["member_pattern"] = args.member
        configs[name] = load_paranmt(name, args.inputs or None, **kwargs)
    description = None
    if "filtered" in args.config:
        description = "`" + json.dumps({k: v for k, v in _filter_kwargs(args).items() if k != "strict"}) + "`"
    done = export_hub_folder(args.output, configs, sources=args.inputs or ["the public ParaNMT-50M zip"],
                             filter_description=description, repo_id=args.repo_id, shard_rows=args.shard_rows)
    for c in done:
        print(f"{c.name}: {c.rows:,} rows in {len(c.files)} shard(s)")
    print(f"card: {Path(args.output) / 'README.md'}")
    return 0


def _lexicon(args: argparse.Namespace) -> int:
    from ..corpus.lexicon import ParaphraseLexicon, evaluate_simlex, read_simlex

    targets = set(args.word or [])
    if args.simlex:
        targets |= {w for row in read_simlex(args.simlex) for w in row[:2]}
    lexicon = ParaphraseLexicon.from_pairs(_records(args), targets=targets or None, min_score=args.min_score,
                                           max_tokens=args.max_tokens)
    out: dict[str, Any] = {"pairs_used": lexicon.pairs}
    for word in args.word or []:
        top = lexicon.top(word.lower(), args.top, args.score, args.min_count)
        out.setdefault("top", {})[word] = top
        print(f"{word}: " + ", ".join(f"{v} ({s:.2f})" for v, s in top))
    if args.simlex:
        out["simlex"] = {kind: evaluate_simlex(lexicon, args.simlex, kind) for kind in ("cross", "adjusted")}
        print(json.dumps(out["simlex"], indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


def _pivot(args: argparse.Namespace) -> int:
    from ..corpus.io import write_pairs
    from ..corpus.pivot import PivotStats, pivot_files

    stats = PivotStats()
    options = {} if args.english_first is None else {"english_first": args.english_first == "yes"}
    pairs = pivot_files(args.inputs, max_group=args.max_group, stats=stats, **options)
    write_pairs(({"text_a": a, "text_b": b} for a, b in pairs), args.output)
    print(f"read {stats.bitext_pairs:,} translation pairs: {stats.groups:,} foreign sentences with 2+ English "
          f"translations -> {stats.pairs:,} English paraphrase pairs in {args.output}"
          + (f" ({stats.capped_groups:,} groups capped at {args.max_group})" if stats.capped_groups else ""))
    return 0


def add_parser(subparsers: Any) -> None:
    """Register ``paranmt-hf corpus`` and its sub-commands."""
    parser = subparsers.add_parser(
        "corpus", help="pair-corpus tools: annotate, filter, dedup, histogram, export, lexicon",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="corpus_command", metavar="TOOL", required=True)

    p = sub.add_parser("annotate", help="add paraphrase_score (model cosine) and trigram_overlap to pairs")
    _inputs(p)
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): text_a, text_b, score[, overlap]")
    p.add_argument("--model", help="paranmt_hf model directory or Hub id scoring the pairs (cosine)")
    p.add_argument("--no-overlap", action="store_true", help="write 3 columns (the para-nmt-50m.txt format)")
    p.add_argument("--tokenizer", default="nltk", choices=["nltk", "whitespace"])
    p.add_argument("--batch-size", type=int, default=1024)
    p.set_defaults(func=_annotate)

    p = sub.add_parser("filter", help="the PRAS filter or the ACL-2018 recipe over para-nmt-50m.txt-format files")
    _inputs(p, "paranmt")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--with-overlap", action="store_true", help="write the trigram overlap as a 4th column")
    _filter_args(p)
    p.set_defaults(func=_filter)

    p = sub.add_parser("dedup", help="remove duplicate pairs, keeping one copy (or none, like `uniq -u`)")
    _inputs(p)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--keep", default="first", choices=["first", "none"])
    p.add_argument("--key", default="pair", choices=["pair", "line"], help="texts only, or texts and score")
    p.set_defaults(func=_dedup)

    p = sub.add_parser("histogram", help="pairs per paraphrase-score range with mean trigram overlap (Table 3)")
    _inputs(p)
    p.add_argument("--json", help="write the histogram JSON here")
    p.add_argument("--plot", help="write a PNG bar chart here")
    p.add_argument("--limit", type=int, default=None, help="read at most this many pairs")
    p.add_argument("--tokenizer", default="nltk", choices=["nltk", "whitespace"])
    p.set_defaults(func=_histogram)

    p = sub.add_parser("export", help="Hub-ready dataset folder: Parquet shards per config + README card")
    p.add_argument("inputs", nargs="*", help="input files (default for full/filtered: the public zip)")
    p.add_argument("--config", action="append", required=True,
                   choices=["full", "filtered", "processed-5m", "pairs", "bitext"], help="repeat for several")
    p.add_argument("-o", "--output", required=True, help="folder to write")
    p.add_argument("--member", default=None)
    p.add_argument("--strict", action="store_true")
    p.add_argument("--repo-id", default="your-name/paranmt-50m")
    p.add_argument("--shard-rows", type=int, default=1_000_000)
    _filter_args(p)
    p.set_defaults(func=_export)

    p = sub.add_parser("lexicon", help="paraphrase lexicon by cross-sentence / adjusted PMI (ACL 2018 A.1)")
    _inputs(p)
    p.add_argument("--word", action="append", help="list the top paraphrases of this word (repeatable)")
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--score", default="adjusted", choices=["adjusted", "cross"])
    p.add_argument("--min-count", type=int, default=1, help="only paraphrases seen this often across pairs")
    p.add_argument("--min-score", type=float, default=0.35, help="drop pairs scored below (paper: 0.35)")
    p.add_argument("--max-tokens", type=int, default=30, help="drop pairs with a longer side (paper: 30)")
    p.add_argument("--simlex", help="SimLex-999.txt: report Spearman's rho")
    p.add_argument("--json", help="write results JSON here")
    p.set_defaults(func=_lexicon)

    p = sub.add_parser("pivot", help="English paraphrase pairs from X-English bitext: translations of one sentence")
    p.add_argument("inputs", nargs="+", help="X-English bitext files, one language each (en-xx / xx-en in the name)")
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): english_a, english_b")
    p.add_argument("--max-group", type=int, default=10, help="pair at most N English sentences per foreign one")
    p.add_argument("--english-first", choices=["yes", "no"], default=None,
                   help="which column is English (default: from the file names)")
    p.set_defaults(func=_pivot)

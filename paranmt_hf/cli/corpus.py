"""``paranmt-hf corpus``: annotate, filter, de-duplicate, histogram, export, lexicon, pivot and merge pair corpora.

Inputs are TSV files (plain, .gz or .zip): text_a TAB text_b [TAB score [TAB trigram_overlap]], the
``para-nmt-50m.txt`` format being the 3-column case. Bad lines are skipped, counted and summarised (``--strict``:
fail). The scale commands (filter, annotate, dedup, export, histogram) run on every core (``--processes``), show
progress, end with a summary line of counts per outcome, and can process one shard of the input
(``--num-shards N --shard-index I``, or under ``torchrun`` by rank); ``corpus merge`` joins the shards. Outputs are
written atomically and never replace an input, nor an existing file without ``--overwrite``.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..data.configs import CONFIG_NAMES

FILTER_OPTIONS = ("sim_low", "sim_high", "max_overlap", "min_mean_tokens", "max_mean_tokens", "min_score",
                  "max_score", "max_tokens", "sample_rate", "seed", "num_folds")


def _inputs(parser: argparse.ArgumentParser, fmt: str = "pairs") -> None:
    parser.add_argument("inputs", nargs="+", help="TSV / TSV.gz / zip files")
    parser.add_argument("--format", default=fmt, choices=["pairs", "paranmt", "processed", "bitext"],
                        help=f"line format (default {fmt}: text_a, text_b[, score[, overlap]])")
    parser.add_argument("--member", default=None, help="glob of the zip member(s) to read")
    parser.add_argument("--strict", action="store_true", help="fail on the first bad line instead of skipping it")


def _run_options(parser: argparse.ArgumentParser, output: bool = True, shards: bool = True) -> None:
    parser.add_argument("--processes", type=int, default=None, help="worker processes (default: every core)")
    if shards:
        parser.add_argument("--num-shards", type=int, default=None,
                            help="split the input lines into N shards (default: torchrun's WORLD_SIZE, else 1)")
        parser.add_argument("--shard-index", type=int, default=None,
                            help="the 0-based shard to process (default: torchrun's RANK); output OUT becomes "
                                 "OUT-0000I-of-0000N, joined by `corpus merge -o OUT`")
    if output:
        parser.add_argument("--overwrite", action="store_true", help="replace an existing output")
    parser.add_argument("--block-bytes", type=int, default=1 << 20,
                        help="input bytes per block handed to a worker (default 1 MiB)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _user_errors(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Report an input/output problem as one line on stderr with exit status 1 (not a traceback).

    SIGTERM unwinds like Ctrl-C, so temporary outputs are removed.
    """

    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        import signal
        import threading

        from ..corpus.pipeline import CorpusError
        from ..data.reader import InputError
        from ..data.records import BadLineError
        from ..fetch.http import DownloadError
        from ..utils.atomic import OutputExistsError, OutputIsInputError

        if threading.current_thread() is threading.main_thread():  # `kill`: unwind, removing temporary outputs
            signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
        try:
            return func(args)
        except (InputError, BadLineError, OutputExistsError, OutputIsInputError, FileNotFoundError,
                CorpusError, DownloadError) as err:
            print(f"paranmt-hf corpus {args.corpus_command}: error: {err}", file=sys.stderr)
            return 1

    return run


def _filter_args(parser: argparse.ArgumentParser) -> None:
    from ..corpus.filters import FILTERS
    from ..corpus.measures import MEASURES

    parser.add_argument("--filter", dest="filter_name", default="pras", choices=list(FILTERS),
                        help="; ".join(f"{spec.name}: {spec.description}" for spec in FILTERS.values()))
    parser.add_argument("--recipe", dest="filter_name", choices=list(FILTERS), action=_DeprecatedFlag,
                        help=argparse.SUPPRESS)
    for name in FILTER_OPTIONS:
        kind = int if name in ("seed", "max_tokens", "num_folds") else float
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=None)
    parser.add_argument("--folds", type=lambda s: tuple(int(x) for x in s.split(",")), default=None,
                        help="acl2018: 1-based score folds to keep, e.g. 9,10")
    parser.add_argument("--bound", dest="bounds", action="append", default=None, metavar="COLUMN=LOW:HIGH",
                        type=_bound,
                        help="thresholds: keep pairs with LOW <= COLUMN <= HIGH (a side may be empty; repeatable). "
                             "Columns: " + ", ".join(MEASURES) + ". EMNLP 2017's grids, e.g. "
                             "translation_length=0:10, translation_cost=:0.5, lm_perplexity=:100, "
                             "reference_probability=0.5:, unigram_overlap=0.1:0.7, bleu=0:0.6")
    parser.add_argument("--score-model", default=None, help="thresholds: model whose cosine is paraphrase_score")
    parser.add_argument("--language-model", default=None,
                        help="thresholds: KenLM model of lm_perplexity (`corpus train-lm`)")
    parser.add_argument("--classifier", default=None,
                        help="thresholds: reference classifier of reference_probability (`corpus train-classifier`)")
    parser.add_argument("--no-language-filter", action="store_true", help="pras: skip the English check")
    parser.add_argument("--langid-model", default=None, help="fastText LID model (default: bundled lid.176.ftz)")
    _tokenizer_arg(parser)


def _bound(text: str) -> tuple[str, float | None, float | None]:
    from ..corpus.filters import parse_bound

    try:
        return parse_bound(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


class _DeprecatedFlag(argparse.Action):
    """A renamed flag: takes its value and warns with the new name (removed in 0.3)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        import warnings

        warnings.warn(f"{option_string} is now --filter ({option_string} stops working in paranmt_hf 0.3)",
                      FutureWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


def _tokenizer_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokenizer", default="nltk", choices=["nltk", "whitespace"],
                        help="overlap tokenizer: nltk = the papers' nltk.word_tokenize, exactly (default); "
                             "whitespace = str.split, exact only for already tokenised text")


def _filter_options(args: argparse.Namespace) -> Any:
    from ..data.configs import ConfigOptions

    kwargs: dict[str, Any] = {"filter": args.filter_name, "tokenizer": args.tokenizer, "strict": args.strict,
                              "require_english": not args.no_language_filter, "langid_model": args.langid_model}
    kwargs.update({k: getattr(args, k) for k in (*FILTER_OPTIONS, "folds") if getattr(args, k) is not None})
    if getattr(args, "bounds", None):
        kwargs["bounds"] = tuple(args.bounds)
    kwargs.update({k: getattr(args, k) for k in ("score_model", "language_model", "classifier")
                   if getattr(args, k, None) is not None})
    if getattr(args, "member", None):
        kwargs["member_pattern"] = args.member
    return ConfigOptions(**kwargs)


def _settings(args: argparse.Namespace) -> Any:
    """The run's :class:`~paranmt_hf.corpus.pipeline.RunSettings` from the command line."""
    from ..corpus.output import shard_from_args
    from ..corpus.pipeline import RunSettings

    shard = shard_from_args(getattr(args, "num_shards", None), getattr(args, "shard_index", None))
    return RunSettings(args.processes, shard, args.block_bytes, not args.quiet)


def _write_run(args: argparse.Namespace, command: str, options: dict[str, Any],
               run: Callable[[Callable[[bytes], Any], Any, bool], Any], empty_is_error: bool = True) -> int:
    """Run a block-writing command into its (shard) output, atomically; print the summary; write the manifest.

    ``run(write, settings, compress)`` does the work and returns its summary.
    """
    from ..corpus.output import block_output, check_output, is_gzip_name, shard_path, write_manifest
    from ..corpus.pipeline import CorpusError

    settings = _settings(args)
    shard = settings.shard
    output = shard_path(args.output, shard)
    check_output(output, args.inputs, args.overwrite)  # fail before any work
    with block_output(output, args.inputs, args.overwrite) as handle:
        summary = run(handle.write, settings, is_gzip_name(output))
        print(summary.line("lines"), file=sys.stderr)
        if empty_is_error and summary.report.good == 0:
            raise CorpusError(f"no valid line in {', '.join(map(str, args.inputs))}"
                              + (f": {summary.report.summary()}" if summary.report.total_bad else " (empty input)")
                              + f"; {output} was not written")
    if not shard.whole:
        write_manifest(output, command, options, args.inputs, shard, summary.as_dict())
    print(f"wrote {output}")
    return 0


@_user_errors
def _annotate(args: argparse.Namespace) -> int:
    from ..corpus.pipeline import run_blocks
    from ..corpus.score import AnnotateTask

    def run(write: Callable[[bytes], Any], settings: Any, compress: bool) -> Any:
        task = AnnotateTask(args.model, args.format, args.strict, not args.no_overlap, args.tokenizer,
                            args.batch_size, compress)
        return run_blocks(args.inputs, task, lambda r: write(r.payload), settings, member_pattern=args.member,
                          desc="annotate")

    options = {k: getattr(args, k) for k in ("model", "format", "member", "no_overlap", "tokenizer")}
    return _write_run(args, "annotate", options, run)


@_user_errors
def _filter(args: argparse.Namespace) -> int:
    from ..corpus.filtering import filter_corpus

    options = _filter_options(args)

    def run(write: Callable[[bytes], Any], settings: Any, compress: bool) -> Any:
        return filter_corpus(args.inputs, write, options, settings, fmt=args.format, with_overlap=args.with_overlap,
                             compress=compress, member_pattern=args.member)

    return _write_run(args, "filter", {**vars(options), "format": args.format, "with_overlap": args.with_overlap},
                      run)


@_user_errors
def _dedup(args: argparse.Namespace) -> int:
    from ..corpus.dedup import dedup_files

    def run(write: Callable[[bytes], Any], settings: Any, compress: bool) -> Any:
        return dedup_files(args.inputs, write, settings, fmt=args.format, keep=args.keep, key=args.key,
                           strict=args.strict, compress=compress, member_pattern=args.member, temp_dir=args.temp_dir)

    options = {k: getattr(args, k) for k in ("format", "member", "keep", "key")}
    return _write_run(args, "dedup", options, run)


@_user_errors
def _histogram(args: argparse.Namespace) -> int:
    import itertools

    from ..corpus.histogram import TABLE3_PAPER, HistogramCounts, HistogramTask, plot_histogram, score_histogram
    from ..corpus.pipeline import run_blocks
    from ..data.records import iter_records
    from ..utils.atomic import atomic_output, atomic_write_json, check_output

    for path in (args.json, args.plot):
        if path:
            check_output(path, args.inputs, args.overwrite)
    if args.limit:
        records = (rec for _, _, rec in iter_records(args.inputs, args.format, strict=args.strict,
                                                     member_pattern=args.member))
        result = score_histogram(itertools.islice(records, args.limit), tokenizer=args.tokenizer)
    else:
        counts = HistogramCounts()
        summary = run_blocks(args.inputs, HistogramTask(args.format, args.strict, args.tokenizer),
                             lambda r: counts.merge(r.payload), _settings(args), member_pattern=args.member,
                             desc="histogram")
        print(summary.line("lines"), file=sys.stderr)
        result = counts.result()
    result["paper_table3"] = TABLE3_PAPER
    result["inputs"] = [str(p) for p in args.inputs]
    text = json.dumps(result, indent=2)
    if args.json:
        atomic_write_json(args.json, result, overwrite=args.overwrite)
    print(text)
    if args.plot:
        with atomic_output(args.plot, args.inputs, args.overwrite) as tmp:
            plot_histogram(result, tmp)
    return 0


@_user_errors
def _export(args: argparse.Namespace) -> int:
    from ..corpus.export import export_files, write_card, write_export_record
    from ..corpus.output import check_output, shard_path, write_manifest
    from ..data.configs import ConfigOptions
    from ..utils.atomic import atomic_output

    inputs = args.inputs or [_download_default()]
    configs = {}
    for name in args.config:
        options = _filter_options(args) if name == "filtered" else ConfigOptions(strict=args.strict)
        if name in ("full", "pairs"):
            options.tokenizer = args.tokenizer
        if name == "pairs":
            options.compute_overlap = True
        configs[name] = options
    description = None
    if "filtered" in args.config:
        given = {k: v for k, v in vars(configs["filtered"]).items() if v is not None and k not in ("strict", "paths")
                 and v != ()}
        description = "`" + json.dumps(given) + "`"
    card = {"sources": [str(p) for p in args.inputs] or ["the public ParaNMT-50M zip"],
            "filter_description": description, "repo_id": args.repo_id}
    settings = _settings(args)
    shard = settings.shard
    output = shard_path(args.output, shard)
    check_output(output, inputs, args.overwrite)
    with atomic_output(output, inputs, args.overwrite, directory=True) as tmp:
        exported, summaries = export_files(inputs, tmp, configs, settings, shard_rows=args.shard_rows,
                                           member_pattern=args.member)
        for c in exported:
            print(f"{c.name}: {c.rows:,} rows in {len(c.files)} file(s); " + summaries[c.name].line("lines"),
                  file=sys.stderr)
        if all(s.report.good == 0 for s in summaries.values()):
            from ..corpus.pipeline import CorpusError

            raise CorpusError(f"no valid line in {', '.join(map(str, inputs))}; {output} was not written")
        write_export_record(tmp, exported, card)
        write_card(tmp, exported, **card)
    if not shard.whole:
        first = next(iter(summaries.values()))
        merged = first.as_dict()
        merged["counts"] = {f"{name}: {k}": v for name, s in summaries.items() for k, v in s.counts.items()}
        write_manifest(output, "export", {"configs": {k: vars(v) for k, v in configs.items()},
                                          "shard_rows": args.shard_rows}, inputs, shard, merged)
    print(f"card: {Path(output) / 'README.md'}")
    return 0


def _download_default() -> str:
    """The public ParaNMT-50M zip, downloaded once into the user cache (checksummed, resumable)."""
    from ..fetch import fetch_remote
    from ..fetch.registry import PARANMT_50M

    return str(fetch_remote(PARANMT_50M))


@_user_errors
def _merge(args: argparse.Namespace) -> int:
    from ..corpus.export import merge_exports
    from ..corpus.output import merge_shards

    totals = merge_shards(args.output, overwrite=args.overwrite, merge_folders=merge_exports)
    counts = "; ".join(f"{v:,} {k}" for k, v in totals["counts"].items())
    bad = sum(totals["bad_lines"].values())
    print(f"merged {totals['shards']} shards of {totals['lines']:,} lines: {counts}"
          + (f"; {bad:,} bad" if bad else "") + f" -> {args.output}")
    return 0


@_user_errors
def _lexicon(args: argparse.Namespace) -> int:
    from ..corpus.lexicon import ParaphraseLexicon, evaluate_simlex
    from ..corpus.pipeline import iter_records_progress
    from ..data.simlex import read_simlex
    from ..utils.atomic import atomic_write_json, check_output

    if args.json:
        check_output(args.json, args.inputs, args.overwrite)
    targets = set(args.word or [])
    if args.simlex:
        targets |= {w for row in read_simlex(args.simlex) for w in row[:2]}
    records = iter_records_progress(args.inputs, args.format, strict=args.strict, member_pattern=args.member,
                                    desc="lexicon", progress=not args.quiet)
    lexicon = ParaphraseLexicon.from_pairs(records, targets=targets or None, min_score=args.min_score,
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
        atomic_write_json(args.json, out, overwrite=args.overwrite)
    return 0


@_user_errors
def _pivot(args: argparse.Namespace) -> int:
    from ..corpus.pivot import PivotStats, pivot_files
    from ..data.writer import write_pairs
    from ..utils.atomic import atomic_output, check_output

    check_output(args.output, args.inputs, args.overwrite)
    stats = PivotStats()
    options = {} if args.english_first is None else {"english_first": args.english_first == "yes"}
    pairs = pivot_files(args.inputs, max_group=args.max_group, stats=stats, progress=not args.quiet, **options)
    with atomic_output(args.output, args.inputs, args.overwrite) as tmp:
        write_pairs(({"text_a": a, "text_b": b} for a, b in pairs), tmp, ("text_a", "text_b"))
    print(f"read {stats.bitext_pairs:,} translation pairs: {stats.groups:,} foreign sentences with 2+ English "
          f"translations -> {stats.pairs:,} English paraphrase pairs in {args.output}"
          + (f" ({stats.capped_groups:,} groups capped at {args.max_group})" if stats.capped_groups else ""))
    return 0


def add_parser(subparsers: Any) -> None:
    """Register ``paranmt-hf corpus`` and its sub-commands."""
    parser = subparsers.add_parser(
        "corpus", help="pair-corpus tools: annotate, filter, dedup, histogram, export, lexicon, pivot, merge",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="corpus_command", metavar="TOOL", required=True)

    p = sub.add_parser("annotate", help="add paraphrase_score (model cosine) and trigram_overlap to pairs")
    _inputs(p)
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): text_a, text_b, score[, overlap]")
    p.add_argument("--model", help="paranmt_hf model directory or Hub id scoring the pairs (cosine)")
    p.add_argument("--no-overlap", action="store_true", help="write 3 columns (the para-nmt-50m.txt format)")
    _tokenizer_arg(p)
    p.add_argument("--batch-size", type=int, default=8192, help="sentences per forward pass")
    _run_options(p)
    p.set_defaults(func=_annotate)

    p = sub.add_parser("filter", help="the PRAS filter or the ACL-2018 recipe over para-nmt-50m.txt-format files")
    _inputs(p, "paranmt")
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): the kept lines, unchanged")
    p.add_argument("--with-overlap", action="store_true", help="append the trigram overlap as a 4th column")
    _filter_args(p)
    _run_options(p)
    p.set_defaults(func=_filter)

    p = sub.add_parser("dedup", help="remove duplicate pairs, keeping one copy (or none, like `uniq -u`)")
    _inputs(p)
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): the kept lines, unchanged")
    p.add_argument("--keep", default="first", choices=["first", "none"])
    p.add_argument("--key", default="pair", choices=["pair", "line"], help="texts only, or texts and score")
    p.add_argument("--temp-dir", default=None, help="folder for the bucket files (16 bytes per line)")
    _run_options(p)
    p.set_defaults(func=_dedup)

    p = sub.add_parser("histogram", help="pairs per paraphrase-score range with mean trigram overlap (Table 3)")
    _inputs(p)
    p.add_argument("--json", help="write the histogram JSON here")
    p.add_argument("--plot", help="write a PNG bar chart here")
    p.add_argument("--limit", type=int, default=None, help="read at most this many pairs (one process)")
    _tokenizer_arg(p)
    _run_options(p, shards=False)
    p.set_defaults(func=_histogram)

    p = sub.add_parser("export", help="Hub-ready dataset folder: Parquet shards per config + README card")
    p.add_argument("inputs", nargs="*", help="input files (default for full/filtered: the public zip)")
    p.add_argument("--config", action="append", required=True, choices=CONFIG_NAMES, help="repeat for several")
    p.add_argument("-o", "--output", required=True, help="folder to write")
    p.add_argument("--member", default=None)
    p.add_argument("--strict", action="store_true")
    p.add_argument("--repo-id", default="your-name/paranmt-50m")
    p.add_argument("--shard-rows", type=int, default=1_000_000, help="rows per Parquet file")
    _filter_args(p)
    _run_options(p)
    p.set_defaults(func=_export)

    p = sub.add_parser("merge", help="join the shard outputs of a --num-shards run (TSV files or export folders)")
    p.add_argument("-o", "--output", required=True, help="the output the shards were asked to write")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.set_defaults(func=_merge)

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
    p.add_argument("--overwrite", action="store_true", help="replace an existing JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_lexicon)

    p = sub.add_parser("pivot", help="English paraphrase pairs from X-English bitext: translations of one sentence")
    p.add_argument("inputs", nargs="+", help="X-English bitext files, one language each (en-xx / xx-en in the name)")
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): english_a, english_b")
    p.add_argument("--max-group", type=int, default=10, help="pair at most N English sentences per foreign one")
    p.add_argument("--english-first", choices=["yes", "no"], default=None,
                   help="which column is English (default: from the file names)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_pivot)

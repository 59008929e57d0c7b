"""`paranmt-hf corpus`: make and select paraphrase pairs at any scale.

Back-translate a bitext (`backtranslate`), add columns (`annotate`), keep the pairs a filter passes (`filter`),
remove duplicates (`dedup`), count pairs per score range (`histogram`), write a Hub-ready dataset folder
(`export`), or do it all in one run (`make`); plus `lexicon`, `pivot` and `merge`.

Inputs are TSV files (plain, .gz or .zip): text_a TAB text_b [TAB score [TAB trigram_overlap]], para-nmt-50m.txt
being the 3-column case, or files whose first line names their columns (the output of `backtranslate`). Bad lines
are skipped, counted and summarised (--strict: fail). The scale commands run as datatrove pipelines: the input is
split into --tasks tasks (byte ranges, so one big file is shared), --workers of them at a time here, or on a
cluster (--executor slurm / ray); they show progress, end with a summary line of counts per outcome, and write
the output atomically once every task is done. A killed run resumes where it stopped when the same command is run
again. Outputs never replace an input, nor an existing file without --overwrite.
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
from .decoding_flags import add_decoding_flags, decoding_options
from .errors import interruption

FILTER_OPTIONS = {
    "sim_low": (float, "pras: lowest paraphrase score kept (PRAS: 0.4; its README example 0.7)"),
    "sim_high": (float, "pras: highest paraphrase score kept (PRAS: 1.0)"),
    "max_overlap": (float, "pras: highest trigram overlap kept (PRAS: 0.7; its README example 0.5)"),
    "min_mean_tokens": (float, "pras: shortest mean length of the two sides, whitespace tokens (PRAS: 5)"),
    "max_mean_tokens": (float, "pras: longest mean length of the two sides (PRAS: 40)"),
    "min_score": (float, "acl2018: lowest score kept (default: the bottom of the kept folds, from a first pass)"),
    "max_score": (float, "acl2018: highest score kept (default: the top of the kept folds)"),
    "max_tokens": (int, "acl2018: longest side kept, whitespace tokens (ACL 2018: 30)"),
    "sample_rate": (float, "acl2018 / thresholds: keep each passing pair with this probability, e.g. 5e6 / kept "
                           "for ACL 2018's 5M pairs"),
    "seed": (int, "seed of --sample-rate's draw (a hash of the seed and the pair: any task count draws the same)"),
    "num_folds": (int, "acl2018: folds the scores are ranked into (ACL 2018: 10)"),
}
RUN_NUMBERS = {
    "--workers": (int, "tasks run at the same time on this machine (default: every core)"),
    "--tasks": (int, "tasks the input is split into, by byte ranges (default: as many as workers, at most one per "
                     "chunk; under torchrun: WORLD_SIZE, this process running task RANK)"),
    "--local-tasks": (int, "run only this many tasks here, from --local-rank-offset (machines sharing a folder "
                           "without a scheduler; then `corpus merge -o OUT`)"),
    "--local-rank-offset": (int, "the first task --local-tasks runs"),
    "--chunk-bytes": (int, "input bytes per chunk, the unit of work and of resumption (default {chunk})"),
    "--max-line-bytes": (int, "skip and count input lines longer than this, never holding them (default 1 MiB)"),
    "--threads": (int, "CPU threads per task for models (default: cores / workers)"),
    "--cpus-per-task": (int, "slurm / ray: CPUs per task"),
    "--gpus-per-task": (int, "slurm / ray: GPUs per task"),
    "--mem-per-cpu-gb": (float, "slurm / ray: memory per CPU (GB)"),
}
"""The running flags that take a number (their type and help)."""
CLUSTER_FLAGS = ("partition", "time", "cpus_per_task", "gpus_per_task", "mem_per_cpu_gb", "qos", "account",
                 "venv_path", "sbatch_args")
"""The running flags that go to ``RunOptions.cluster``."""


def _inputs(parser: argparse.ArgumentParser, fmt: str = "pairs") -> None:
    parser.add_argument("inputs", nargs="+", help="TSV / TSV.gz / zip files, read in order")
    from ..data.records import FORMATS

    parser.add_argument("--format", default=fmt, choices=list(FORMATS),
                        help=f"line format of files without a header line (default {fmt}): pairs = text_a, text_b"
                             "[, score[, overlap]]; paranmt = para-nmt-50m.txt (reference, paraphrase, score); "
                             "processed = the 5M release's 2 columns; bitext = 2 columns")
    parser.add_argument("--member", default=None, help="glob of the zip member(s) to read (default: every file)")
    parser.add_argument("--strict", action="store_true",
                        help="fail on the first bad line (file:line) instead of skipping and counting it")


def _run_options(parser: argparse.ArgumentParser, output: bool = True, chunk_default: str = "1 MiB") -> None:
    group = parser.add_argument_group("running (datatrove)")
    for flag, (kind, text) in RUN_NUMBERS.items():
        group.add_argument(flag, type=kind, default=0 if flag == "--local-rank-offset" else None,
                           help=text.replace("{chunk}", chunk_default))
    group.add_argument("--work-dir", default=None,
                       help="the run's work folder: logs, parts, resumption (default: .NAME.paranmt-work next to "
                            "the output; a shared filesystem on a cluster)")
    group.add_argument("--restart", action="store_true",
                       help="discard the work folder of an earlier run of this output instead of resuming it")
    group.add_argument("--keep-work", action="store_true",
                       help="keep the work folder (datatrove logs and statistics per task) after the merge")
    group.add_argument("--executor", default="local",  # RunOptions checks it against the runner's EXECUTORS
                       help="local: this machine; slurm: one job array per stage (needs --partition and --time; "
                            "returns once submitted); ray: the Ray cluster at $RAY_ADDRESS, else the one `ray start "
                            "--head` started on this machine (with its token when it uses token authentication)")
    group.add_argument("--partition", default=None, help="slurm: partition")
    group.add_argument("--time", default=None, help="slurm: time limit per task, e.g. 24:00:00")
    group.add_argument("--qos", default=None, help="slurm: quality of service (default: the cluster's)")
    group.add_argument("--account", default=None, help="slurm: account charged for the jobs")
    group.add_argument("--venv-path", default=None,
                       help="slurm: the virtual environment folder the jobs activate (its bin/activate), e.g. "
                            "/path/to/.venv")
    group.add_argument("--sbatch-arg", dest="sbatch_args", action="append", default=None, metavar="KEY=VALUE",
                       help="slurm: an extra #SBATCH --KEY=VALUE line, written as given (repeatable; KEY alone for "
                            "a flag), e.g. constraint=a100; GPU keys (gres, gpus...) go to the stages that run a "
                            "model only")
    if output:
        group.add_argument("--overwrite", action="store_true", help="replace an existing output")
    group.add_argument("--no-progress", "--quiet", dest="no_progress", action="store_true",
                       help="no progress bar")


def _run(args: argparse.Namespace) -> Any:
    """The :class:`~paranmt_hf.corpus.pipeline.runner.RunOptions` of the command line."""
    from ..corpus.pipeline.cluster import torchrun_tasks
    from ..corpus.pipeline.runner import RunOptions

    tasks, local_tasks, offset = torchrun_tasks(args.tasks, args.local_tasks, args.local_rank_offset)
    cluster = {name: getattr(args, name, None) for name in CLUSTER_FLAGS}
    return RunOptions(workers=args.workers, tasks=tasks, local_tasks=local_tasks, local_rank_offset=offset,
                      chunk_bytes=args.chunk_bytes, threads=args.threads, work_dir=args.work_dir,
                      progress=not args.no_progress, restart=args.restart, keep_work=args.keep_work,
                      executor=args.executor, cluster=cluster, max_line_bytes=args.max_line_bytes)


def _user_errors(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Report a problem of the input, the options or the installation as one line on stderr with exit status 1.

    Ctrl-C and SIGTERM (which :func:`~paranmt_hf.cli.main.main` unwinds like Ctrl-C) remove temporary outputs and
    keep the work folder for resuming.
    """

    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        return _reported(func, args)

    return run


def _reported(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run ``func``; a problem of the input, the options or the installation becomes one line and status 1."""
    import signal

    from ..corpus.errors import CorpusError
    from ..data.reader import InputError
    from ..data.records import BadLineError
    from ..fetch.http import DownloadError
    from ..utils.atomic import OutputExistsError, OutputIsInputError, UnsafeNameError

    known: tuple[type[BaseException], ...] = (InputError, BadLineError, OutputExistsError, OutputIsInputError,
                                              UnsafeNameError, FileNotFoundError, CorpusError, DownloadError)
    try:
        from ..corpus.translation.transformers_engine import TranslationModelError

        known = (*known, TranslationModelError)
    except ImportError:  # pragma: no cover - the module itself has no heavy import
        pass
    from ..corpus.errors import command_line_wording

    try:
        with command_line_wording():
            return func(args)
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback; a scale command's work folder is kept
        print(_stopped(args.corpus_command, "interrupted"), file=sys.stderr)
        return 128 + signal.SIGINT
    except SystemExit as err:  # `kill` (SIGTERM, unwound by paranmt_hf.cli.main)
        if err.code != 128 + signal.SIGTERM:
            raise
        print(_stopped(args.corpus_command, "terminated"), file=sys.stderr)
        return 128 + signal.SIGTERM
    except Exception as err:
        stop = interruption(err)  # raised while unwinding Ctrl-C or `kill`: the stop, not an error of the run
        if stop is not None:
            print(_stopped(args.corpus_command, "interrupted" if stop == signal.SIGINT else "terminated"),
                  file=sys.stderr)
            return 128 + stop
        if getattr(args, "verbose", False) or not (
            isinstance(err, known) or (isinstance(err, ImportError) and "paranmt-hf[" in str(err))
        ):
            raise
        print(f"paranmt-hf corpus {args.corpus_command}: error: {err}", file=sys.stderr)
        return 1


RESUMABLE = ("backtranslate", "annotate", "filter", "dedup", "histogram", "export", "make", "merge")
"""The commands that keep a work folder when stopped: the same command again resumes."""


def _stopped(command: str, how: str) -> str:
    """The one line of a command stopped by a signal."""
    then = "; rerun the same command to resume" if command in RESUMABLE else ""
    return f"paranmt-hf corpus {command}: {how}{then}"


def _print_summary(summary: Any, output: str, what: str = "lines") -> None:
    """The summary line (stderr) and where the output is (stdout); or what remains to do."""
    if summary.complete:
        print(summary.line(what), file=sys.stderr)
        print(f"wrote {output}")
    else:
        print(f"{summary.line(what)}; the output is written once every task is done (`paranmt-hf corpus merge -o "
              f"{output}` after the last one, or automatically by the cluster's merge job)", file=sys.stderr)


# ---- the filter options -----------------------------------------------------------------------------------------


def _filter_args(parser: argparse.ArgumentParser, default: str | None = "pras") -> None:
    from ..corpus.measures.registry import MEASURES
    from ..corpus.selection.filters import FILTERS

    group = parser.add_argument_group("filter")
    group.add_argument("--filter", dest="filter_name", default=default, choices=list(FILTERS),
                       help=("" if default else "(default: keep every pair) ")
                       + "; ".join(f"{spec.name}: {spec.description}" for spec in FILTERS.values()))
    for name, (kind, text) in FILTER_OPTIONS.items():
        flag = "--filter-seed" if name == "seed" and default is None else "--" + name.replace("_", "-")
        group.add_argument(flag, dest="filter_seed" if flag == "--filter-seed" else name, type=kind, default=None,
                           help=text)
    group.add_argument("--folds", type=lambda s: tuple(int(x) for x in s.split(",")), default=None,
                       help="acl2018: 1-based score folds to keep (ACL 2018: 9,10, the top two of ten)")
    group.add_argument("--bound", dest="bounds", action="append", default=None, metavar="COLUMN=LOW:HIGH",
                       type=_bound,
                       help="thresholds: keep pairs with LOW <= COLUMN <= HIGH (a side may be empty; repeatable). "
                            "Columns: " + ", ".join(MEASURES) + ". EMNLP 2017's grids, e.g. "
                            "translation_length=0:10, translation_cost=:0.5, lm_perplexity=:100, "
                            "reference_probability=0.5:, unigram_overlap=0.1:0.7, bleu=0:0.6")
    group.add_argument("--score-model", default=None, help="thresholds: model whose cosine is paraphrase_score")
    group.add_argument("--language-model", default=None, help="thresholds: KenLM model of lm_perplexity")
    group.add_argument("--classifier", default=None, help="thresholds: reference classifier of reference_probability")
    group.add_argument("--no-language-filter", action="store_true", help="pras: skip the English check (lid.176)")
    group.add_argument("--langid-model", default=None, help="fastText LID model (default: bundled lid.176.ftz)")
    _tokenizer_arg(parser)


def _bound(text: str) -> tuple[str, float | None, float | None]:
    from ..corpus.selection.filters import parse_bound

    try:
        return parse_bound(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _tokenizer_arg(parser: argparse.ArgumentParser) -> None:
    from ..corpus.text.tokenizer_names import TOKENIZERS

    parser.add_argument("--tokenizer", default="nltk", choices=list(TOKENIZERS),
                        help="overlap tokenizer: " + "; ".join(f"{name} = {text}" for name, text in
                                                               TOKENIZERS.items()).replace("%", "%%"))


def _filter_options(args: argparse.Namespace) -> Any:
    from ..data.configs import ConfigOptions

    kwargs: dict[str, Any] = {"filter": args.filter_name, "tokenizer": args.tokenizer, "strict": args.strict,
                              "require_english": not args.no_language_filter, "langid_model": args.langid_model}
    kwargs.update({k: getattr(args, k) for k in (*FILTER_OPTIONS, "folds") if getattr(args, k) is not None
                   and not (k == "seed" and args.corpus_command == "make")})
    if args.corpus_command == "make" and getattr(args, "filter_seed", None) is not None:
        kwargs["seed"] = args.filter_seed
    if getattr(args, "bounds", None):
        kwargs["bounds"] = tuple(args.bounds)
    kwargs.update({k: getattr(args, k) for k in ("score_model", "language_model", "classifier")
                   if getattr(args, k, None) is not None})
    if getattr(args, "member", None):
        kwargs["member_pattern"] = args.member
    return ConfigOptions(**kwargs)


# ---- the commands -----------------------------------------------------------------------------------------------


def _engine(args: argparse.Namespace) -> Any:
    """The engine's options from its flags (a flag of another engine is refused, naming the engine that has it)."""
    from ..corpus.translation.engines import engine_options

    return engine_options(args.engine, {"device": args.device, "dtype": args.dtype, "compute_type": args.compute_type,
                                        "inter_threads": args.inter_threads,
                                        "trust_remote_code": args.trust_remote_code or None})


def _cleaning(args: argparse.Namespace) -> Any:
    """The source cleaning flags as given (the API resolves them against the command's default).

    False for ``--no-source-cleaning``, else the fields the flags change (None: not given).
    """
    if args.no_source_cleaning:
        return False
    return {"min_reference_tokens": args.min_reference_tokens, "max_reference_tokens": args.max_reference_tokens,
            "source_language": args.source_language, "langid_model": getattr(args, "langid_model", None),
            "dedup": False if args.no_source_dedup else None}


def _translation(args: argparse.Namespace) -> Any:
    """The back-translation's options (``backtranslate``, ``make``)."""
    from ..corpus.translation.backtranslate import TranslationOptions

    return TranslationOptions(decoding=decoding_options(args), engine=_engine(args), cleaning=_cleaning(args),
                              source_column=args.source_column, with_source=args.with_source,
                              model_revision=args.model_revision, model_cache=args.model_cache)


@_user_errors
def _backtranslate(args: argparse.Namespace) -> int:
    from ..corpus.translation.backtranslate import backtranslate

    summary = backtranslate(args.inputs, args.output, args.model, _translation(args), _run(args),
                            member_pattern=args.member, strict=args.strict, overwrite=args.overwrite)
    _print_summary(summary, args.output, "lines")
    return 0


@_user_errors
def _make(args: argparse.Namespace) -> int:
    from ..corpus.make import DatasetOptions, make_paranmt
    from ..corpus.measures.registry import MeasureContext

    card = {k: v for k, v in {"repo_id": args.repo_id, "pretty_name": args.pretty_name,
                              "license_name": args.license}.items() if v is not None}
    context = MeasureContext(tokenizer=args.tokenizer, encoder=args.scorer, language_model=args.language_model,
                             classifier=args.classifier, langid_model=args.langid_model)
    dataset = DatasetOptions(dedup=None if args.dedup == "off" else args.dedup, config=args.config_name,
                             shard_rows=args.shard_rows, card=card, allow_empty=args.allow_empty)
    summary = make_paranmt(args.inputs, args.output, args.model, translation=_translation(args),
                           measures=args.measure or (), measure_context=context,
                           filter_options=_filter_options(args) if args.filter_name else None, dataset=dataset,
                           run=_run(args), member_pattern=args.member, strict=args.strict, overwrite=args.overwrite)
    _print_summary(summary, args.output, "lines")
    if summary.complete:
        print(f"card: {Path(args.output) / 'README.md'}")
    return 0


@_user_errors
def _annotate(args: argparse.Namespace) -> int:
    from ..corpus.annotate import annotate_corpus

    summary = annotate_corpus(args.inputs, args.output, args.model, _run(args), measures=args.measure or (),
                              fmt=args.format, strict=args.strict, overlap=not args.no_overlap,
                              tokenizer=args.tokenizer, batch_size=args.batch_size, member_pattern=args.member,
                              language_model=args.language_model, classifier=args.classifier,
                              langid_model=args.langid_model, trust_remote_code=args.trust_remote_code,
                              overwrite=args.overwrite)
    _print_summary(summary, args.output)
    return 0


@_user_errors
def _filter(args: argparse.Namespace) -> int:
    from ..corpus.selection.filtering import filter_corpus

    summary = filter_corpus(args.inputs, args.output, _filter_options(args), _run(args), fmt=args.format,
                            with_overlap=args.with_overlap, member_pattern=args.member, overwrite=args.overwrite)
    _print_summary(summary, args.output)
    return 0


@_user_errors
def _dedup(args: argparse.Namespace) -> int:
    from ..corpus.selection.dedup import dedup_files

    summary = dedup_files(args.inputs, args.output, _run(args), fmt=args.format, keep=args.keep, key=args.key,
                          strict=args.strict, member_pattern=args.member, overwrite=args.overwrite)
    _print_summary(summary, args.output)
    return 0


@_user_errors
def _histogram(args: argparse.Namespace) -> int:
    from ..corpus.output.histogram import corpus_histogram, format_table3

    result, summary = corpus_histogram(args.inputs, _run(args), output=args.json, plot=args.plot, limit=args.limit,
                                       fmt=args.format, strict=args.strict, tokenizer=args.tokenizer,
                                       member_pattern=args.member, overwrite=args.overwrite)
    if summary is not None:
        print(summary.line(), file=sys.stderr)
    print(json.dumps(result, indent=2) if args.print_json else format_table3(result))
    return 0


@_user_errors
def _export(args: argparse.Namespace) -> int:
    from ..corpus.output.export import config_options, export_files

    filter_options = _filter_options(args) if "filtered" in args.config else None
    configs = config_options(args.config, filter_options, strict=args.strict, tokenizer=args.tokenizer)
    card = {"repo_id": args.repo_id, "kind": args.card, "pretty_name": args.pretty_name, "license_name": args.license}
    exported, summaries = export_files(args.inputs, args.output, configs, _run(args), shard_rows=args.shard_rows,
                                       member_pattern=args.member, overwrite=args.overwrite,
                                       card={k: v for k, v in card.items() if v is not None})
    if not exported:
        _print_summary(next(iter(summaries.values())), args.output)
        return 0
    for c in exported:
        print(f"{c.name}: {c.rows:,} rows in {len(c.files)} file(s); " + summaries[c.name].line("lines"),
              file=sys.stderr)
    print(f"card: {Path(args.output) / 'README.md'}")
    return 0


@_user_errors
def _merge(args: argparse.Namespace) -> int:
    from ..corpus.pipeline.runner import merge_job

    summary = merge_job(args.output, work_dir=args.work_dir, overwrite=args.overwrite)
    print(summary.line(), file=sys.stderr)
    print(f"wrote {args.output}")
    return 0


@_user_errors
def _lexicon(args: argparse.Namespace) -> int:
    from ..corpus.output.lexicon import lexicon_report

    report = lexicon_report(args.inputs, args.word or (), top=args.top, kind=args.score, min_count=args.min_count,
                            min_score=args.min_score, max_tokens=args.max_tokens, simlex=args.simlex,
                            output=args.json, fmt=args.format, strict=args.strict, member_pattern=args.member,
                            progress=not args.no_progress, overwrite=args.overwrite)
    for word, top in report.get("top", {}).items():
        print(f"{word}: " + ", ".join(f"{v} ({s:.2f})" for v, s in top))
    if "simlex" in report:
        print(json.dumps(report["simlex"], indent=2))
    return 0


@_user_errors
def _pivot(args: argparse.Namespace) -> int:
    from ..corpus.output.pivot import PivotStats, pivot_files
    from ..data.writer import write_pairs
    from ..utils.atomic import atomic_output, check_output

    check_output(args.output, args.inputs, args.overwrite, directory=False)
    stats = PivotStats()
    options = {} if args.english_first is None else {"english_first": args.english_first == "yes"}
    pairs = pivot_files(args.inputs, max_group=args.max_group, stats=stats, progress=not args.no_progress, **options)
    with atomic_output(args.output, args.inputs, args.overwrite) as tmp:
        write_pairs(({"text_a": a, "text_b": b} for a, b in pairs), tmp, ("text_a", "text_b"))
    print(f"read {stats.bitext_pairs:,} translation pairs: {stats.groups:,} foreign sentences with 2+ English "
          f"translations -> {stats.pairs:,} English paraphrase pairs in {args.output}"
          + (f" ({stats.capped_groups:,} groups capped at {args.max_group})" if stats.capped_groups else ""))
    return 0


def _translation_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("translation")
    group.add_argument("--model", required=True,
                       help="transformers seq2seq translation model into English, Hub id or folder: e.g. "
                            "Helsinki-NLP/opus-mt-cs-en (Marian), facebook/nllb-200-distilled-600M (with "
                            "--source-lang ces_Latn --target-lang eng_Latn), facebook/m2m100_418M (cs / en)")
    group.add_argument("--source-column", type=int, choices=[1, 2], default=None,
                       help="the non-English column (default: from en-xx / xx-en file names)")
    group.add_argument("--source-lang", default=None, help="NLLB / M2M100 / mBART: code of the source language")
    group.add_argument("--target-lang", default=None, help="NLLB / M2M100 / mBART: code of English (eng_Latn, en)")
    add_decoding_flags(
        group,
        num_beams="beam width (EMNLP 2017: 50; ACL 2018: 12; default: the model's generation config, or 1 with "
                  "--do-sample: independent samples)",
        num_return="candidates kept per sentence, best first (EMNLP 2017: the n-best list, e.g. equal to "
                   "--num-beams; ACL 2018: 1, the default)",
        do_sample="sample instead of beam search: --num-return independent samples per sentence (beam 1, unless "
                  "--num-beams is given: beam sampling, transformers engine only)",
        max_new_tokens="most tokens generated per candidate, a forced language token and the end token included "
                       "(default: the model's generation config, capped at its positions); no end token is forced "
                       "at the cap: a candidate cut there is counted unfinished",
        seed="sampling seed (per chunk: any task count samples the same)")
    group.add_argument("--max-length", type=int, default=None,
                       help="longest source in tokens; longer ones are truncated and counted (default: the model's "
                            "limit)")
    group.add_argument("--batch-tokens", type=int, default=None,
                       help="token budget per batch: sentences x longest source x max(beams, candidates) "
                            "(sentences are sorted by length; default: 16384 on CPU, scaled to the GPU's memory "
                            "and the model's size on CUDA)")
    from ..corpus.translation.engines import ENGINES

    group.add_argument("--engine", default=next(iter(ENGINES)), choices=list(ENGINES),
                       help=f"the translation engine (default: {next(iter(ENGINES))}); "
                            + "; ".join(f"{name} {cls.summary}" for name, cls in ENGINES.items()))
    group.add_argument("--compute-type", default=None,
                       help="ctranslate2: int8 (CPU default), float32, int8_float32, float16 (GPU default)...")
    group.add_argument("--inter-threads", type=int, default=None,
                       help="ctranslate2: batches each task decodes in parallel, sharing its --threads (default 1)")
    group.add_argument("--device", default="auto",
                       help="auto (default: each task its own visible GPU, cuda:{task rank mod GPUs}, else the CPU), "
                            "cpu, cuda (the same, but no GPU is an error) or cuda:N")
    group.add_argument("--dtype", default=None,
                       help="transformers: weight dtype: float32 (default), bfloat16 or float16. float32 by "
                            "measurement: an opus-mt-sized model generated faster in float32 than in half precision "
                            "on an H200 (benchmarks/backtranslation); half precision pays off for larger models")
    group.add_argument("--trust-remote-code", action="store_true", help="run code from the model folder")
    group.add_argument("--with-source", action="store_true", help="add the source sentence as a fourth column")
    group.add_argument("--model-revision", default=None,
                       help="Hub revision (branch, tag or commit) of a Hub --model, pinned to its commit once")
    group.add_argument("--model-cache", default=None, metavar="DIR",
                       help="where the model is copied (and converted for CTranslate2) once per content, for every "
                            "task to read (default: the run's work folder; a shared folder on a cluster)")
    group = parser.add_argument_group("cleaning before decoding")
    group.add_argument("--no-source-dedup", action="store_true",
                       help="decode every line, even a source already decoded elsewhere in the run")
    group.add_argument("--min-reference-tokens", type=int, default=None,
                       help="drop lines whose English reference has fewer whitespace tokens, before decoding")
    group.add_argument("--max-reference-tokens", type=int, default=None,
                       help="drop lines whose English reference has more whitespace tokens, before decoding "
                            "(default: what the filter drops anyway; backtranslate: the PRAS filter's 79)")
    group.add_argument("--source-language", default=None, metavar="CODE",
                       help="drop lines whose source fastText lid.176 does not label CODE (e.g. cs), before "
                            "decoding")
    group.add_argument("--no-source-cleaning", action="store_true",
                       help="remove nothing before decoding (every line decoded, as the filters see it)")


def add_parser(subparsers: Any) -> None:
    """Register ``paranmt-hf corpus`` and its sub-commands."""
    parser = subparsers.add_parser(
        "corpus", help="make and select paraphrase pairs: backtranslate, annotate, filter, dedup, histogram, "
                       "export, make, merge, lexicon, pivot",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="corpus_command", metavar="TOOL", required=True)

    p = sub.add_parser(
        "backtranslate", help="translate the non-English side of a bitext into English pairs (ParaNMT's recipe)",
        description="Translate the non-English column of a bitext into English and pair each candidate with the "
                    "English reference. Output: a header line, then reference TAB back-translation TAB "
                    "translation_cost [TAB source], one line per candidate. EMNLP 2017: --num-beams 50 --num-return "
                    "50; ACL 2018: --num-beams 12 --num-return 1.")
    p.add_argument("inputs", nargs="+", help="bitext files: two tab-separated columns (TSV / TSV.gz / zip)")
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz)")
    p.add_argument("--member", default=None, help="glob of the zip member(s) to read (default: every file)")
    p.add_argument("--strict", action="store_true",
                   help="fail on the first bad line (wrong number of columns, empty side) instead of counting it")
    _translation_args(p)
    _run_options(p, chunk_default="64 KiB")
    p.set_defaults(func=_backtranslate)

    from ..corpus.measures.registry import MEASURES  # numpy only

    computable = [m for m, s in MEASURES.items() if s.compute]
    p = sub.add_parser(
        "make", help="a ParaNMT from a bitext in one run: back-translate, annotate, filter, de-duplicate, export",
        description="Back-translate the non-English side of a bitext, add the columns (translation_cost, "
                    "trigram_overlap, the --scorer's paraphrase_score, --measure ...), keep the pairs --filter "
                    "passes, remove duplicates across all tasks, and write a Hub-ready folder (Parquet + card) "
                    "that datasets.load_dataset(folder, CONFIG) reads. E.g. EMNLP 2017's setting: --num-beams 50 "
                    "--num-return 50 --filter thresholds --bound translation_length=0:10; ACL 2018's: "
                    "--num-beams 12 --scorer MODEL --filter acl2018 --min-score 0.5 --max-tokens 30.")
    p.add_argument("inputs", nargs="+", help="bitext files: two tab-separated columns (TSV / TSV.gz / zip)")
    p.add_argument("-o", "--output", required=True, help="folder to write")
    p.add_argument("--member", default=None, help="glob of the zip member(s) to read (default: every file)")
    p.add_argument("--strict", action="store_true", help="fail on the first bad line instead of counting it")
    _translation_args(p)
    group = p.add_argument_group("pairs")
    group.add_argument("--scorer", default=None,
                       help="paranmt_hf model folder or Hub id whose cosine is the paraphrase_score column")
    group.add_argument("--measure", action="append", default=None, choices=computable,
                       help="add this column (repeatable), e.g. bleu, unigram_overlap, lm_perplexity")
    group.add_argument("--dedup", default="first", choices=["first", "none", "off"],
                       help="first: keep one copy of each pair (default); none: drop every copy; off: keep all")
    group.add_argument("--config", dest="config_name", default="pairs", help="the exported config's name")
    group.add_argument("--shard-rows", type=int, default=1_000_000, help="rows per Parquet file (per task)")
    group.add_argument("--repo-id", default=None, help="Hub repository named in the card's snippet")
    group.add_argument("--pretty-name", default=None, help="the card's title")
    group.add_argument("--license", default=None, help="the card's licence id (default: unknown)")
    group.add_argument("--allow-empty", action="store_true",
                       help="write the folder even when no pair is kept (else an error, the work folder kept)")
    _filter_args(p, default=None)
    _run_options(p, chunk_default="64 KiB")
    p.set_defaults(func=_make)

    p = sub.add_parser("annotate", help="add columns to pairs: paraphrase_score (a model's cosine), trigram_overlap "
                                        "and any measure (bleu, unigram_overlap, lm_perplexity...)")
    _inputs(p)
    p.add_argument("-o", "--output", required=True,
                   help="output TSV(.gz): text_a, text_b, score[, overlap] for para-nmt-50m-like input; with a "
                        "header line for input with one or with --measure")
    p.add_argument("--model", help="paranmt_hf model folder or Hub id whose cosine is the paraphrase score (ACL 2018 "
                                   "used PARAGRAM-PHRASE: e.g. a converted ParaNMT-50M WORD model)")
    p.add_argument("--measure", action="append", default=None, choices=[m for m, s in MEASURES.items() if s.compute],
                   help="add this column (repeatable); EMNLP 2017's: unigram_overlap, bigram_overlap, bleu, "
                        "translation_length, lm_perplexity, reference_probability")
    p.add_argument("--no-overlap", action="store_true", help="no trigram_overlap column (3 columns: the "
                                                             "para-nmt-50m.txt format)")
    p.add_argument("--language-model", default=None, help="KenLM model for --measure lm_perplexity")
    p.add_argument("--classifier", default=None, help="reference classifier for --measure reference_probability")
    p.add_argument("--langid-model", default=None, help="fastText LID model for --measure english")
    p.add_argument("--trust-remote-code", action="store_true", help="run code from the --model folder")
    _tokenizer_arg(p)
    p.add_argument("--batch-size", type=int, default=8192, help="sentences per forward pass of --model")
    _run_options(p)
    p.set_defaults(func=_annotate)

    p = sub.add_parser("filter", help="keep the pairs a filter passes: PRAS, ACL 2018's recipe, or thresholds on "
                                      "any column (EMNLP 2017)")
    _inputs(p, "paranmt")
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): the kept lines, unchanged")
    p.add_argument("--with-overlap", action="store_true", help="append the trigram overlap to lines without one")
    _filter_args(p)
    _run_options(p)
    p.set_defaults(func=_filter)

    p = sub.add_parser("dedup", help="remove duplicate pairs, across all tasks, keeping the first copy (or none, as "
                                     "`sort | uniq -u`)")
    _inputs(p)
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): the kept lines, unchanged, in input order")
    p.add_argument("--keep", default="first", choices=["first", "none"],
                   help="first: one copy of each pair; none: drop every copy (the PRAS pipeline's uniq -u)")
    p.add_argument("--key", default="pair", choices=["pair", "line"],
                   help="what makes two lines equal: pair = both texts; line = texts and score")
    _run_options(p)
    p.set_defaults(func=_dedup)

    p = sub.add_parser("histogram", help="pairs per paraphrase-score range with mean trigram overlap (ACL 2018 "
                                         "Table 3)")
    _inputs(p)
    p.add_argument("--json", help="write the histogram JSON here")
    p.add_argument("--plot", help="write a PNG bar chart here")
    p.add_argument("--print-json", action="store_true", help="print the JSON instead of the Table 3 layout")
    p.add_argument("--limit", type=int, default=None, help="read at most this many pairs (one process)")
    _tokenizer_arg(p)
    _run_options(p)
    p.set_defaults(func=_histogram)

    p = sub.add_parser("export", help="Hub-ready dataset folder: Parquet files per config + README card")
    p.add_argument("inputs", nargs="*", help="input files (default for full/filtered: the public ParaNMT-50M zip)")
    p.add_argument("--config", action="append", required=True, choices=CONFIG_NAMES,
                   help="config to export (repeat for several): full, filtered (with the filter options), "
                        "processed-5m, pairs, bitext")
    p.add_argument("-o", "--output", required=True, help="folder to write")
    p.add_argument("--member", default=None, help="glob of the zip member(s) to read (default per config)")
    p.add_argument("--strict", action="store_true", help="fail on the first bad line instead of counting it")
    p.add_argument("--repo-id", default="your-name/paranmt-50m", help="Hub repository named in the card's snippet")
    p.add_argument("--card", default=None, choices=["paranmt", "own"],
                   help="the card: paranmt = ParaNMT-50M (CzEng licence, the authors' sources); own = your own "
                        "pairs (default: paranmt when the inputs are ParaNMT-50M's files, else own)")
    p.add_argument("--pretty-name", default=None, help="the card's title")
    p.add_argument("--license", default=None, help="the card's licence id for your own pairs (default: unknown)")
    p.add_argument("--shard-rows", type=int, default=1_000_000, help="rows per Parquet file")
    _filter_args(p)
    _run_options(p)
    p.set_defaults(func=_export)

    p = sub.add_parser("merge", help="write the output of a run whose tasks ran separately (--local-tasks)")
    p.add_argument("-o", "--output", required=True, help="the output the tasks were asked to write")
    p.add_argument("--work-dir", default=None, help="the run's work folder (default: next to the output)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.set_defaults(func=_merge)

    p = sub.add_parser("lexicon", help="paraphrase lexicon by cross-sentence / adjusted PMI (ACL 2018 A.1)")
    _inputs(p)
    p.add_argument("--word", action="append", help="list the top paraphrases of this word (repeatable)")
    p.add_argument("--top", type=int, default=20, help="how many paraphrases to list per word")
    p.add_argument("--score", default="adjusted", choices=["adjusted", "cross"],
                   help="ranking: adjusted PMI (ACL 2018 A.1, default) or cross-sentence PMI")
    p.add_argument("--min-count", type=int, default=1, help="only paraphrases seen this often across pairs")
    p.add_argument("--min-score", type=float, default=0.35, help="drop pairs scored below (ACL 2018: 0.35)")
    p.add_argument("--max-tokens", type=int, default=30, help="drop pairs with a longer side (ACL 2018: 30)")
    p.add_argument("--simlex", help="SimLex-999.txt: report Spearman's rho")
    p.add_argument("--json", help="write results JSON here")
    p.add_argument("--overwrite", action="store_true", help="replace an existing JSON")
    p.add_argument("--no-progress", "--quiet", dest="no_progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_lexicon)

    p = sub.add_parser("pivot", help="English paraphrase pairs from X-English bitext: translations of one sentence")
    p.add_argument("inputs", nargs="+", help="X-English bitext files, one language each (en-xx / xx-en in the name)")
    p.add_argument("-o", "--output", required=True, help="output TSV(.gz): english_a, english_b")
    p.add_argument("--max-group", type=int, default=10, help="pair at most N English sentences per foreign one")
    p.add_argument("--english-first", choices=["yes", "no"], default=None,
                   help="which column is English (default: from the file names)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.add_argument("--no-progress", "--quiet", dest="no_progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_pivot)

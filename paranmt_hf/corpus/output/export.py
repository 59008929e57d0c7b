"""Export configs of the ParaNMT builder as a Hub-ready dataset folder (Parquet shards + README card).

:func:`export_files` streams local files through the builder's row code
(:class:`~paranmt_hf.corpus.output.rows.RowMaker`) as datatrove stages (:mod:`paranmt_hf.corpus.pipeline.runner`):
every task turns its chunks of lines into Arrow tables and appends them to its own Parquet files (memory stays
bounded by a chunk); the merge checks them, writes their rows in task order as ``data/<config>/`` shards of
``shard_rows`` rows (the same bytes for any number of tasks, resumed or not) and writes the card. The folder is
written under a temporary name and renamed into place when complete. :func:`export_hub_folder` does the same for
any iterable datasets (e.g. from :func:`paranmt_hf.load_paranmt`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ...data.configs import CONFIGS, ConfigOptions, get_config
from ...utils.atomic import atomic_output
from ...utils.imports import require
from ..pipeline.steps import CorpusStep
from .rows import RowMaker

TASK_RECORD = "rows.json"
"""The file, in each task's Parquet folder, that lists the task's files and their row counts."""


@dataclass
class ExportedConfig:
    """One exported config: its name, shard files, row count and column names."""

    name: str
    files: list[Path] = field(default_factory=list)
    rows: int = 0
    columns: list[str] = field(default_factory=list)


class ParquetShards:
    """Append Arrow tables to ``out_dir/train-NNNNN.parquet`` files of at most ``shard_rows`` rows.

    Each file is written under a per-attempt temporary name and renamed into place when it is closed
    (:func:`~paranmt_hf.corpus.pipeline.task_process.publish`: only while the run that started the task is alive), so
    a task run again while an orphan of a killed run still writes never shares a file with it.
    """

    def __init__(self, out_dir: str | os.PathLike[str], schema: Any, shard_rows: int = 1_000_000,
                 empty_file: bool = True) -> None:
        self.pq = require("pyarrow.parquet", "data")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for old in self.out_dir.glob("train-*.parquet"):  # a config re-exported into an existing folder
            old.unlink()
        self.schema, self.shard_rows, self.empty_file = schema, shard_rows, empty_file
        self.files: list[Path] = []
        self.file_rows: list[int] = []
        self.rows = 0
        self._writer: Any = None
        self._tmp: Path | None = None
        self._in_shard = 0

    def _publish(self) -> None:
        """Close the open file and rename it into place."""
        from ..pipeline.task_process import publish

        self._writer.close()
        self._writer = None
        tmp, self._tmp = self._tmp, None
        publish(tmp, self.files[-1])

    def write(self, table: Any) -> None:
        """Append ``table`` (split across files at ``shard_rows``)."""
        start = 0
        while start < table.num_rows:
            if self._writer is None:
                from ...utils.atomic import attempt_temp

                self.files.append(self.out_dir / f"train-{len(self.files):05d}.parquet")
                self.file_rows.append(0)
                self._tmp = attempt_temp(self.files[-1])
                self._writer = self.pq.ParquetWriter(self._tmp, self.schema)
            take = min(table.num_rows - start, self.shard_rows - self._in_shard)
            self._writer.write_table(table.slice(start, take))
            start += take
            self._in_shard += take
            self.rows += take
            self.file_rows[-1] += take
            if self._in_shard >= self.shard_rows:
                self._publish()
                self._in_shard = 0

    def close(self) -> list[Path]:
        """Close the last file; an empty config still gets a (schema-only) file so that it loads (``empty_file``)."""
        if self._writer is not None:
            self._publish()
        if not self.files and self.empty_file:
            from ...utils.atomic import attempt_temp
            from ..pipeline.task_process import publish

            self.files.append(self.out_dir / "train-00000.parquet")
            tmp = attempt_temp(self.files[-1])
            self.pq.write_table(self.schema.empty_table(), tmp)
            publish(tmp, self.files[-1])
        return self.files

    def close_task(self) -> None:
        """Close the last file and record the task's files, row counts and sizes in ``out_dir/rows.json``.

        :func:`collect_task_files` reads the record and checks every file against it.
        """
        from ..pipeline.task_process import write_file

        files = self.close()
        record = {"files": [f.name for f in files], "rows": self.file_rows,
                  "bytes": [f.stat().st_size for f in files]}
        write_file(self.out_dir / TASK_RECORD, json.dumps(record))


def write_parquet_shards(
    rows: Iterable[Mapping[str, Any]],
    features: Any,
    out_dir: str | os.PathLike[str],
    shard_rows: int = 1_000_000,
    batch_rows: int = 10_000,
    desc: str | None = None,
) -> tuple[list[Path], int]:
    """Stream ``rows`` into ``out_dir/train-NNNNN.parquet`` shards of at most ``shard_rows`` rows (constant memory).

    Returns the shard paths and the number of rows written.
    """
    pa = require("pyarrow", "data")
    shards = ParquetShards(out_dir, features.arrow_schema, shard_rows)
    batch: list[Mapping[str, Any]] = []
    for row in tqdm(rows, desc=desc or f"writing {Path(out_dir).name}", unit=" rows"):
        batch.append(row)
        if len(batch) >= batch_rows:
            shards.write(pa.Table.from_pylist(batch, schema=shards.schema))
            batch.clear()
    if batch:
        shards.write(pa.Table.from_pylist(batch, schema=shards.schema))
    return shards.close(), shards.rows


class RowsStep(CorpusStep):
    """Turn each batch into a config's rows and append them to this task's Parquet files (``folder/<rank>/``)."""

    name = "export rows"
    type = "💽 - WRITER"

    def __init__(self, config: str, options: ConfigOptions, folder: str | os.PathLike[str], paths: Sequence[str],
                 shard_rows: int = 1_000_000, bounds_file: str | None = None) -> None:
        super().__init__()
        self.config, self.options, self.folder = config, options, os.fspath(folder)
        self.paths, self.shard_rows, self.bounds_file = list(paths), shard_rows, bounds_file

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Iterator[Any]:
        """Write the task's rows; its files and row counts go to ``folder/<rank>/rows.json``."""
        from ..selection.filtering import filter_from_options

        pa = require("pyarrow", "data")
        row_filter = filter_from_options(self.options, self.bounds_file) if self.config == "filtered" else None
        rows = RowMaker(self.config, self.options, self.paths, row_filter=row_filter)
        schema = CONFIGS[self.config].features().arrow_schema
        folder = Path(self.folder) / f"{rank:05d}"
        shards = ParquetShards(folder, schema, self.shard_rows, empty_file=False)
        for batch in data or ():
            with self.track_time(unit="batch"):
                before = dict(rows.counts)
                table = pa.Table.from_pydict(rows.columns(batch.parsed), schema=schema)
                shards.write(table)
                self.count({k: v - before.get(k, 0) for k, v in rows.counts.items()})
                self.count({"rows": table.num_rows})
            yield batch
        shards.close_task()


def export_stages(spec: Any, configs: Mapping[str, ConfigOptions], shard_rows: int,
                  member_pattern: str | None = None) -> list[Any]:
    """Per config: its fold-bound stages if its filter needs them, then a stage writing its Parquet files."""
    from ..measures.columns import common_header
    from ..pipeline.runner import Stage
    from ..selection.filtering import bounds_stages

    stages = []
    for name, options in configs.items():
        spec_config = CONFIGS[name]
        member = member_pattern or options.member_pattern or spec_config.default_member
        header = common_header(spec.inputs, member)  # files whose first line names their columns: read by name
        bounds = None
        if name == "filtered":
            before, bounds = bounds_stages(spec, options, spec_config.line_format, member, prefix=f"{name}-",
                                           header=header)
            stages.extend(before)
        stages.append(Stage(f"export-{name}", [
            spec.reader(f"export-{name}", spec_config.line_format, options.strict, member, header),
            RowsStep(name, options, spec.parts_dir(name), spec.inputs, shard_rows, bounds)]))
    return stages


def config_options(names: Iterable[str], filter_options: ConfigOptions | None = None, *, strict: bool = False,
                   tokenizer: str = "nltk") -> dict[str, ConfigOptions]:
    """The options of each exported config (names of :data:`~paranmt_hf.data.configs.CONFIGS`), by what it holds.

    ``filtered`` takes ``filter_options`` (its filter and thresholds; default: the PRAS filter with ``strict`` and
    ``tokenizer``); ``full`` computes its trigram overlaps with ``tokenizer``; ``pairs`` too, for the lines that have
    none; every config reads with ``strict``.

    Raises:
        ValueError: an unknown config name.
    """
    out = {}
    for name in names:
        get_config(name)
        if name == "filtered":
            out[name] = filter_options if filter_options is not None else ConfigOptions(strict=strict,
                                                                                       tokenizer=tokenizer)
        elif name in ("full", "pairs"):
            out[name] = ConfigOptions(strict=strict, tokenizer=tokenizer, compute_overlap=name == "pairs")
        else:
            out[name] = ConfigOptions(strict=strict)
    return out


def filter_description(options: ConfigOptions) -> str:
    """The ``filtered`` config's filter for the card: its name and the options given, as JSON (no local path)."""
    given = {k: public_source(v) if isinstance(v, str) else v for k, v in vars(options).items()
             if v not in (None, ()) and k not in ("strict", "paths", "signature")}
    return "`" + json.dumps(given) + "`"


def public_source(source: str) -> str:
    """A source as a card names it: a local path by its file name (never this machine's), anything else as given.

    A local path is an absolute one or a relative one that exists here; a URL or a Hub id (``org/name``) is kept.
    """
    text = os.fspath(source)
    if "://" in text or not (os.path.isabs(text) or os.path.exists(text)):
        return text
    return os.path.basename(text.rstrip("/" + (os.altsep or ""))) or text


ROW_GROUP_ROWS = 65_536
"""Rows per Parquet row group of a merged folder (fewer when ``shard_rows`` is smaller)."""


def checked_task_files(parts_dir: Path, tasks: int) -> list[tuple[Path, int]]:
    """The Parquet files of ``tasks`` tasks in ``parts_dir/<rank>/``, in task order, with their row counts.

    Each task wrote them with :meth:`ParquetShards.close_task`; every file must exist with the size its task's
    record gives (a torn file, one from another attempt or a missing one is one sentence, never an output).
    """
    return [found for rank in range(tasks) for found in task_files(parts_dir, rank)]


def task_files(parts_dir: Path, rank: int) -> list[tuple[Path, int]]:
    """The Parquet files task ``rank`` wrote in ``parts_dir/<rank>/``, in order, with their row counts.

    Checked as :func:`checked_task_files` says.
    """
    from ..errors import RESTART, CorpusError, option

    folder = parts_dir / f"{rank:05d}"
    try:
        record = json.loads((folder / TASK_RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorpusError(f"the Parquet files of task {rank} ({folder}) have no record: run the same command "
                          f"again to redo the task, or with {option(*RESTART)} to start afresh") from None
    sizes = record.get("bytes") or [None] * len(record["files"])
    files = []
    for file, rows, size in zip(record["files"], record["rows"], sizes, strict=True):
        found = (folder / file).stat().st_size if (folder / file).is_file() else None
        if found is None or (size is not None and found != size):
            raise CorpusError(f"the Parquet file {folder / file} is missing, torn or foreign ({found} bytes where "
                              f"its task wrote {size}): run the command again with {option(*RESTART)}")
        files.append((folder / file, rows))
    return files


class CanonicalShards:
    """Rows written as ``target/train-NNNNN.parquet`` shards of exactly ``shard_rows`` rows (the last one shorter).

    Row groups hold :data:`ROW_GROUP_ROWS` rows: the bytes depend on the rows only, never on how they arrive.
    """

    def __init__(self, target: Path, schema: Any, shard_rows: int, done: ExportedConfig) -> None:
        self.pa, self.pq = require("pyarrow", "data"), require("pyarrow.parquet", "data")
        self.target, self.schema, self.shard_rows, self.done = target, schema, shard_rows, done
        self.group = max(1, min(shard_rows, ROW_GROUP_ROWS))
        self.writer: Any = None
        self.in_shard = 0
        self.pending: list[Any] = []
        self.pending_rows = 0

    def _next(self) -> int:
        """The size of the next row group: a full group, or what is left of the open shard."""
        return min(self.group, self.shard_rows - self.in_shard)

    def _flush(self, rows: int) -> None:
        """Write the first ``rows`` pending rows as one row group of the open shard (opening it if needed)."""
        table = self.pa.Table.from_batches(self.pending, schema=self.schema)
        if self.writer is None:
            self.done.files.append(self.target / f"train-{len(self.done.files):05d}.parquet")
            self.writer = self.pq.ParquetWriter(self.done.files[-1], self.schema)
        self.writer.write_table(table.slice(0, rows), row_group_size=rows)
        self.in_shard += rows
        self.done.rows += rows
        rest = table.slice(rows)
        self.pending, self.pending_rows = rest.to_batches(), rest.num_rows
        if self.in_shard == self.shard_rows:
            self.writer.close()
            self.writer, self.in_shard = None, 0

    def write(self, batch: Any) -> None:
        """Append a record batch."""
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        while self.pending_rows >= self._next():
            self._flush(self._next())

    def close(self) -> None:
        """Write what is pending and close the last shard."""
        while self.pending_rows:
            self._flush(min(self.pending_rows, self._next()))
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def collect_task_files(name: str, columns: Sequence[str], schema: Any, parts_dir: Path, tasks: int,
                       target: Path, shard_rows: int = 1_000_000) -> ExportedConfig:
    """Write the rows of ``tasks`` tasks' Parquet files, in task order, as ``target/train-NNNNN.parquet`` shards.

    The files are checked (:func:`checked_task_files`), then their rows written again by :class:`CanonicalShards`:
    the folder's bytes depend on the rows and ``shard_rows`` only, never on the number of tasks or on where a
    resumed run was killed. The config is ``name`` with ``columns``. With no row at all, ``target`` keeps one file of
    ``schema`` and no row, so that the config still loads.
    """
    pq = require("pyarrow.parquet", "data")
    from ..errors import RESTART, CorpusError, option

    done = ExportedConfig(name, columns=list(columns))
    target.mkdir(parents=True, exist_ok=True)
    shards = CanonicalShards(target, schema, shard_rows, done)
    for path, rows in checked_task_files(parts_dir, tasks):
        read = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=shards.group):
            shards.write(batch)
            read += batch.num_rows
        if read != rows:
            raise CorpusError(f"the Parquet file {path} holds {read} rows where its task wrote {rows}: run the "
                              f"command again with {option(*RESTART)}")
    shards.close()
    if not done.files:
        done.files.append(target / "train-00000.parquet")
        pq.write_table(schema.empty_table(), done.files[-1])
    return done


def collect_exported(spec: Any, out_dir: Path, configs: Sequence[str]) -> list[ExportedConfig]:
    """Write each config's rows, in task order, to ``out_dir/data/<config>/train-NNNNN.parquet`` shards.

    A config with no row at all keeps one schema-only file, so that it still loads.
    """
    return [collect_task_files(name, CONFIGS[name].column_names, CONFIGS[name].features().arrow_schema,
                               spec.parts_dir(name), spec.tasks, out_dir / "data" / name, spec.options.shard_rows)
            for name in configs]


def merge_export(spec: Any) -> None:
    """Write the export folder (atomically): the configs' Parquet files, ``export.json`` and the card."""
    from ..pipeline.runner import stage_report

    configs = spec.options.configs
    if all(stage_report(spec, f"export-{name}").good == 0 for name in configs):
        from ..errors import CorpusError

        raise CorpusError(f"no valid line in {', '.join(spec.inputs)}; {spec.output} was not written")
    with atomic_output(spec.output, spec.all_inputs, spec.overwrite, directory=True) as tmp:
        exported = collect_exported(spec, Path(tmp), configs)
        card = spec.options.card
        write_export_record(tmp, exported, card)
        write_card(tmp, exported, **card)


def export_files(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    configs: Mapping[str, ConfigOptions],
    run: Any = None,
    *,
    shard_rows: int = 1_000_000,
    member_pattern: str | None = None,
    overwrite: bool = False,
    card: Mapping[str, Any] | None = None,
) -> tuple[list[ExportedConfig], dict[str, Any]]:
    """Write the Hub-ready folder ``output``: ``data/<config>/train-*.parquet`` per config, ``export.json``, a card.

    Args:
        inputs: local pair files (none: the public ParaNMT-50M zip, downloaded once, for ``full`` and ``filtered``);
            files with a header are read by column name.
        output: the folder (written atomically; never holding an input; an existing one only with ``overwrite``).
        configs: ``{config name: its options}`` (names of :data:`paranmt_hf.data.configs.CONFIGS`).
        run: tasks, workers, executor, progress (:class:`~paranmt_hf.corpus.pipeline.runner.RunOptions`).
        shard_rows: rows per Parquet file of the output, whatever the number of tasks.
        member_pattern: zip member glob (default per config).
        overwrite: replace an existing folder.
        card: :func:`write_card` options (``sources`` default to the inputs' names).

    Returns:
        the exported configs (files in ``output``) and the run summary of each config.
    """
    from ..pipeline.runner import JobOptions, RunOptions, execute, make_spec, merge_stage, summarize
    from ..selection.filtering import filter_models

    run = run or RunOptions()
    card = dict(card or {})
    if not inputs:
        inputs = [_public_paranmt(configs)]
        card.setdefault("sources", [PUBLIC_ZIP])
    card.setdefault("sources", [public_source(os.fspath(p)) for p in inputs])
    if "filtered" in configs:
        card.setdefault("filter_description", filter_description(configs["filtered"]))
    settings = {name: vars(options) for name, options in configs.items()}
    spec, workers = make_spec("export", inputs, output, run, overwrite,
                              JobOptions(settings, configs=list(configs), card=card, shard_rows=shard_rows),
                              protected=[m for options in configs.values() for m in filter_models(options)])
    stages = export_stages(spec, configs, shard_rows, member_pattern)
    keep, spec.keep_work = spec.keep_work, True  # the per-config summaries are read after the merge
    summary = execute(spec, [*stages, merge_stage(merge_export, spec)], run, workers)
    summaries = {name: summarize(spec, [s for s in stages if s.name.startswith(f"export-{name}")])
                 for name in configs}
    for value in summaries.values():
        value.complete, value.seconds, value.workers = summary.complete, summary.seconds, summary.workers
    if not summary.complete:  # tasks left to run elsewhere: the folder is written by `corpus merge`
        return [], summaries
    if not keep:
        shutil.rmtree(spec.work, ignore_errors=True)
    record = json.loads((Path(output) / "export.json").read_text(encoding="utf-8"))
    exported = [ExportedConfig(c["name"], [Path(output) / f for f in c["files"]], c["rows"], c["columns"])
                for c in record["configs"]]
    return exported, summaries


PUBLIC_ZIP = "the public ParaNMT-50M zip"


def _public_paranmt(configs: Mapping[str, ConfigOptions]) -> str:
    """The public ParaNMT-50M zip (downloaded once, checksummed), for configs that read it by default."""
    others = [name for name in configs if not CONFIGS[name].default_source]
    if others:
        from ..errors import InvalidOptionError

        raise InvalidOptionError(f"the {', '.join(others)} config(s) need input files (only "
                                 f"{', '.join(n for n, c in CONFIGS.items() if c.default_source)} read "
                                 f"{PUBLIC_ZIP} by default)")
    from ...fetch import fetch_remote
    from ...fetch.registry import PARANMT_50M

    return str(fetch_remote(PARANMT_50M))


def export_hub_folder(
    out_dir: str | os.PathLike[str],
    configs: Mapping[str, Any],
    *,
    sources: Iterable[str] = (),
    filter_description: str | None = None,
    repo_id: str = "your-name/paranmt-50m",
    pretty_name: str | None = None,
    license_name: str | None = None,
    shard_rows: int = 1_000_000,
    default_config: str | None = None,
    kind: str | None = None,
) -> list[ExportedConfig]:
    """Write ``out_dir/data/<config>/train-*.parquet`` for each dataset in ``configs`` plus a ``README.md`` card.

    Args:
        out_dir: the folder to create (existing shards of the same configs are replaced).
        configs: ``{config name: datasets.IterableDataset or Dataset}``, e.g. from :func:`paranmt_hf.load_paranmt`.
        sources: where the data came from (paths/URLs), listed in the card.
        filter_description: the filter parameters of the ``filtered`` config, for the card.
        repo_id: Hub repository name used in the card's usage snippet.
        pretty_name: card title (default per card kind).
        license_name: card licence id (default per card kind, see :func:`write_card`).
        shard_rows: rows per Parquet shard.
        default_config: config marked ``default: true`` (default: the first).
        kind: the card: ``"paranmt"`` or ``"own"`` (see :func:`write_card`).

    Returns:
        one :class:`ExportedConfig` per config.
    """
    out_dir = Path(out_dir)
    exported = []
    for name, dataset in configs.items():
        files, rows = write_parquet_shards(dataset, dataset.features, out_dir / "data" / name, shard_rows,
                                           desc=f"exporting {name}")
        exported.append(ExportedConfig(name, files, rows, list(dataset.features)))
    write_card(out_dir, exported, sources=sources, filter_description=filter_description, repo_id=repo_id,
               pretty_name=pretty_name, license_name=license_name, default_config=default_config, kind=kind)
    return exported


CARD_KINDS = ("paranmt", "own")

PARANMT_COLUMNS = {
    "reference": "the English reference sentence of CzEng 1.6",
    "paraphrase": "its back-translation (Czech→English NMT)",
    "paraphrase_score": "cosine similarity of averaged PARAGRAM-PHRASE embeddings of the two sentences, as released "
                        "in `para-nmt-50m.txt` (float32)",
}
OWN_COLUMNS = {
    "reference": "the first side of each pair (for a back-translated bitext: the English reference)",
    "paraphrase": "the second side (for a back-translated bitext: the back-translation)",
    "paraphrase_score": "the input's score column: the cosine of the two sides under the model given to "
                        "`paranmt-hf corpus annotate --model` (float32)",
    "text_a": "the first side of each pair", "text_b": "the second side of each pair",
    "score": "the input's third column, if any (e.g. a paraphrase score; float32)",
    "english": "the English side of the bitext", "foreign": "the other side", "lang": "the other side's language",
    "source": "the sentence that was translated (the non-English side of the bitext)",
}
COMMON_COLUMNS = {
    "trigram_overlap": "shared word trigrams divided by the trigram count of the side with fewer (lower-cased "
                       "`nltk.word_tokenize` tokens, as `add_overlap_labels.py`; float32)",
    "reference_length": "whitespace token count of the first side (as `extract_data.py` counts it)",
    "paraphrase_length": "whitespace token count of the second side",
}
PARANMT_MEMBERS = ("para-nmt-50m", "para-nmt-5m-processed")
_PARANMT_NAME = re.compile(r"para-?nmt[-_]?(50m|5m)", re.IGNORECASE)
"""File names of ParaNMT-50M's own data: its releases (``para-nmt-50m.zip``, ``para-nmt-5m-processed.zip``) and
samples of them (the shared data's ``paranmt5m-sample-10k.tsv.gz``)."""


def paranmt_sources(sources: Iterable[str]) -> bool:
    """Whether every source is ParaNMT-50M's own data (its releases or a sample of them, by file name)."""
    sources = list(sources)
    return bool(sources) and all(_PARANMT_NAME.search(os.path.basename(str(s))) is not None or
                                 "ParaNMT-50M zip" in str(s) for s in sources)


def card_kind(sources: Iterable[str], configs: Iterable[str]) -> str:
    """``"paranmt"`` when the sources are ParaNMT-50M's own files and the configs its own, else ``"own"``."""
    return "paranmt" if paranmt_sources(sources) and set(configs) <= {"full", "filtered", "processed-5m"} else "own"


def column_description(name: str, kind: str, descriptions: Mapping[str, str] | None = None) -> str:
    """What a column holds, for the card (given ``descriptions`` first, then the card kind's, then the measures')."""
    if descriptions and name in descriptions:
        return descriptions[name]
    table = PARANMT_COLUMNS if kind == "paranmt" else OWN_COLUMNS
    if name in table:
        return table[name]
    if name in COMMON_COLUMNS:
        return COMMON_COLUMNS[name]
    from ..measures.registry import MEASURES

    if name in MEASURES:
        spec = MEASURES[name]
        return f"{spec.description} ({spec.source}; float32)"
    return ""


def write_card(
    out_dir: str | os.PathLike[str],
    exported: Sequence[ExportedConfig],
    *,
    sources: Iterable[str] = (),
    filter_description: str | None = None,
    repo_id: str = "your-name/paranmt-50m",
    pretty_name: str | None = None,
    license_name: str | None = None,
    default_config: str | None = None,
    kind: str | None = None,
    summary: str | None = None,
    built_with: str = "paranmt-hf corpus export",
    descriptions: Mapping[str, str] | None = None,
) -> Path:
    """Write ``out_dir/README.md``: the dataset card declaring the exported configs and describing their columns.

    Args:
        out_dir: the exported folder.
        exported: its configs.
        sources: where the data came from (a local path listed by its file name, :func:`public_source`).
        filter_description: the filter of the ``filtered`` config.
        repo_id: the Hub repository of the card's snippets.
        pretty_name: the title (default: ParaNMT-50M, or "Paraphrase pairs" for your own pairs).
        license_name: the licence id (default: ``other`` with CzEng 1.6 terms for ParaNMT-50M, else ``unknown``).
        default_config: the config marked ``default`` (default: the first).
        kind: ``"paranmt"`` (ParaNMT-50M's own files) or ``"own"`` (default: :func:`card_kind`).
        summary: the card's first paragraph (default per kind).
        built_with: the command named in "How it was built".
        descriptions: column descriptions overriding the defaults.
    """
    hub = require("huggingface_hub", "data")
    out_dir = Path(out_dir)
    sources = [public_source(s) for s in sources]
    kind = kind or card_kind(sources, [c.name for c in exported])
    if kind not in CARD_KINDS:
        raise ValueError(f"unknown card kind {kind!r}; choose one of {CARD_KINDS}")
    paranmt = kind == "paranmt"
    pretty_name = pretty_name or ("ParaNMT-50M" if paranmt else "Paraphrase pairs")
    czeng = paranmt or paranmt_sources(sources)  # ParaNMT-50M's data under any config: CzEng 1.6's terms
    license_name = license_name or ("other" if czeng else "unknown")
    default_config = default_config or exported[0].name
    card_configs = [
        {"config_name": c.name, "data_files": [{"split": "train", "path": f"data/{c.name}/train-*.parquet"}],
         **({"default": True} if c.name == default_config else {})}
        for c in exported
    ]
    total = sum(c.rows for c in exported)
    size = next(s for limit, s in [(1e3, "n<1K"), (1e4, "1K<n<10K"), (1e5, "10K<n<100K"), (1e6, "100K<n<1M"),
                                   (1e7, "1M<n<10M"), (1e8, "10M<n<100M"), (float("inf"), "n>100M")] if total < limit)
    card_data = hub.DatasetCardData(
        language=["en"], license=license_name,
        license_name="czeng-1.6-non-commercial" if czeng and license_name == "other" else None,
        pretty_name=pretty_name, task_categories=["sentence-similarity", "text-generation"],
        tags=["paraphrase", "sentence-embeddings", "back-translation", *(["paranmt"] if paranmt else [])],
        size_categories=[size], configs=card_configs,
    )
    from ..._version import __version__

    if summary is None:
        summary = ("English-English sentential paraphrase pairs made by back-translating the Czech side of CzEng 1.6 "
                   "(Wieting & Gimpel, ACL 2018), with the filters of the later papers as configs." if paranmt else
                   "English sentence pairs exported with paranmt_hf from the sources listed below.")
    columns = list(dict.fromkeys(x for c in exported for x in c.columns))
    template = resources.files("paranmt_hf.hub_cards").joinpath("dataset_card.md").read_text(encoding="utf-8")
    card = hub.DatasetCard.from_template(
        card_data, template_str=template, pretty_name=pretty_name, repo_id=repo_id, default_config=default_config,
        summary=summary, paranmt=paranmt,
        config_rows=[{"name": c.name, "rows": c.rows, "columns": ", ".join(f"`{x}`" for x in c.columns),
                      "description": CONFIGS[c.name].description if c.name in CONFIGS else ""}
                     for c in exported],
        columns=[{"name": x, "description": column_description(x, kind, descriptions)} for x in columns],
        sources=sources, filter_description=filter_description, version=__version__, built_with=built_with,
        license_name="CzEng 1.6 licence: non-commercial research and education" if czeng else license_name,
    )
    card.save(out_dir / "README.md")
    return out_dir / "README.md"


def write_export_record(out_dir: str | os.PathLike[str], exported: Sequence[ExportedConfig],
                        card: Mapping[str, Any]) -> Path:
    """``export.json``: the configs' files, rows and columns and the card options (what a merge reads)."""
    out_dir = Path(out_dir)
    value = {"configs": [{"name": c.name, "rows": c.rows, "columns": c.columns,
                          "files": [str(Path(f).relative_to(out_dir)) for f in c.files]} for c in exported],
             "card": {**card, "sources": [public_source(s) for s in card.get("sources", ())]}}
    path = out_dir / "export.json"
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    return path

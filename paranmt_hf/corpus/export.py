"""Export configs of the ParaNMT builder as a Hub-ready dataset folder (Parquet shards + README card).

:func:`export_files` streams local files through the builder's row code (:class:`~paranmt_hf.corpus.rows.RowMaker`)
on every core: workers turn blocks of lines into Arrow tables, the main process appends them to Parquet files of
``shard_rows`` rows, so memory stays bounded by a few blocks. The folder is written under a temporary name and
renamed into place when complete. :func:`export_hub_folder` does the same for any iterable datasets (e.g. from
:func:`paranmt_hf.load_paranmt`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..data.configs import CONFIGS, ConfigOptions
from ..data.reader import Block
from ..data.records import parse_block
from ..utils.atomic import atomic_output
from ..utils.imports import require
from .output import sum_counts
from .pipeline import BlockResult, BlockTask, RunSettings, Summary, run_blocks
from .rows import RowMaker


@dataclass
class ExportedConfig:
    """One exported config: its name, shard files, row count and column names."""

    name: str
    files: list[Path] = field(default_factory=list)
    rows: int = 0
    columns: list[str] = field(default_factory=list)


class ParquetShards:
    """Append Arrow tables to ``out_dir/train-NNNNN.parquet`` files of at most ``shard_rows`` rows."""

    def __init__(self, out_dir: str | os.PathLike[str], schema: Any, shard_rows: int = 1_000_000) -> None:
        self.pq = require("pyarrow.parquet", "data")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for old in self.out_dir.glob("train-*.parquet"):  # a config re-exported into an existing folder
            old.unlink()
        self.schema, self.shard_rows = schema, shard_rows
        self.files: list[Path] = []
        self.rows = 0
        self._writer: Any = None
        self._in_shard = 0

    def write(self, table: Any) -> None:
        """Append ``table`` (split across files at ``shard_rows``)."""
        start = 0
        while start < table.num_rows:
            if self._writer is None:
                self.files.append(self.out_dir / f"train-{len(self.files):05d}.parquet")
                self._writer = self.pq.ParquetWriter(self.files[-1], self.schema)
            take = min(table.num_rows - start, self.shard_rows - self._in_shard)
            self._writer.write_table(table.slice(start, take))
            start += take
            self._in_shard += take
            self.rows += take
            if self._in_shard >= self.shard_rows:
                self._writer.close()
                self._writer, self._in_shard = None, 0

    def close(self) -> list[Path]:
        """Close the last file; an empty config still gets a (schema-only) file so that it loads."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if not self.files:
            self.files.append(self.out_dir / "train-00000.parquet")
            self.pq.write_table(self.schema.empty_table(), self.files[-1])
        return self.files


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


@dataclass
class RowsTask(BlockTask):
    """One block's rows of a config, as Arrow IPC bytes (the payload)."""

    config: str
    options: ConfigOptions
    paths: tuple[str, ...] = ()
    row_filter: Any = None

    def setup(self) -> None:
        """Load what the blocks need (once per process)."""
        self._rows = RowMaker(self.config, self.options, self.paths, row_filter=self.row_filter)

    def __call__(self, block: Block) -> BlockResult:
        """The result of one block."""
        pa = require("pyarrow", "data")
        parsed = parse_block(block, CONFIGS[self.config].line_format, self.options.strict)
        before = dict(self._rows.counts)
        columns = self._rows.columns(parsed)
        table = pa.Table.from_pydict(columns, schema=CONFIGS[self.config].features().arrow_schema)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        counts = Counter({k: v - before.get(k, 0) for k, v in self._rows.counts.items()})
        counts["rows"] = table.num_rows
        return BlockResult(sink.getvalue().to_pybytes(), block.lines, +counts, parsed.report)


def export_files(
    inputs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    configs: Mapping[str, ConfigOptions],
    settings: RunSettings | None = None,
    *,
    shard_rows: int = 1_000_000,
    member_pattern: str | None = None,
) -> tuple[list[ExportedConfig], dict[str, Summary]]:
    """Write ``out_dir/data/<config>/train-*.parquet`` for each config from local ``inputs`` (no card).

    Args:
        inputs: local pair files.
        out_dir: the folder to write into (it must exist; use :func:`paranmt_hf.utils.atomic.atomic_output`).
        configs: ``{config name: its options}``.
        settings: processes, shard (export only its lines), block size, progress.
        shard_rows: rows per Parquet file.
        member_pattern: zip member glob (default per config).
    """
    from .filtering import build_filter

    pa = require("pyarrow", "data")
    exported, summaries = [], {}
    for name, options in configs.items():
        spec = CONFIGS[name]
        member = member_pattern or options.member_pattern or spec.default_member
        row_filter = build_filter(options, inputs, spec.line_format, member, settings) \
            if name == "filtered" else None
        files = ParquetShards(Path(out_dir) / "data" / name, spec.features().arrow_schema, shard_rows)
        task = RowsTask(name, options, tuple(os.fspath(p) for p in inputs), row_filter)

        def write(result: BlockResult, files: ParquetShards = files) -> None:
            files.write(pa.ipc.open_stream(result.payload).read_all())

        summaries[name] = run_blocks(inputs, task, write, settings, member_pattern=member, desc=f"export {name}")
        exported.append(ExportedConfig(name, files.close(), files.rows, spec.column_names))
    return exported, summaries


def export_hub_folder(
    out_dir: str | os.PathLike[str],
    configs: Mapping[str, Any],
    *,
    sources: Iterable[str] = (),
    filter_description: str | None = None,
    repo_id: str = "your-name/paranmt-50m",
    pretty_name: str = "ParaNMT-50M",
    license_name: str = "other",
    shard_rows: int = 1_000_000,
    default_config: str | None = None,
) -> list[ExportedConfig]:
    """Write ``out_dir/data/<config>/train-*.parquet`` for each dataset in ``configs`` plus a ``README.md`` card.

    Args:
        out_dir: the folder to create (existing shards of the same configs are replaced).
        configs: ``{config name: datasets.IterableDataset or Dataset}`` (anything with ``features`` that iterates
            over row dicts), e.g. from :func:`paranmt_hf.load_paranmt`.
        sources: where the data came from (paths/URLs), listed in the card.
        filter_description: the filter parameters of the ``filtered`` config, for the card.
        repo_id: Hub repository name used in the card's usage snippet.
        pretty_name: card title.
        license_name: card licence id (the CzEng-derived data is non-commercial: ``other``).
        shard_rows: rows per Parquet shard.
        default_config: config marked ``default: true`` (default: the first).

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
               pretty_name=pretty_name, license_name=license_name, default_config=default_config)
    return exported


def write_card(
    out_dir: str | os.PathLike[str],
    exported: Sequence[ExportedConfig],
    *,
    sources: Iterable[str] = (),
    filter_description: str | None = None,
    repo_id: str = "your-name/paranmt-50m",
    pretty_name: str = "ParaNMT-50M",
    license_name: str = "other",
    default_config: str | None = None,
) -> Path:
    """Write ``out_dir/README.md``: the dataset card declaring the exported configs (see :func:`export_hub_folder`)."""
    hub = require("huggingface_hub", "data")
    out_dir = Path(out_dir)
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
        language=["en"], license=license_name, license_name="czeng-1.6-non-commercial" if license_name == "other"
        else None, pretty_name=pretty_name, task_categories=["sentence-similarity", "text-generation"],
        tags=["paraphrase", "paranmt", "sentence-embeddings", "back-translation"], size_categories=[size],
        configs=card_configs,
    )
    from .._version import __version__

    template = resources.files("paranmt_hf.hub_cards").joinpath("dataset_card.md").read_text(encoding="utf-8")
    card = hub.DatasetCard.from_template(
        card_data, template_str=template, pretty_name=pretty_name, repo_id=repo_id, default_config=default_config,
        summary=("English-English sentential paraphrase pairs made by back-translating the Czech side of CzEng 1.6 "
                 "(Wieting & Gimpel, ACL 2018), with the filters of the later papers as configs."),
        config_rows=[{"name": c.name, "rows": c.rows, "columns": ", ".join(f"`{x}`" for x in c.columns),
                      "description": CONFIGS[c.name].description if c.name in CONFIGS else ""}
                     for c in exported],
        sources=list(sources), filter_description=filter_description, version=__version__,
        license_name="CzEng 1.6 licence: non-commercial research and education",
    )
    card.save(out_dir / "README.md")
    return out_dir / "README.md"


def merge_exports(output: str | os.PathLike[str], shards: Sequence[tuple[Path, dict[str, Any]]],
                  overwrite: bool = False) -> dict[str, Any]:
    """Join the export folders of a sharded run into ``output``.

    Each config's Parquet files are taken in shard order (hard links where possible, renumbered), and the card is
    written again with the total row counts (and the shards' own card options).
    """
    with atomic_output(output, inputs=[p for p, _ in shards], overwrite=overwrite, directory=True) as tmp:
        exported: dict[str, ExportedConfig] = {}
        for folder, _ in shards:
            meta = json.loads((folder / "export.json").read_text(encoding="utf-8"))
            for config in meta["configs"]:
                name = config["name"]
                done = exported.setdefault(name, ExportedConfig(name, columns=config["columns"]))
                target = Path(tmp) / "data" / name
                target.mkdir(parents=True, exist_ok=True)
                if not config["rows"] and (done.files or folder != shards[-1][0]):
                    continue  # a shard's schema-only file: kept only when no shard has rows of this config
                for file in config["files"]:
                    dest = target / f"train-{len(done.files):05d}.parquet"
                    try:
                        os.link(folder / file, dest)
                    except OSError:
                        shutil.copyfile(folder / file, dest)
                    done.files.append(dest)
                done.rows += config["rows"]
        card = json.loads((shards[0][0] / "export.json").read_text(encoding="utf-8"))["card"]
        write_card(tmp, list(exported.values()), **card)
        write_export_record(tmp, list(exported.values()), card)
    return sum_counts([m for _, m in shards])


def write_export_record(out_dir: str | os.PathLike[str], exported: Sequence[ExportedConfig],
                        card: Mapping[str, Any]) -> Path:
    """``export.json``: the configs' files, rows and columns and the card options (what a merge reads)."""
    out_dir = Path(out_dir)
    value = {"configs": [{"name": c.name, "rows": c.rows, "columns": c.columns,
                          "files": [str(Path(f).relative_to(out_dir)) for f in c.files]} for c in exported],
             "card": dict(card)}
    path = out_dir / "export.json"
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    return path

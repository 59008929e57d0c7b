"""Export configs of the ParaNMT builder as a Hub-ready dataset folder (Parquet shards + README card)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..utils.imports import require

CONFIG_DESCRIPTIONS = {
    "full": "all of para-nmt-50m.txt, with trigram overlap and token lengths",
    "filtered": "the training filter (see below)",
    "processed-5m": "the filtered, tokenised 5M release (no score)",
    "pairs": "generic sentence pairs",
    "bitext": "X-English sentence pairs",
}


@dataclass
class ExportedConfig:
    """One exported config: its name, shard files, row count and column names."""

    name: str
    files: list[Path] = field(default_factory=list)
    rows: int = 0
    columns: list[str] = field(default_factory=list)


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
    pq = require("pyarrow.parquet", "data")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("train-*.parquet"):
        old.unlink()
    schema = features.arrow_schema
    files: list[Path] = []
    writer = None
    in_shard = total = 0
    batch: list[Mapping[str, Any]] = []

    def flush() -> None:
        nonlocal writer, in_shard
        if not batch:
            return
        if writer is None:
            files.append(out_dir / f"train-{len(files):05d}.parquet")
            writer = pq.ParquetWriter(files[-1], schema)
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        in_shard += len(batch)
        batch.clear()
        if in_shard >= shard_rows:
            writer.close()
            writer, in_shard = None, 0

    for row in tqdm(rows, desc=desc or f"writing {out_dir.name}", unit=" rows"):
        batch.append(row)
        total += 1
        if len(batch) >= min(batch_rows, shard_rows - in_shard):
            flush()
    flush()
    if writer is not None:
        writer.close()
    if not files:  # an empty config still gets a (schema-only) shard so that it loads
        files.append(out_dir / "train-00000.parquet")
        pq.write_table(schema.empty_table(), files[-1])
    return files, total


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
    hub = require("huggingface_hub", "data")
    out_dir = Path(out_dir)
    exported = []
    for name, dataset in configs.items():
        files, rows = write_parquet_shards(dataset, dataset.features, out_dir / "data" / name, shard_rows,
                                           desc=f"exporting {name}")
        exported.append(ExportedConfig(name, files, rows, list(dataset.features)))
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
    from .. import __version__

    template = resources.files("paranmt_hf.hub_cards").joinpath("dataset_card.md").read_text(encoding="utf-8")
    card = hub.DatasetCard.from_template(
        card_data, template_str=template, pretty_name=pretty_name, repo_id=repo_id, default_config=default_config,
        summary=("English-English sentential paraphrase pairs made by back-translating the Czech side of CzEng 1.6 "
                 "(Wieting & Gimpel, ACL 2018), with the filters of the later papers as configs."),
        config_rows=[{"name": c.name, "rows": c.rows, "columns": ", ".join(f"`{x}`" for x in c.columns),
                      "description": CONFIG_DESCRIPTIONS.get(c.name, "")} for c in exported],
        sources=list(sources), filter_description=filter_description, version=__version__,
        license_name="CzEng 1.6 licence: non-commercial research and education",
    )
    card.save(out_dir / "README.md")
    return exported

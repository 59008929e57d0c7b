from __future__ import annotations

import gc
import gzip
import zipfile
from pathlib import Path

import pytest
import yaml

from paranmt_hf import load_paranmt
from paranmt_hf.cli.main import main

LINES = [
    "I do not think we should go to the party tonight.\tI don't believe we ought to attend the party this evening."
    "\t0.81\n",
    "Je ne pense pas que nous devrions y aller.\tI don't think we should go.\t0.6\n",
    "He told me that he would be here at noon.\tHe said he'd be here at twelve o'clock.\t0.77\n",
    "yes .\tyeah .\t0.9\n",
    "This is broken\n",
    "We must find the children before it gets dark.\tWe have to find the kids before nightfall.\t0.3\n",
]


@pytest.fixture
def paranmt_zip(tmp_path: Path) -> Path:
    path = tmp_path / "para-nmt-50m.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("para-nmt-50m/para-nmt-50m.txt", "".join(LINES))
    return path


def test_exported_folder_loads_with_load_dataset(tmp_path: Path, paranmt_zip: Path) -> None:
    from datasets import get_dataset_config_names, load_dataset

    out = tmp_path / "hub"
    assert main(["corpus", "export", str(paranmt_zip), "--config", "full", "--config", "filtered", "-o", str(out),
                 "--shard-rows", "2", "--repo-id", "me/paranmt"]) == 0
    assert len(list((out / "data" / "full").glob("train-*.parquet"))) == 3  # 5 valid rows, 2 per shard
    assert sorted(get_dataset_config_names(str(out))) == ["filtered", "full"]
    filtered = load_dataset(str(out), "filtered", streaming=True)
    rows = list(filtered["train"])
    expected = list(load_paranmt("filtered", str(paranmt_zip)))
    assert rows == expected
    assert [r["reference"] for r in rows] == [LINES[0].split("\t")[0], LINES[2].split("\t")[0]]
    assert filtered["train"].features["paraphrase_score"].dtype == "float32"
    full = load_dataset(str(out), "full", split="train", cache_dir=str(tmp_path / "cache"))
    assert full.num_rows == 5 and full.features["trigram_overlap"].dtype == "float32"
    assert full.to_list() == list(load_paranmt("full", str(paranmt_zip)))
    del filtered
    gc.collect()  # datasets#7566: streams still open at interpreter exit can abort it (pyarrow scanner threads)

    card = (out / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert {c["config_name"] for c in meta["configs"]} == {"full", "filtered"}
    assert meta["configs"][0]["data_files"] == [{"split": "train", "path": "data/full/train-*.parquet"}]
    assert meta["license"] == "other"
    assert "wieting-gimpel-2018-paranmt" in card and "non-commercial" in card
    assert "1rbF3daJjCsa1-fu2GANeJd2FBXos1ugD" in card and paranmt_zip.name in card and str(paranmt_zip) not in card
    assert '"sim_low"' not in card or "0.4" in card
    assert "me/paranmt" in card


def test_export_processed_and_pairs(tmp_path: Path) -> None:
    from datasets import load_dataset

    src = tmp_path / "para-nmt-5m-processed.txt"
    src.write_text("where does is this ?\twhere does this come from ?\nabsolutely perfect .\tabsolutely gorgeous .\n"
                   "a b c d\ta b c e\n")
    out = tmp_path / "hub"
    assert main(["corpus", "export", str(src), "--config", "processed-5m", "--config", "pairs", "-o", str(out),
                 "--tokenizer", "whitespace"]) == 0
    ds = load_dataset(str(out), "processed-5m", split="train", streaming=True)
    assert list(ds)[1] == {"reference": "absolutely perfect .", "paraphrase": "absolutely gorgeous ."}
    del ds
    gc.collect()
    pairs = load_dataset(str(out), "pairs", split="train", cache_dir=str(tmp_path / "cache"))
    assert pairs["trigram_overlap"] == pytest.approx([0.0, 0.0, 0.5]) and pairs[1]["score"] is None


def test_two_export_tasks_merge_into_the_one_task_export(tmp_path: Path, paranmt_zip: Path) -> None:
    from datasets import load_dataset

    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    args = ["--config", "full", "--config", "filtered", "--shard-rows", "2", "--quiet"]
    assert main(["corpus", "export", str(paranmt_zip), "-o", str(whole), "--tasks", "1", *args]) == 0
    for index in ("1", "0"):  # as on two machines sharing the folder: the last one writes the folder
        assert main(["corpus", "export", str(paranmt_zip), "-o", str(sharded), "--tasks", "2", "--local-tasks", "1",
                     "--local-rank-offset", index, "--chunk-bytes", "200", *args]) == 0
        assert sharded.exists() == (index == "0")
    for config in ("full", "filtered"):
        ours = load_dataset(str(sharded), config, split="train", cache_dir=str(tmp_path / "c1")).to_list()
        one = load_dataset(str(whole), config, split="train", cache_dir=str(tmp_path / "c2")).to_list()
        assert ours == one and ours
        files = {p.name: p.read_bytes() for p in sorted((sharded / "data" / config).glob("*.parquet"))}
        # the same shards of --shard-rows rows, byte for byte, whatever the number of tasks
        assert files == {p.name: p.read_bytes() for p in sorted((whole / "data" / config).glob("*.parquet"))}
    assert len(list((whole / "data" / "full").glob("*.parquet"))) == 3  # 5 rows in shards of 2
    card = yaml.safe_load((sharded / "README.md").read_text().split("---")[1])
    assert {c["config_name"] for c in card["configs"]} == {"full", "filtered"}
    assert "5 |" in (sharded / "README.md").read_text().replace(",", "")  # the card counts all 5 full rows


@pytest.mark.parametrize("damage", ["torn", "missing"])
def test_a_torn_or_missing_parquet_task_file_never_gives_an_export(tmp_path: Path, paranmt_zip: Path,
                                                                   capsys: pytest.CaptureFixture, damage: str) -> None:
    out = tmp_path / "out"
    args = ["corpus", "export", str(paranmt_zip), "-o", str(out), "--config", "full", "--shard-rows", "2", "--quiet",
            "--tasks", "2", "--local-tasks", "1", "--chunk-bytes", "200"]
    assert main([*args, "--local-rank-offset", "1"]) == 0
    task = tmp_path / ".out.paranmt-work" / "full" / "00001"
    written = sorted(task.glob("*.parquet"))
    assert [p.name for p in written] == ["train-00000.parquet"]  # renamed into place: no temporary name is left
    assert not [p for p in task.iterdir() if p.name.startswith(".")]
    if damage == "torn":  # an orphaned writer's bytes, cut short
        written[0].write_bytes(written[0].read_bytes()[:100])
    else:
        written[0].unlink()
    capsys.readouterr()
    assert main([*args, "--local-rank-offset", "0"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "train-00000.parquet is missing, torn or foreign" in err[0], err
    assert not out.exists()


def test_export_refuses_to_replace_an_existing_folder(tmp_path: Path, paranmt_zip: Path) -> None:
    out = tmp_path / "hub"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    assert main(["corpus", "export", str(paranmt_zip), "--config", "full", "-o", str(out), "--quiet"]) == 1
    assert (out / "mine.txt").read_text() == "keep me"


def test_export_of_your_own_pairs_describes_them_not_paranmt(tmp_path: Path) -> None:
    # the card of your own pairs is not ParaNMT-50M's (licence, origin, column meanings, upload)
    src = tmp_path / "my-pairs.tsv"
    src.write_text("a man plays a guitar .\ta guy is playing guitar .\t0.8\nhello there\thi there\t0.6\n")
    out = tmp_path / "hub"
    assert main(["corpus", "export", str(src), "--config", "pairs", "-o", str(out), "--tokenizer", "whitespace",
                 "--repo-id", "me/my-pairs", "--quiet"]) == 0
    card = (out / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["license"] == "unknown" and "license_name" not in meta and meta["pretty_name"] == "Paraphrase pairs"
    assert "CzEng" not in card and "PARAGRAM" not in card and "phontron" not in card
    assert "huggingface-cli" not in card and "hf upload --repo-type dataset me/my-pairs ." in card
    for column in ("text_a", "text_b", "score", "trigram_overlap"):
        assert f"- `{column}`: " in card  # every exported column is described
    assert "- `reference`" not in card  # and only those
    assert f"`{src.name}`" in card or src.name in card
    assert str(tmp_path) not in card  # a public card: no path of this machine
    paranmt = tmp_path / "paranmt"
    assert main(["corpus", "export", str(src), "--config", "pairs", "-o", str(paranmt), "--card", "paranmt",
                 "--quiet"]) == 0
    assert "CzEng" in (paranmt / "README.md").read_text()  # asked for explicitly


def test_export_of_a_paranmt_sample_carries_czeng_terms_and_no_local_path(tmp_path: Path) -> None:
    src = tmp_path / "paranmt5m-sample-10k.tsv.gz"  # the shared data's sample of ParaNMT-5M, read as plain pairs
    src.write_bytes(gzip.compress(b"yes .\tyeah .\nwhere is it ?\twhere is this ?\n"))
    out = tmp_path / "hub"
    assert main(["corpus", "export", str(src), "--config", "pairs", "-o", str(out), "--tokenizer", "whitespace",
                 "--quiet"]) == 0
    card = (out / "README.md").read_text()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["license"] == "other" and meta["license_name"] == "czeng-1.6-non-commercial"
    assert "non-commercial" in card and str(tmp_path) not in card and src.name in card


def test_export_pairs_reads_an_annotated_file_by_column_name(tmp_path: Path) -> None:
    # `corpus annotate` writes a header line naming its columns: export reads them by name (the header is no pair,
    # the score is paraphrase_score wherever it stands, the extra measure columns are not in the config)
    from datasets import load_dataset

    src = tmp_path / "scored.tsv"
    src.write_text("reference\tparaphrase\tbleu\tparaphrase_score\ttrigram_overlap\n"
                   "a b c d\ta b c e\t0.25\t0.75\t0.5\nyes .\tyeah .\t0.0\t0.5\t0.0\n", encoding="utf-8")
    out = tmp_path / "hub"
    assert main(["corpus", "export", str(src), "--config", "pairs", "-o", str(out), "--strict", "--quiet"]) == 0
    rows = load_dataset(str(out), "pairs", split="train", cache_dir=str(tmp_path / "cache")).to_list()
    assert rows == [{"text_a": "a b c d", "text_b": "a b c e", "score": 0.75, "trigram_overlap": 0.5},
                    {"text_a": "yes .", "text_b": "yeah .", "score": 0.5, "trigram_overlap": 0.0}]


def test_the_card_and_export_record_name_local_sources_by_file_name(tmp_path: Path) -> None:
    # `corpus make` hands the card its inputs as given (absolute paths): the card and export.json never carry a path
    # of this machine, only the file names; URLs and names stay as they are
    import json

    from paranmt_hf.corpus.output.export import ExportedConfig, write_card, write_export_record

    exported = [ExportedConfig("pairs", [tmp_path / "data" / "pairs" / "train-00000.parquet"], 2,
                               ["text_a", "text_b", "score", "trigram_overlap"])]
    sources = [str(tmp_path / "in" / "cs-en.tsv.gz"), "https://example.org/x.zip", "the public ParaNMT-50M zip"]
    write_card(tmp_path, exported, sources=sources, kind="own")
    write_export_record(tmp_path, exported, {"sources": sources, "kind": "own"})
    card = (tmp_path / "README.md").read_text()
    record = json.loads((tmp_path / "export.json").read_text())
    assert str(tmp_path) not in card and str(tmp_path) not in json.dumps(record)
    assert "cs-en.tsv.gz" in card and "https://example.org/x.zip" in card and "the public ParaNMT-50M zip" in card
    assert record["card"]["sources"] == ["cs-en.tsv.gz", "https://example.org/x.zip", "the public ParaNMT-50M zip"]


def test_a_card_keeps_a_hub_id_whole_and_names_a_local_path_by_its_file(tmp_path, monkeypatch):
    from paranmt_hf.corpus.output.export import public_source

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "marian").mkdir(parents=True)
    assert public_source("Helsinki-NLP/opus-mt-cs-en") == "Helsinki-NLP/opus-mt-cs-en"  # a Hub id: org and name
    assert public_source("models/marian") == "marian"  # a relative folder that exists here
    assert public_source(str(tmp_path / "gone" / "model")) == "model"  # an absolute path, even gone


def test_a_failed_task_keeps_the_work_folder_and_its_logs_for_a_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture) -> None:
    from paranmt_hf.corpus.output import export

    src = tmp_path / "pairs.tsv"
    src.write_text("".join(f"sentence number {i} .\tsentence {i} here .\n" for i in range(40)))
    out = tmp_path / "hub"
    args = ["corpus", "export", str(src), "--config", "pairs", "-o", str(out), "--tokenizer", "whitespace",
            "--quiet", "--tasks", "2", "--workers", "1", "--chunk-bytes", "200"]
    run = export.RowsStep.run

    def crash(self, data=None, rank=0, world_size=1):  # a task that dies (memory, a bug...): not the input's fault
        if rank == 1:
            raise RuntimeError("boom")
        yield from run(self, data, rank, world_size)

    monkeypatch.setattr(export.RowsStep, "run", crash)
    with pytest.raises(RuntimeError, match="boom"):  # a bug keeps its traceback
        main(args)
    logs = tmp_path / ".hub.paranmt-work"
    assert "boom" in "".join(p.read_text(errors="replace") for p in logs.rglob("*.log") if p.is_file())
    assert not out.exists()
    ranks = []

    def counted(self, data=None, rank=0, world_size=1):
        ranks.append(rank)
        yield from run(self, data, rank, world_size)

    monkeypatch.setattr(export.RowsStep, "run", counted)
    assert main(args) == 0
    assert ranks == [1]  # resumed: the finished task is not run again
    import pyarrow.parquet as pq

    assert sum(pq.read_metadata(p).num_rows for p in (out / "data" / "pairs").glob("*.parquet")) == 40

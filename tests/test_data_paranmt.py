from __future__ import annotations

import gzip
import logging
import zipfile
from pathlib import Path

import pytest

from paranmt_hf import load_paranmt
from paranmt_hf.corpus.measures.overlap import trigram_overlap

# para-nmt-50m.txt lines: reference \t back-translation \t paraphrase score
FULL_LINES = [
    "so , what 's our plan ?\tso what 's the plan ?\t0.786201\n",
    "I am going home now.\tI'm going home now.\t0.95\n",
    "we have to get out of here right now , do you understand ?\twe need to leave this place immediately , "
    "you understand ?\t0.65\n",
    "Elle est très belle et je l'aime beaucoup.\tShe is very beautiful and I love her very much.\t0.5\n",
]


def write_paranmt_zip(path: Path, lines: list[str], member: str = "para-nmt-50m/para-nmt-50m.txt") -> Path:
    """The public archive's layout: para-nmt-50m.zip -> para-nmt-50m/para-nmt-50m.txt."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("para-nmt-50m/", "")
        archive.writestr(member, "".join(lines).encode("utf-8"))
    return path


@pytest.fixture
def full_zip(tmp_path: Path) -> Path:
    return write_paranmt_zip(tmp_path / "para-nmt-50m.zip", FULL_LINES)


def test_full_config_streams_zip_with_exact_columns(full_zip: Path) -> None:
    ds = load_paranmt("full", str(full_zip))
    assert type(ds).__name__ == "IterableDataset"
    assert dict(ds.features) == {
        "reference": ds.features["reference"], "paraphrase": ds.features["paraphrase"],
        "paraphrase_score": ds.features["paraphrase_score"], "trigram_overlap": ds.features["trigram_overlap"],
        "reference_length": ds.features["reference_length"], "paraphrase_length": ds.features["paraphrase_length"],
    }
    assert ds.features["paraphrase_score"].dtype == "float32"
    assert ds.features["trigram_overlap"].dtype == "float32"
    rows = list(ds)
    assert len(rows) == 4
    ref, para, score = FULL_LINES[1].rstrip("\n").split("\t")
    assert rows[1]["reference"] == ref and rows[1]["paraphrase"] == para
    assert rows[1]["paraphrase_score"] == pytest.approx(0.95)
    # "i am going home now ." vs "i 'm going home now .": 2 of 4 trigrams shared
    assert rows[1]["trigram_overlap"] == pytest.approx(0.5)
    assert rows[1]["reference_length"] == 5 and rows[1]["paraphrase_length"] == 4
    for row, line in zip(rows, FULL_LINES, strict=True):
        a, b, _ = line.rstrip("\n").split("\t")
        assert row["trigram_overlap"] == pytest.approx(trigram_overlap(a, b), abs=1e-6)


def test_full_config_non_streaming_keeps_float32(full_zip: Path, tmp_path: Path) -> None:
    ds = load_paranmt("full", str(full_zip), streaming=False, cache_dir=tmp_path / "cache")
    assert ds.num_rows == 4
    assert ds.features["paraphrase_score"].dtype == "float32"
    assert ds[0]["paraphrase_score"] == pytest.approx(0.786201, abs=1e-6)


@pytest.mark.parametrize("kind", ["txt", "gz", "zip-top-level"])
def test_full_config_reads_plain_gzip_and_flat_zip(tmp_path: Path, kind: str) -> None:
    data = "".join(FULL_LINES).encode()
    if kind == "txt":
        path = tmp_path / "para-nmt-50m.txt"
        path.write_bytes(data)
    elif kind == "gz":
        path = tmp_path / "para-nmt-50m.txt.gz"
        path.write_bytes(gzip.compress(data))
    else:  # the old phontron.com zip unpacked to para-nmt-50m.txt at the top level
        path = write_paranmt_zip(tmp_path / "old.zip", FULL_LINES, member="para-nmt-50m.txt")
    assert [r["reference"] for r in load_paranmt("full", str(path))] == [x.split("\t")[0] for x in FULL_LINES]


def test_zip_without_matching_member_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("something/else.txt", "a\tb\t0.5\n")
    with pytest.raises(FileNotFoundError, match="no member matching"):
        list(load_paranmt("full", str(path)))
    assert len(list(load_paranmt("full", str(path), member_pattern="*.txt"))) == 1


def test_file_uri_is_rejected(full_zip: Path) -> None:
    with pytest.raises(ValueError, match="file://"):
        load_paranmt("full", full_zip.as_uri())


def test_processed_5m_two_columns(tmp_path: Path) -> None:
    path = tmp_path / "para-nmt-5m-processed.txt"
    path.write_text("where does is this ?\twhere does this come from ?\nabsolutely perfect .\tabsolutely gorgeous .\n")
    rows = list(load_paranmt("processed-5m", str(path)))
    assert rows == [
        {"reference": "where does is this ?", "paraphrase": "where does this come from ?"},
        {"reference": "absolutely perfect .", "paraphrase": "absolutely gorgeous ."},
    ]


def test_pairs_config_two_three_and_four_columns(tmp_path: Path) -> None:
    path = tmp_path / "mine.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("a b c d\ta b c e\n")
        f.write("x y z\tx y z w\t0.25\n")
        f.write("one two three\tone two three\t0.9\t0.33\n")
    rows = list(load_paranmt("pairs", str(path)))
    assert [r["score"] for r in rows] == [None, 0.25, pytest.approx(0.9)]
    assert [r["trigram_overlap"] for r in rows][:2] == [None, None]
    assert rows[2]["trigram_overlap"] == pytest.approx(0.33)
    computed = list(load_paranmt("pairs", str(path), compute_overlap=True))
    assert computed[0]["trigram_overlap"] == pytest.approx(0.5)  # "a b c" shared of 2 trigrams
    assert computed[1]["trigram_overlap"] == pytest.approx(1.0)
    assert computed[2]["trigram_overlap"] == pytest.approx(0.33)  # the file's column wins


def test_bitext_sides_from_name_or_parameter(tmp_path: Path) -> None:
    en_first = tmp_path / "tatoeba-en-es.tsv"
    en_first.write_text("Go.\tVete.\n")
    assert list(load_paranmt("bitext", str(en_first))) == [{"english": "Go.", "foreign": "Vete.", "lang": "es"}]
    es_first = tmp_path / "corpus.es-en.tsv"
    es_first.write_text("Vete.\tGo.\n")
    assert list(load_paranmt("bitext", str(es_first))) == [{"english": "Go.", "foreign": "Vete.", "lang": "es"}]
    unknown = tmp_path / "pairs.tsv"
    unknown.write_text("Vete.\tGo.\n")
    with pytest.raises(ValueError, match="english_first"):
        list(load_paranmt("bitext", str(unknown)))
    rows = list(load_paranmt("bitext", str(unknown), english_first=False, lang="es"))
    assert rows == [{"english": "Go.", "foreign": "Vete.", "lang": "es"}]


def test_unknown_config_and_missing_paths() -> None:
    with pytest.raises(ValueError, match="unknown config"):
        load_paranmt("nope")
    with pytest.raises(ValueError, match="paths"):
        load_paranmt("processed-5m")


def test_default_url_is_the_replacement_of_the_dead_phontron_zip() -> None:
    from paranmt_hf.dataset_scripts.paranmt import PARANMT_50M_OLD_URL, PARANMT_50M_URL

    assert "1rbF3daJjCsa1-fu2GANeJd2FBXos1ugD" in PARANMT_50M_URL  # PRAS PR #1 / do_all.sh
    assert PARANMT_50M_OLD_URL.endswith("para-nmt-50m.zip")


def test_multiple_files_in_order(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(FULL_LINES[0])
    b.write_text(FULL_LINES[1])
    with caplog.at_level(logging.WARNING, logger="paranmt_hf.data"):
        rows = list(load_paranmt("full", [str(a), str(b)]))
    assert [r["reference"] for r in rows] == [FULL_LINES[0].split("\t")[0], FULL_LINES[1].split("\t")[0]]
    assert "bad line" not in caplog.text


def test_split_none_and_non_streaming_processed(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("a b\tc d\n")
    splits = load_paranmt("processed-5m", str(path), split=None)
    assert list(splits) == ["train"] and list(splits["train"]) == [{"reference": "a b", "paraphrase": "c d"}]
    ds = load_paranmt("processed-5m", str(path), streaming=False, cache_dir=tmp_path / "cache")
    assert ds.to_list() == [{"reference": "a b", "paraphrase": "c d"}]


def test_processed_5m_zip_layout(tmp_path: Path) -> None:
    path = tmp_path / "para-nmt-5m-processed.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("para-nmt-5m-processed/README.txt", "not data\n")
        archive.writestr("para-nmt-5m-processed/para-nmt-5m-processed.txt", "a b\tc d\n")
    assert list(load_paranmt("processed-5m", str(path), strict=True)) == [{"reference": "a b", "paraphrase": "c d"}]

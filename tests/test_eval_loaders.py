"""Each evaluation loader on the real files of ../shared/data (counts, skipped gold lines, column orders)."""

from __future__ import annotations

import pytest

from paranmt_hf.evaluation import (
    get_task,
    load_sts17,
    load_sts_dir,
    load_sts_year,
    load_stsb,
    load_tatoeba,
    read_sts_pair_files,
    resolve_tasks,
)
from paranmt_hf.evaluation.download import DataUnavailableError, ensure_data

# (scored pairs, skipped empty gold lines) per dataset; pooled totals equal mteb's STS12..STS16 test sizes.
EXPECTED = {
    "STS12": {"MSRpar": (750, 0), "MSRvid": (750, 0), "SMTeuroparl": (459, 0), "surprise.OnWN": (750, 0),
              "surprise.SMTnews": (399, 0)},
    "STS13": {"FNWN": (189, 0), "headlines": (750, 0), "OnWN": (561, 0)},
    "STS14": {"deft-forum": (450, 0), "deft-news": (300, 0), "headlines": (750, 0), "images": (750, 0),
              "OnWN": (750, 0), "tweet-news": (750, 0)},
    "STS15": {"answers-forums": (375, 1625), "answers-students": (750, 750), "belief": (375, 1625),
              "headlines": (750, 750), "images": (750, 750)},
    "STS16": {"answer-answer": (254, 1318), "headlines": (249, 1249), "plagiarism": (230, 1041),
              "postediting": (244, 3043), "question-question": (209, 1346)},
}
MTEB_SIZES = {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186}


@pytest.mark.data
@pytest.mark.parametrize("year", sorted(EXPECTED))
def test_sts_year_counts_and_skipped_gold_lines(data_dir, year):
    datasets = load_sts_year(data_dir / "eval" / "sts", year)
    got = {d.name: (len(d), d.n_skipped) for d in datasets}
    assert got == EXPECTED[year]
    assert sum(len(d) for d in datasets) == MTEB_SIZES[year]
    for d in datasets:
        assert len(d.sentences1) == len(d.sentences2) == len(d.scores)
        assert all(0.0 <= s <= 5.0 for s in d.scores)
        assert all(s and s == " ".join(s.split()) for s in d.sentences1[:50] + d.sentences2[:50])


@pytest.mark.data
def test_sts16_extra_source_columns_are_dropped(data_dir):
    headlines = load_sts_year(data_dir / "eval" / "sts", "STS16")[1]
    assert headlines.name == "headlines"
    assert not any("Europe Media Monitor" in s for s in headlines.sentences1 + headlines.sentences2)


@pytest.mark.data
def test_stsb_splits_with_extra_columns(data_dir):
    root = data_dir / "eval" / "sts"
    assert [len(load_stsb(root, s)) for s in ("train", "dev", "validation", "test")] == [5749, 1500, 1500, 1379]
    test = load_stsb(root, "test")
    assert test.sentences1[0] == "A girl is styling her hair."
    assert test.sentences2[0] == "A girl is brushing her hair."
    assert test.scores[0] == 2.5
    with pytest.raises(KeyError):
        load_stsb(root, "nope")


@pytest.mark.data
def test_sts17_all_tracks_and_column_orders(data_dir):
    tracks = load_sts17(data_dir / "eval" / "sts")
    assert [t.name for t in tracks] == ["ar-ar", "ar-en", "es-es", "es-en", "es-en-wmt", "en-en", "tr-en"]
    assert all(len(t) == 250 for t in tracks)
    by_name = {t.name: t for t in tracks}
    assert by_name["es-en"].sentences1[1] == "Dos niños están bailando"  # track4a: Spanish first
    assert by_name["ar-en"].sentences1[0] == "two men are crying"  # ar-en: English first
    assert by_name["ar-en"].languages == ["eng-Latn", "ara-Arab"]
    assert [t.name for t in load_sts17(data_dir / "eval" / "sts", ["en-en"])] == ["en-en"]
    with pytest.raises(KeyError):
        load_sts17(data_dir / "eval" / "sts", ["xx-yy"])


@pytest.mark.data
def test_tatoeba_all_languages(data_dir):
    sets = load_tatoeba(data_dir / "eval" / "tatoeba")
    assert [s.lang for s in sets] == ["ara", "cmn", "deu", "fra", "rus", "spa", "tur"]
    assert all(len(s) == 1000 and len(s.english) == 1000 for s in sets)
    assert sets[3].name == "fra-eng" and sets[3].languages == ["fra-Latn", "eng-Latn"]
    with pytest.raises(FileNotFoundError):
        load_tatoeba(data_dir / "eval" / "tatoeba", ["xxx"])


@pytest.mark.data
def test_sts_dir_on_real_folder_and_tmp_folder(data_dir, tmp_path):
    found = load_sts_dir(data_dir / "eval" / "sts" / "STS16-en-test")
    assert [d.name for d in found] == ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"]
    (tmp_path / "STS.input.toy.txt").write_text("a  b\tc\nd\te\nf\tg\n", encoding="utf-8")
    (tmp_path / "STS.gs.toy.txt").write_text("1.0\n\n4\n", encoding="utf-8")
    (toy,) = load_sts_dir(tmp_path)
    assert (toy.sentences1, toy.sentences2, toy.scores, toy.n_skipped) == (["a b", "f"], ["c", "g"], [1.0, 4.0], 1)
    task = get_task(str(tmp_path))
    assert task.name == f"STSDir-{tmp_path.name}" and task.kind == "sts"
    with pytest.raises(FileNotFoundError):
        load_sts_dir(tmp_path / "missing")


def test_pair_file_errors(tmp_path):
    inp, gold = tmp_path / "STS.input.x.txt", tmp_path / "STS.gs.x.txt"
    inp.write_text("a\tb\nc\td\n", encoding="utf-8")
    gold.write_text("1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lines"):
        read_sts_pair_files(inp, gold, "x")
    gold.write_text("1\nhigh\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a number"):
        read_sts_pair_files(inp, gold, "x")
    inp.write_text("a\tb\nno tab here\n", encoding="utf-8")
    gold.write_text("1\n2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="sentence1<TAB>sentence2"):
        read_sts_pair_files(inp, gold, "x")


def test_task_names_groups_and_missing_data(tmp_path):
    assert [t.name for t in resolve_tasks("sts12-16")] == ["STS12", "STS13", "STS14", "STS15", "STS16"]
    assert [t.name for t in resolve_tasks("paper")] == ["STS12", "STS13", "STS14", "STS15", "STS16"]
    assert [t.name for t in resolve_tasks(["all"])][-1] == "Tatoeba"
    assert [t.name for t in resolve_tasks(["stsb", "STSBenchmark", "sts17:en-en"])] == ["STSBenchmark", "STS17"]
    with pytest.raises(KeyError, match="unknown task"):
        get_task("STS99")
    with pytest.raises(DataUnavailableError, match="--data-dir"):
        ensure_data(tmp_path, ["sts/STS12-en-test"], download=False)


def test_unicode_line_ends_inside_a_sentence_are_not_line_ends(tmp_path):
    """U+2028, U+0085 or a form feed inside a sentence keep the files line-aligned: only "\\n" ends a line;
    a Windows "\\r\\n" is still one line end."""
    from paranmt_hf.data.tatoeba import load_tatoeba

    inp, gold = tmp_path / "STS.input.x.txt", tmp_path / "STS.gs.x.txt"
    inp.write_text("a man\u2028plays\tsomeone plays\r\nthe dog\x85runs\ta\x0cdog runs\nc d\te f\n", encoding="utf-8")
    gold.write_text("4.5\r\n3\n1\n", encoding="utf-8")
    pairs = read_sts_pair_files(inp, gold, "x")
    assert pairs.sentences1 == ["a man plays", "the dog runs", "c d"]  # (whitespace normalised, as always)
    assert pairs.sentences2 == ["someone plays", "a dog runs", "e f"] and list(pairs.scores) == [4.5, 3.0, 1.0]
    root = tmp_path / "tatoeba"
    root.mkdir()
    (root / "tatoeba.deu-eng.deu").write_text("ein\u2028Mann\nzwei\n", encoding="utf-8")
    (root / "tatoeba.deu-eng.eng").write_text("a man\ntwo\n", encoding="utf-8")
    [bitext] = load_tatoeba(root, ["deu"])
    assert len(bitext.source) == len(bitext.english) == 2

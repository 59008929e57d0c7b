"""The pieces of ``data fetch`` on tiny inputs: the registry, the cleaning rule, ring pairs, sampling, paths."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from paranmt_hf.evaluation.tasks import ALL_TASKS, get_task
from paranmt_hf.fetch import registry
from paranmt_hf.fetch.decontaminate import CleanStats, clean_pairs, normalize, sick_sentences
from paranmt_hf.fetch.http import confirmation_url, mirror_url
from paranmt_hf.fetch.train_sets import flickr_ring_pairs, parallel_pairs, reservoir_sample
from paranmt_hf.utils import paths


def test_registry_is_complete_and_honest():
    keys: dict[str, registry.Remote] = {}
    for source in registry.SOURCES.values():
        assert source.licence and source.homepage.startswith("http") and source.kind in ("eval", "train",
                                                                                         "decontamination")
        for remote in registry.all_remotes(source):
            assert remote.urls and all(re.match(r"^https?://[^/]+/", url) for url in remote.urls), remote.key
            if remote.sha256 is not None:
                assert re.fullmatch(r"[0-9a-f]{64}", remote.sha256) and remote.size, remote.key
            assert keys.setdefault(remote.key, remote) == remote, f"two different remotes named {remote.key}"
    # every evaluation folder a task reads has a source (one list for `eval --download` and `data fetch`)
    folders = {f for name in ALL_TASKS for f in get_task(name).data_folders}
    assert folders <= set(registry.EVAL_FOLDERS) and "simlex" in registry.EVAL_FOLDERS
    # pinned = verified: GitHub files at a fixed commit only
    pinned = list({r.key: r for s in registry.SOURCES.values() for r in registry.all_remotes(s) if r.sha256}.values())
    assert pinned and all(re.search(r"/[0-9a-f]{40}/", r.urls[0]) or "github.io" in r.urls[0] for r in pinned)
    assert len(pinned) == 15 + 1 + 3 + 9  # Tatoeba (14 + README), SimLex, SICK (3), Multi30k (9)


def test_paranmt_50m_default_url_is_a_direct_download_and_old_urls_are_kept():
    from paranmt_hf.dataset_scripts.paranmt import PARANMT_50M_URL

    assert PARANMT_50M_URL is registry.PARANMT_50M_URL
    assert PARANMT_50M_URL.startswith("https://drive.usercontent.google.com/download?id=")
    assert "confirm=t" in PARANMT_50M_URL and registry.PARANMT_50M_ID in PARANMT_50M_URL
    assert "http://phontron.com/data/para-nmt-50m.zip" in registry.PARANMT_50M_OLD_URLS


def test_cleaning_rule():
    held_out = {normalize("A man is playing a guitar."), "cat"}
    pairs = [
        ("  Hello there. ", "Bonjour."),            # kept, stripped
        ("A  MAN is playing a guitar.", "x"),       # evaluation sentence (case / spaces differ)
        ("y", "Cat"),                               # SimLex word
        ("hello   THERE.", "bonjour."),             # duplicate of the first (normalised)
        ("Bonjour.", "Hello there."),               # the reverse order is another pair: kept
        ("a\tb", "c"),                              # a tab inside a side: malformed
        ("", "c"),                                  # empty side: malformed
        ("Hello there.", "Salut."),                 # same English, other translation: kept
    ]
    stats = CleanStats()
    kept = list(clean_pairs(pairs, held_out, stats))
    assert kept == [("Hello there.", "Bonjour."), ("Bonjour.", "Hello there."), ("Hello there.", "Salut.")]
    assert stats.as_dict() == {"pairs": 3, "removed": 5, "removed_eval": 2, "removed_duplicate": 1,
                               "removed_malformed": 2}
    assert stats.read == len(pairs)


def _gz(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress("".join(x + "\n" for x in lines).encode()))
    return path


def test_flickr_ring_pairs_and_alignment(tmp_path):
    files = [_gz(tmp_path / f"train.{k}.en.gz", [f"img1 c{k}", f"img2 c{k}"]) for k in range(1, 6)]
    pairs = list(flickr_ring_pairs(files))
    assert pairs[:5] == [("img1 c1", "img1 c2"), ("img1 c2", "img1 c3"), ("img1 c3", "img1 c4"),
                         ("img1 c4", "img1 c5"), ("img1 c5", "img1 c1")]
    assert len(pairs) == 10 and pairs[5] == ("img2 c1", "img2 c2")
    short = _gz(tmp_path / "train.de.gz", ["eins"])
    with pytest.raises(ValueError, match="train.de.gz ended at line 1"):
        list(parallel_pairs(files[0], short))
    # a carriage return or a Unicode line separator inside a line never shifts the alignment
    en = _gz(tmp_path / "en.gz", ["a\rb", "c\u2028d", "e"])
    de = _gz(tmp_path / "de.gz", ["1", "2", "3"])
    assert list(parallel_pairs(en, de)) == [("a\rb", "1"), ("c\u2028d", "2"), ("e", "3")]


def test_reservoir_sample_is_seeded_uniform_and_ordered():
    lines = [f"line {i}" for i in range(1000)]
    a, b = reservoir_sample(lines, 50, seed=0), reservoir_sample(iter(lines), 50, seed=0)
    assert a == b and len(a) == 50 and a == sorted(a, key=lambda x: int(x.split()[1]))
    assert reservoir_sample(lines, 50, seed=1) != a
    assert reservoir_sample(lines[:10], 50, seed=0) == lines[:10]
    # roughly uniform: the mean index of 200 draws of 500 out of 1000 lines is near the middle
    means = [sum(int(x.split()[1]) for x in reservoir_sample(lines, 500, seed=s)) / 500 for s in range(20)]
    assert 480 < sum(means) / len(means) < 520


def test_sick_files_of_either_release(tmp_path):
    split = tmp_path / "SICK_trial.txt"
    split.write_text("\ufeffpair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
                     "1\tA dog runs\tThe  DOG is running\t4.5\tENTAILMENT\n", encoding="utf-8")
    assert sick_sentences(split) == {"a dog runs", "the dog is running"}
    import zipfile

    full = tmp_path / "SICK.zip"
    with zipfile.ZipFile(full, "w") as zf:
        zf.writestr("SICK/SICK.txt", "pair_ID\tsentence_A\tsentence_B\tentailment_label\n1\tA\tB\tNEUTRAL\n")
    assert sick_sentences(full) == {"a", "b"}
    bad = tmp_path / "bad.txt"
    bad.write_text("x\ty\n")
    with pytest.raises(ValueError, match="no sentence_A"):
        sick_sentences(bad)


def test_mirror_and_confirmation_urls():
    url = "https://drive.usercontent.google.com/download?id=abc&export=download&confirm=t"
    assert mirror_url(url, "http://127.0.0.1:8000/") == (
        "http://127.0.0.1:8000/drive.usercontent.google.com/download?id=abc&export=download&confirm=t")
    assert mirror_url(url, None) == url
    page = ('<form id="download-form" action="https://drive.usercontent.google.com/download" method="get">'
            '<input type="hidden" name="id" value="abc"><input type="hidden" name="uuid" value="u-1"></form>')
    assert confirmation_url(page, url) == "https://drive.usercontent.google.com/download?id=abc&uuid=u-1"
    assert confirmation_url("<html>Quota exceeded</html>", url) is None


def test_data_dir_defaults_to_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("PARANMT_HF_DATA", raising=False)
    monkeypatch.delenv("PARANMT_HF_CACHE", raising=False)
    monkeypatch.setattr(paths, "SHARED_DATA", tmp_path / "no-shared-data")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_data_dir() == tmp_path / "xdg" / "paranmt_hf" / "data"
    assert paths.data_dir(must_exist=False) == tmp_path / "xdg" / "paranmt_hf" / "data"
    with pytest.raises(FileNotFoundError, match="paranmt-hf data fetch"):
        paths.data_dir()
    (tmp_path / "xdg" / "paranmt_hf" / "data").mkdir(parents=True)
    assert paths.data_dir() == (tmp_path / "xdg" / "paranmt_hf" / "data").resolve()  # used when nothing else is
    monkeypatch.setenv("PARANMT_HF_CACHE", str(tmp_path / "mine"))
    assert paths.cache_data_dir() == tmp_path / "mine" / "data"
    monkeypatch.setenv("PARANMT_HF_DATA", str(tmp_path / "elsewhere"))
    assert paths.data_dir(must_exist=False) == tmp_path / "elsewhere"  # where the user wants it, not the cache


def test_sources_and_path_commands(capsys, tmp_path, monkeypatch):
    import json

    from paranmt_hf.cli.main import main

    assert main(["data", "sources", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} == set(registry.SOURCES) and all(r["licence"] for r in rows)
    assert main(["data", "sources"]) == 0
    assert "sha256 recorded on first download" in capsys.readouterr().out
    monkeypatch.setenv("PARANMT_HF_DATA", str(tmp_path))
    assert main(["data", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path.resolve())
    missing = tmp_path / "not-yet"
    monkeypatch.setenv("PARANMT_HF_DATA", str(missing))
    assert main(["data", "path"]) == 1  # a folder that does not exist: said, with how to fill it
    captured = capsys.readouterr()
    assert captured.out.strip() == str(missing.resolve())
    assert captured.err.strip() == (f"paranmt-hf data path: {missing.resolve()} does not exist yet: `paranmt-hf data "
                                    "fetch` fills it (or set PARANMT_HF_DATA to a data folder)")

"""Evaluation evaluates what was asked: no fall-back from a mistyped --data-dir, no nan average from a nan gold
score, and results JSON that concurrent writers never tear."""

from __future__ import annotations

import json
import multiprocessing

import numpy as np
import pytest

from paranmt_hf.cli.main import main as cli
from paranmt_hf.evaluation import evaluate, read_sts_pair_files, write_results
from paranmt_hf.evaluation.metrics import sts_correlations
from paranmt_hf.utils.paths import data_dir as resolve_data_dir
from tests.test_eval_results_json import HashBagEncoder


@pytest.mark.data
def test_a_mistyped_data_dir_fails_instead_of_falling_back(tmp_path, monkeypatch, data_dir):
    from paranmt_hf import build_encoder

    model = tmp_path / "m"
    build_encoder("word", ["a man plays", "a dog runs"], embedding_dim=4).save_pretrained(model)
    typo = tmp_path / "typo"
    monkeypatch.setenv("PARANMT_HF_DATA", str(data_dir))  # a valid fall-back exists: it must not be used
    with pytest.raises(SystemExit, match=r"typo .*does not exist"):
        cli(["eval", str(model), "--tasks", "STS17:en-en", "--data-dir", str(typo)])
    with pytest.raises(FileNotFoundError, match="typo"):
        resolve_data_dir(typo)
    monkeypatch.setenv("PARANMT_HF_DATA", str(typo))
    with pytest.raises(FileNotFoundError, match=r"\$PARANMT_HF_DATA"):
        resolve_data_dir()


def _sts_folder(tmp_path, golds):
    folder = tmp_path / "sts"
    folder.mkdir()
    pairs = ["a man plays\ta man is playing", "a dog runs\ta cat sleeps", "two kids read\tkids are reading",
             "the sun is up\tit is night", "a chef cooks\tsomeone is cooking"]
    (folder / "STS.input.mine.txt").write_text("\n".join(pairs) + "\n", encoding="utf-8")
    (folder / "STS.gs.mine.txt").write_text("\n".join(golds) + "\n", encoding="utf-8")
    return folder


def test_a_nan_gold_score_is_skipped_and_counted_not_averaged(tmp_path, caplog):
    folder = _sts_folder(tmp_path, ["5", "0.5", "nan", "1", "4"])
    pairs = read_sts_pair_files(folder / "STS.input.mine.txt", folder / "STS.gs.mine.txt", "mine")
    assert (len(pairs), pairs.n_skipped) == (4, 1)
    assert "STS.gs.mine.txt:3" in caplog.text
    (result,) = evaluate(HashBagEncoder(), [str(folder)]).values()
    entry = result.scores["test"][0]
    assert np.isfinite(entry["paper_pearson"]) and entry["n_skipped"] == 1 and entry["n_pairs"] == 4
    with pytest.raises(ValueError, match="not finite"):
        sts_correlations(np.ones((3, 2)), np.eye(3, 2), [1.0, float("nan"), 2.0])


def test_all_identical_gold_scores_are_an_error_not_a_zero(tmp_path):
    """A gold file of equal scores (a broken file) gives no correlation: an error naming it."""
    from paranmt_hf import build_encoder

    folder = _sts_folder(tmp_path, ["3", "3", "3", "3", "3"])
    with pytest.raises(ValueError, match=r"STS.gs.mine.txt: all 5 gold scores are equal \(3\)"):
        read_sts_pair_files(folder / "STS.input.mine.txt", folder / "STS.gs.mine.txt", "mine")
    model = tmp_path / "m"
    build_encoder("word", ["a man plays", "a dog runs"], embedding_dim=4).save_pretrained(model)
    with pytest.raises(SystemExit, match=r"^paranmt-hf eval: .*STS.gs.mine.txt: all 5 gold scores are equal"):
        cli(["eval", str(model), "--tasks", str(folder)])
    # the first pairs of a file may be equal (--max-pairs 2): still an error, naming the dataset
    (folder / "STS.gs.mine.txt").write_text("3\n3\n1\n2\n4\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"dataset mine: all 2 gold scores are equal"):
        cli(["eval", str(model), "--tasks", str(folder), "--max-pairs", "2"])
    with pytest.raises(ValueError, match="gold scores are equal"):
        sts_correlations(np.eye(3, 2) + 1, np.ones((3, 2)), [2.0, 2.0, 2.0])


def _writer(folder, results, tag, enough, rounds):
    """Write until the reader has read ``enough`` times while writers ran (at most ``rounds`` writes; no timing)."""
    for _ in range(rounds):
        write_results(results, folder, "me/model", "r", {"name": "me/model", "writer": tag}, overwrite=True)
        if enough.is_set():
            return


def test_two_concurrent_writers_never_tear_the_results(tmp_path):
    from paranmt_hf.evaluation.runner import TaskResult

    entries = [{"hf_subset": f"s{i}", "main_score": i / 1000, "cosine_spearman": i / 1000, "languages": ["eng-Latn"]}
               for i in range(400)]
    results = {"MyTask": TaskResult("MyTask", "sts", {"test": entries}, 1.0)}
    context = multiprocessing.get_context("fork")
    enough = context.Event()
    writers = [context.Process(target=_writer, args=(tmp_path, results, tag, enough, 100_000)) for tag in ("a", "b")]
    for w in writers:
        w.start()
    path, torn, reads = tmp_path / "me__model" / "r" / "MyTask.json", 0, 0
    while any(w.is_alive() for w in writers):
        if path.exists():
            reads += 1
            try:
                json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                torn += 1
            if reads >= 20:  # the writers stop once the reader has seen 20 versions while they wrote
                enough.set()
    for w in writers:
        w.join()
        assert w.exitcode == 0
    assert reads > 5 and torn == 0
    assert len(json.loads(path.read_text())["paranmt_hf"]["scores"]["test"]) == 400
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary file left


@pytest.mark.parametrize("option", [["--revision", "../../rev"], ["--revision", ".."], ["--revision", "/tmp/abs"],
                                    ["--revision", "v1/../../x"]])
def test_names_that_become_folders_stay_inside_the_output(tmp_path, capsys, option):
    """``--revision`` / ``--name`` name folders below ``--output``: one that leads out of it is refused in one line
    before the model loads, and nothing is written outside."""
    from paranmt_hf import build_encoder

    model = tmp_path / "m"
    build_encoder("word", ["a man plays", "a dog runs"], embedding_dim=4).save_pretrained(model)
    before = sorted(tmp_path.rglob("*"))
    out = tmp_path / "a" / "b" / "results"
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        cli(["eval", str(model), "--tasks", "STS12", "--output", str(out), *option])
    assert stopped.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be a folder name inside the output" in err[0], err
    with pytest.raises(ValueError, match="folder name"):
        write_results({}, out, "org/name", option[1] if option[0] == "--revision" else "v1",
                      model_meta={}) if option[0] == "--revision" else write_results({}, out, option[1])
    assert sorted(tmp_path.rglob("*")) == before  # nothing written anywhere


@pytest.mark.parametrize("name", ["..", "../../x", "/tmp/abs", 'a"b', "me/../x"])
def test_a_name_that_is_no_hub_id_is_refused_not_rewritten(tmp_path, capsys, name):
    """``--name`` is a Hub id (``org/name``): anything else is refused in one line before the model loads (``../../x``
    was silently rewritten to ``..__..__x``)."""
    from paranmt_hf import build_encoder

    model = tmp_path / "m"
    build_encoder("word", ["a man plays", "a dog runs"], embedding_dim=4).save_pretrained(model)
    before = sorted(tmp_path.rglob("*"))
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        cli(["eval", str(model), "--tasks", "STS12", "--output", str(tmp_path / "results"), "--name", name])
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"paranmt-hf eval: --name {name!r} is not a Hub repository id"), err
    assert sorted(tmp_path.rglob("*")) == before

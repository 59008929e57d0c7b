"""``paranmt-hf eval`` on a tiny saved ParaNMT model and the real data."""

from __future__ import annotations

import json

import pytest

from paranmt_hf.cli.main import main
from paranmt_hf.evaluation import load_sts_year

pytestmark = pytest.mark.data  # every test here reads the shared real data


@pytest.fixture(scope="module")
def tiny_model_dir(data_dir, tmp_path_factory):
    from paranmt_hf import build_encoder

    corpus = [s for d in load_sts_year(data_dir / "eval" / "sts", "STS13") for s in d.sentences1 + d.sentences2]
    path = tmp_path_factory.mktemp("tiny_word")
    build_encoder("word", corpus=corpus, vocab_size=2000, embedding_dim=16).save_pretrained(path)
    return path


def test_eval_cli_writes_mteb_layout(tiny_model_dir, data_dir, tmp_path, capsys):
    sts_dir = data_dir / "eval" / "sts" / "STS16-en-test"
    rc = main(["eval", str(tiny_model_dir), "--tasks", "STS13", "STS17:en-en", "Tatoeba:deu", str(sts_dir),
               "--data-dir", str(data_dir), "--output", str(tmp_path), "--name", "me/tiny", "--revision", "r1",
               "--max-pairs", "200"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "# me/tiny" in out and "headlines" in out and "deu-eng" in out and "results written to" in out
    folder = tmp_path / "me__tiny" / "r1"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["STS13.json", "STS17.json", "STSDir-STS16-en-test.json", "Tatoeba.json", "model_meta.json"]
    meta = json.loads((folder / "model_meta.json").read_text())
    assert meta["name"] == "me/tiny" and meta["embed_dim"] == 16 and meta["training_datasets"] == []
    sts13 = json.loads((folder / "STS13.json").read_text())["paranmt_hf"]["scores"]["test"]
    assert [e["n_pairs"] for e in sts13] == [189, 200, 200, 589]


def test_eval_cli_clear_errors(tiny_model_dir, tmp_path):
    with pytest.raises(SystemExit, match="--data-dir"):
        main(["eval", str(tiny_model_dir), "--tasks", "STS12", "--data-dir", str(tmp_path)])
    with pytest.raises(SystemExit, match="unknown task"):
        main(["eval", str(tiny_model_dir), "--tasks", "STS99"])
    with pytest.raises(SystemExit, match="no-model not found"):  # a clear message, not a traceback
        main(["eval", str(tmp_path / "no-model"), "--tasks", "STS12"])


@pytest.mark.parametrize("below", [False, True])
def test_an_output_that_is_a_file_is_refused_before_evaluating(tiny_model_dir, data_dir, tmp_path, capsys,
                                                               monkeypatch, below):
    import paranmt_hf.evaluation as evaluation

    def never(*args, **kwargs):
        raise AssertionError("evaluated before --output was checked")

    monkeypatch.setattr(evaluation, "evaluate", never)
    taken = tmp_path / "scores.txt"
    taken.write_text("kept\n")
    output = taken / "results" if below else taken
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["eval", str(tiny_model_dir), "--tasks", "STS12", "--data-dir", str(data_dir), "--output",
              str(output)])
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert stopped.value.code == 1 and len(err) == 1 and not captured.out, (captured.out, err)
    assert f"results folder {output}" in err[0] and f"{taken} is a file, not a folder" in err[0], err
    assert taken.read_text() == "kept\n"


# ---- results are protected, whole and traceable to their model ----------------------------------
def _eval(model_dir, data_dir, out, *tasks, extra=()):
    return main(["eval", str(model_dir), "--tasks", *tasks, "--data-dir", str(data_dir), "--output", str(out),
                 "--name", "me/tiny", "--revision", "r1", "--max-pairs", "50", *extra])


def test_existing_results_need_overwrite_and_are_replaced_whole(tiny_model_dir, data_dir, tmp_path, capsys):
    folder = tmp_path / "me__tiny" / "r1"
    assert _eval(tiny_model_dir, data_dir, tmp_path, "STS13", "STS15") == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(SystemExit, match="already exists.*--overwrite"):
        _eval(tiny_model_dir, data_dir, tmp_path, "STS14")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert _eval(tiny_model_dir, data_dir, tmp_path, "STS14", extra=["--overwrite"]) == 0
    # a re-run with other tasks does not leave the earlier run's files next to its own
    assert sorted(p.name for p in folder.iterdir()) == ["STS14.json", "model_meta.json"]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["r1"]  # no temporary folder, no lock file


def test_a_killed_write_leaves_the_earlier_results(tiny_model_dir, data_dir, tmp_path, monkeypatch):
    import paranmt_hf.evaluation.results as results_module

    folder = tmp_path / "me__tiny" / "r1"
    assert _eval(tiny_model_dir, data_dir, tmp_path, "STS13", "STS15") == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    real, calls = results_module.task_json, []

    def killed_after_one(result):
        calls.append(result.task_name)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed while writing the second task")
        return real(result)

    monkeypatch.setattr(results_module, "task_json", killed_after_one)
    assert _eval(tiny_model_dir, data_dir, tmp_path, "STS14", "STS16", extra=["--overwrite"]) == 130
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_each_result_records_its_model_and_publish_checks_it(tiny_model_dir, data_dir, tmp_path):
    import shutil

    from paranmt_hf import build_encoder
    from paranmt_hf.hub import publish
    from paranmt_hf.hub.eval_results import EvalResultsError
    from paranmt_hf.utils.content_hash import model_fingerprint

    assert _eval(tiny_model_dir, data_dir, tmp_path / "eval", "STS13") == 0
    task = json.loads((tmp_path / "eval" / "me__tiny" / "r1" / "STS13.json").read_text())
    assert task["paranmt_hf"]["model"] == {"path": str(tiny_model_dir.resolve()),
                                           "sha256": model_fingerprint(tiny_model_dir)}
    other = tmp_path / "other"
    build_encoder("word", corpus=["a different model ."] * 3, embedding_dim=16).save_pretrained(other)
    with pytest.raises(EvalResultsError, match=rf"results of another model than {other}.*STS13: {tiny_model_dir}"):
        publish(other, tmp_path / "hub", eval_dir=tmp_path / "eval", model_id="me/tiny")
    assert not (tmp_path / "hub").exists()
    with pytest.raises(SystemExit, match="results of another model"):
        main(["publish", str(other), "--output", str(tmp_path / "hub"), "--eval-dir", str(tmp_path / "eval")])
    # the same model, copied elsewhere and with notes next to it, is the same model
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    (copy / "README.md").write_text("my notes")
    assert publish(copy, tmp_path / "hub", eval_dir=tmp_path / "eval", model_id="me/tiny").folder.is_dir()

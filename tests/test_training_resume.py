"""Resume: a resumed run equals the uninterrupted one; checkpoints record their run; stale, foreign, incomplete or
finished checkpoints are refused or set aside; a new run never silently reuses an earlier run's folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from paranmt_hf.cli.main import main as cli
from paranmt_hf.training.checkpoints import LOSS_STATE_FILE, RUN_FILE
from paranmt_hf.training.trainer import run_folder
from tests.test_training import write_pairs

BASE = ["--kind", "word", "--embedding-dim", "8", "--batch-size", "4", "--megabatch-size", "3", "--anneal", "2",
        "--lr", "0.01", "--no-progress", "--save-steps", "3", "--keep-checkpoints", "--dev"]


def run(tmp_path, name, *extra, data=None):
    default = tmp_path / "pairs.tsv.gz"
    data = data or (str(default) if default.exists() else write_pairs(default))
    out = tmp_path / name
    assert cli(["train", "--train", data, "--output", str(out), *BASE, *extra]) == 0
    return out


def interrupted(tmp_path, name, *extra):
    """Run with the process interrupted as Ctrl-C does: one line, status 130."""
    data = str(tmp_path / "pairs.tsv.gz")
    assert cli(["train", "--train", data, "--output", str(tmp_path / name), *BASE, *extra]) == 130


def refused(tmp_path, name, *extra, data=None):
    with pytest.raises(SystemExit) as err:
        run(tmp_path, name, *extra, data=data)
    return str(err.value)


def summary(out):
    return json.loads((out / "training_summary.json").read_text())


def test_a_resumed_run_is_the_uninterrupted_run(tmp_path):
    full = run(tmp_path, "full", "--max-steps", "6")
    part = run(tmp_path, "part", "--max-steps", "3")
    assert summary(part)["steps"] == 3
    run(tmp_path, "part", "--max-steps", "6", "--resume")
    assert summary(part)["resumed_from_step"] == 3 and summary(part)["steps"] == 6  # 3 steps taken, not 6
    a, b = load_file(full / "model.safetensors"), load_file(part / "model.safetensors")
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6)
    # the mega-batch state: annealing clock and pool (M - 1 previous mini-batches) continue across the resume
    assert summary(part)["loss_stats"] == summary(full)["loss_stats"] == {
        "pool_pairs": 8, "pool_minibatches": 2, "minibatches_seen": 6}
    sa = torch.load(run_folder(full) / "checkpoints/checkpoint-6" / LOSS_STATE_FILE, weights_only=True)
    sb = torch.load(run_folder(part) / "checkpoints/checkpoint-6" / LOSS_STATE_FILE, weights_only=True)
    assert sa["steps"] == sb["steps"] == 6
    for ea, eb in zip(sa["pool"], sb["pool"], strict=True):
        for key in ("ids", "lengths"):
            for x, y in zip(ea[key], eb[key], strict=True):
                assert torch.equal(x, y)
        for x, y in zip(ea["units"], eb["units"], strict=True):
            torch.testing.assert_close(x, y, rtol=0, atol=1e-6)


def test_checkpoints_record_their_run_and_resume_refuses_another(tmp_path):
    out = run(tmp_path, "r", "--max-steps", "3")
    # the model folder holds the model alone; the run's state is next to it
    assert not {"checkpoints", "initial-model"} & {p.name for p in out.iterdir()}
    assert run_folder(out) == tmp_path / ".r.paranmt-train" and (run_folder(out) / "initial-model").is_dir()
    record = json.loads((run_folder(out) / "checkpoints/checkpoint-3" / RUN_FILE).read_text())
    assert record["seed"] == 0 and record["recipe"]["embedding_dim"] == 8
    assert record["sources"][0]["files"][0]["bytes"] > 0
    message = refused(tmp_path, "r", "--max-steps", "6", "--resume", "--embedding-dim", "16")
    assert "recipe.embedding_dim: checkpoint 8, now 16" in message and "\n" not in message  # one line
    other = write_pairs(tmp_path / "other.tsv.gz", n=30)
    message = refused(tmp_path, "r", "--max-steps", "6", "--resume", data=other)
    assert "sources[0].files[0]" in message
    assert "seed" in refused(tmp_path, "r", "--max-steps", "6", "--resume", "--seed", "4")
    # the checkpoint and model are untouched by the refused runs
    assert sorted(p.name for p in (run_folder(out) / "checkpoints").iterdir()) == ["checkpoint-3"]


def test_a_recipe_field_added_after_the_checkpoint_counts_as_its_default():
    """Checkpoints written before a Recipe field existed (e.g. ``lstm_peepholes``) still resume: the run used its
    default."""
    from paranmt_hf.training.checkpoints import record_differences
    from paranmt_hf.training.recipes import Recipe

    current = {"recipe": Recipe().to_dict(), "seed": 0}
    saved = json.loads(json.dumps(current))
    del saved["recipe"]["lstm_peepholes"]
    assert record_differences(saved, current) == []
    changed = {"recipe": Recipe(lstm_peepholes=True).to_dict(), "seed": 0}
    assert record_differences(saved, changed) == ["recipe.lstm_peepholes: checkpoint False, now True"]


def test_resume_refuses_a_finished_run_and_a_missing_checkpoint(tmp_path):
    out = run(tmp_path, "r", "--max-steps", "3")
    before = (out / "model.safetensors").read_bytes()
    assert "already took 3 of 3 steps" in refused(tmp_path, "r", "--max-steps", "3", "--resume")
    assert (out / "model.safetensors").read_bytes() == before
    shutil.rmtree(run_folder(out) / "checkpoints/checkpoint-3")
    message = refused(tmp_path, "r", "--max-steps", "6", "--resume")  # its model is kept: --overwrite replaces it
    assert "no complete checkpoint" in message and "--overwrite" in message and "without --resume" not in message
    assert (out / "model.safetensors").read_bytes() == before


@pytest.mark.parametrize("resume", [[], ["--resume"]])
def test_a_run_killed_before_its_first_checkpoint_is_simply_rerun(tmp_path, resume):
    """No circle between "run without --resume" and "pass --resume or --overwrite": nothing to resume starts."""
    out = run(tmp_path, "r", "--max-steps", "3")
    # as a run killed (or out of space) while writing its first checkpoint leaves it: no model, no complete one
    for name in ("model.safetensors", "config.json", "training_summary.json"):
        (out / name).unlink()
    (run_folder(out) / "checkpoints/checkpoint-3" / RUN_FILE).unlink()
    run(tmp_path, "r", "--max-steps", "3", *resume)
    assert summary(out)["steps"] == 3 and summary(out)["resumed_from_step"] == 0
    assert sorted(p.name for p in (run_folder(out) / "checkpoints").iterdir()) == ["checkpoint-3"]
    assert run(tmp_path, "fresh", "--max-steps", "3", "--resume").is_dir()  # --resume of a run never started


def test_resume_sets_an_incomplete_checkpoint_aside(tmp_path):
    out = run(tmp_path, "r", "--max-steps", "3")
    # the process died while writing checkpoint-6: the Trainer's files are there, the run record is not
    half = run_folder(out) / "checkpoints/checkpoint-6"
    shutil.copytree(run_folder(out) / "checkpoints/checkpoint-3", half)
    (half / RUN_FILE).unlink()
    (half / "model.safetensors").write_bytes(b"truncated")
    run(tmp_path, "r", "--max-steps", "6", "--resume")
    assert summary(out)["resumed_from_step"] == 3
    assert (run_folder(out) / "checkpoints/incomplete-checkpoint-6").is_dir()  # kept for inspection, not resumed
    assert (run_folder(out) / "checkpoints/checkpoint-6" / RUN_FILE).is_file()


def test_a_new_run_refuses_an_earlier_runs_folder_unless_overwrite(tmp_path):
    out = run(tmp_path, "r", "--max-steps", "6")
    before = (out / "model.safetensors").read_bytes()
    message = refused(tmp_path, "r", "--max-steps", "2", "--seed", "3")
    assert "holds an earlier run" in message and "--overwrite" in message
    assert (out / "model.safetensors").read_bytes() == before
    assert "pick one" in refused(tmp_path, "r", "--max-steps", "2", "--resume", "--overwrite")
    run(tmp_path, "r", "--max-steps", "2", "--seed", "3", "--overwrite")
    assert summary(out)["seed"] == 3 and summary(out)["steps"] == 2 and summary(out)["resumed_from_step"] == 0
    # the old run's are gone
    assert sorted(p.name for p in (run_folder(out) / "checkpoints").iterdir()) == ["checkpoint-2"]
    assert (out / "model.safetensors").read_bytes() != before


def test_train_never_writes_over_its_training_file(tmp_path):
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    link = tmp_path / "link.tsv.gz"
    link.symlink_to(data)
    before = (tmp_path / "pairs.tsv.gz").read_bytes()
    for output in (data, str(link)):
        with pytest.raises(SystemExit, match="is a file, not a folder"):
            cli(["train", "--train", data, "--output", output, *BASE, "--max-steps", "1", "--overwrite"])
    assert (tmp_path / "pairs.tsv.gz").read_bytes() == before


def test_the_resume_check_sees_a_change_in_the_middle_of_a_large_file(tmp_path):
    """The fingerprint covers the whole file, not only its first and last MiB."""
    from paranmt_hf.training.checkpoints import file_fingerprint, record_differences

    path = tmp_path / "big.tsv"
    lines = [f"sentence number {i}\tparaphrase number {i}\n" for i in range(80_000)]  # ~3 MiB
    path.write_text("".join(lines))
    assert path.stat().st_size > 3 * (1 << 20) - 200_000
    before = {"sources": [{"files": [file_fingerprint(path)]}]}
    stat = path.stat()
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle] = ord("X") if data[middle] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))
    import os

    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # size and mtime as before
    after = {"sources": [{"files": [file_fingerprint(path)]}]}
    assert record_differences(before, after)
    assert record_differences(after, {"sources": [{"files": [file_fingerprint(path)]}]}) == []


def _killed_before_the_final_save(monkeypatch, out):
    """Make the run die when it saves its final model into ``out`` (after its last checkpoint)."""
    from paranmt_hf.model.encoder import ParaNMTEncoder

    original = ParaNMTEncoder.save_pretrained

    def save(self, directory, *args, **kwargs):
        if Path(directory).resolve() == out.resolve():
            raise KeyboardInterrupt("killed before the final save")
        return original(self, directory, *args, **kwargs)

    monkeypatch.setattr(ParaNMTEncoder, "save_pretrained", save)


def test_a_run_killed_after_its_last_checkpoint_is_finished_by_resume(tmp_path, monkeypatch):
    full = run(tmp_path, "full", "--max-steps", "6")
    out = tmp_path / "killed"
    with monkeypatch.context() as patch:
        _killed_before_the_final_save(patch, out)
        interrupted(tmp_path, "killed", "--max-steps", "6")
    assert (run_folder(out) / "checkpoints/checkpoint-6" / RUN_FILE).is_file()
    assert not (out / "model.safetensors").exists()
    run(tmp_path, "killed", "--max-steps", "6", "--resume")  # was: "already took 6 of 6 steps"
    assert summary(out)["steps"] == 6 and summary(out)["resumed_from_step"] == 6
    a, b = load_file(full / "model.safetensors"), load_file(out / "model.safetensors")
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6)
    assert "already took 6 of 6 steps" in refused(tmp_path, "killed", "--max-steps", "6", "--resume")


def test_an_overwrite_run_never_shows_the_old_model_next_to_its_checkpoints(tmp_path, monkeypatch):
    out = run(tmp_path, "r", "--max-steps", "3")
    with monkeypatch.context() as patch:
        _killed_before_the_final_save(patch, out)
        interrupted(tmp_path, "r", "--max-steps", "2", "--seed", "5", "--overwrite")
    assert sorted(p.name for p in (run_folder(out) / "checkpoints").iterdir()) == ["checkpoint-2"]
    assert not (out / "model.safetensors").exists() and not (out / "config.json").exists()
    assert not (out / "training_summary.json").exists()


def test_a_second_run_into_the_same_folder_is_refused_while_the_first_runs(tmp_path, hold_lock):
    out = tmp_path / "r"
    holder = hold_lock(out)  # another `train --output r` in progress
    message = refused(tmp_path, "r", "--max-steps", "3")
    assert "being written by another process" in message and f"pid {holder.pid}" in message
    assert not (run_folder(out) / "checkpoints").exists()


def test_temporary_files_of_a_killed_run_are_removed_by_the_next_run(tmp_path):
    out = run(tmp_path, "r", "--max-steps", "3")
    (out / ".paranmt-tmp-0123456789ab-training_summary.json").write_text("{")
    (run_folder(out) / "checkpoints/checkpoint-3/.paranmt-tmp-0123456789ab-paranmt_run.json").write_text("{")
    (run_folder(out) / "checkpoints/checkpoint-3/.loss_state.pt.tmp").write_bytes(b"half")
    run(tmp_path, "r", "--max-steps", "6", "--resume")
    assert not list(out.rglob(".paranmt-tmp-*")) and not list(out.rglob("*.tmp"))


@pytest.mark.parametrize("name", ["trainer_state.json", "optimizer.pt", "model.safetensors", LOSS_STATE_FILE])
def test_a_damaged_checkpoint_is_named(tmp_path, name):
    out = run(tmp_path, "r", "--max-steps", "3")
    path = run_folder(out) / "checkpoints/checkpoint-3" / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    message = refused(tmp_path, "r", "--max-steps", "6", "--resume")
    assert f"{path} is damaged" in message and "\n" not in message


def test_a_saved_run_leaves_no_run_folder_unless_asked(tmp_path, capsys):
    """The checkpoints and initial model (45-52 MB next to the output for a real run) are removed once the model is
    saved; the command says where they are while it runs; ``--keep-checkpoints`` keeps them for a later resume."""
    data = write_pairs(tmp_path / "pairs.tsv.gz")
    flags = [f for f in BASE if f != "--keep-checkpoints"]
    out = tmp_path / "r"
    capsys.readouterr()
    assert cli(["train", "--train", data, "--output", str(out), *flags, "--max-steps", "3"]) == 0
    assert f"checkpoints and the initial model go to {run_folder(out)}" in capsys.readouterr().err
    assert not run_folder(out).exists() and sorted(p.name for p in tmp_path.iterdir()) == ["pairs.tsv.gz", "r"]
    message = refused(tmp_path, "r", "--max-steps", "6", "--resume")
    assert "--keep-checkpoints" in message and "--overwrite" in message
    kept = run(tmp_path, "kept", "--max-steps", "3")  # BASE keeps them
    assert (run_folder(kept) / "checkpoints" / "checkpoint-3").is_dir()


def test_the_loss_state_keeps_the_pool_with_its_pair_kinds_and_unit_embeddings():
    """A restored pool mines as the saved one: the same rows, unit embeddings, hashes (recomputed from the rows, so
    a state written before a change of the fingerprint function still excludes the same texts) and pair kinds."""
    from paranmt_hf.losses import MegaBatchMarginLoss
    from tests.test_loss_one_pass import BATCHES, model_of

    model = model_of("word")
    loss = MegaBatchMarginLoss(model, megabatch_size=3)
    for i, (anchors, positives) in enumerate(BATCHES[:2]):
        loss([model.preprocess(anchors), model.preprocess(positives)], torch.tensor([i, 0, 1]))
    restored = MegaBatchMarginLoss(model, megabatch_size=3)
    state = loss.training_state()
    for item in state["pool"]:  # a state written with another fingerprint function: the rows decide
        item["hashes"] = [torch.arange(len(n)) for n in item["lengths"]]
    restored.load_training_state(state)
    assert restored.steps == 2 and len(restored.pool) == len(loss.pool) == 2
    for a, b in zip(loss.pool, restored.pool, strict=True):
        assert torch.equal(a.translation, b.translation)
        for x, y in zip(a.units + a.hashes, b.units + b.hashes, strict=True):
            assert torch.equal(x, y)
    assert torch.allclose(a.units[0].norm(dim=-1), torch.ones(3))

from __future__ import annotations

import json
import os
import sys
import threading

import pytest

from paranmt_hf.utils.atomic import (
    OutputExistsError,
    OutputIsInputError,
    OutputKindError,
    atomic_output,
    atomic_write_json,
    check_output,
)


def test_output_equal_to_input_is_refused_even_with_overwrite(tmp_path):
    src = tmp_path / "x.tsv"
    src.write_text("a\tb\n")
    link = tmp_path / "link.tsv"
    link.symlink_to(src)
    for out in (src, link, tmp_path / "." / "x.tsv"):
        with pytest.raises(OutputIsInputError):
            check_output(out, [src], overwrite=True)
    assert src.read_text() == "a\tb\n"


def test_directory_containing_an_input_is_refused(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "in.txt").write_text("x")
    with pytest.raises(OutputIsInputError):
        check_output(tmp_path / "d", [tmp_path / "d" / "in.txt"], overwrite=True)


def test_existing_output_needs_overwrite(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old")
    with pytest.raises(OutputExistsError, match="--overwrite"):
        with atomic_output(out) as tmp:
            tmp.write_text("new")
    assert out.read_text() == "old"
    with atomic_output(out, overwrite=True) as tmp:
        assert tmp.name.endswith("out.txt") and tmp.parent == tmp_path
        tmp.write_text("new")
    assert out.read_text() == "new"


def test_overwrite_never_puts_a_file_where_a_folder_is_nor_the_reverse(tmp_path):
    folder, file = tmp_path / "folder", tmp_path / "file.txt"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "keep.txt").write_text("important")
    file.write_text("old")
    with pytest.raises(OutputKindError, match="is a folder and this writes a file"):
        with atomic_output(folder, overwrite=True) as tmp:
            tmp.write_text("one file")
    with pytest.raises(OutputKindError, match="is a file and this writes a folder"):
        with atomic_output(file, overwrite=True, directory=True) as tmp:
            (tmp / "weights").write_text("x")
    assert (folder / "sub" / "keep.txt").read_text() == "important" and file.read_text() == "old"
    with pytest.raises(OutputKindError):  # the early check of a command, before its work
        check_output(folder, overwrite=True, directory=False)
    assert check_output(folder, overwrite=True, directory=True) == folder  # same kind: replaced as before
    assert sorted(os.listdir(tmp_path)) == ["file.txt", "folder"]  # no temporary left


def test_failure_leaves_old_output_and_no_temp(tmp_path):
    out = tmp_path / "out.tsv.gz"
    out.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_output(out, overwrite=True) as tmp:
            assert tmp.name.endswith(".tsv.gz")
            tmp.write_text("partial")
            raise RuntimeError("killed")
    assert out.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.tsv.gz"]


def test_directory_output_is_swapped_whole(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with atomic_output(out, overwrite=True, directory=True) as tmp:
        assert tmp.is_dir()
        (tmp / "new.txt").write_text("new")
    assert sorted(os.listdir(out)) == ["new.txt"]
    assert sorted(os.listdir(tmp_path)) == ["model"]


def test_concurrent_json_writers_never_tear(tmp_path):
    path = tmp_path / "r.json"
    errors = []

    def writer(k: int) -> None:
        for _ in range(50):
            atomic_write_json(path, {"writer": k, "payload": list(range(2000))})

    def reader() -> None:
        for _ in range(200):
            if path.exists():
                try:
                    json.loads(path.read_text())
                except ValueError as err:  # a torn file
                    errors.append(err)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(2)] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert json.loads(path.read_text())["writer"] in (0, 1)


def _encoder(words):
    from paranmt_hf import build_encoder

    return build_encoder("word", [" ".join(words)] * 3, embedding_dim=4, seed=len(words))


def test_save_pretrained_over_a_model_is_all_or_nothing(tmp_path):
    import numpy as np

    from paranmt_hf import ParaNMTEncoder

    old, new = _encoder(["a", "man", "plays"]), _encoder(["two", "dogs", "run", "fast", "today"])
    target = tmp_path / "model"
    old.save_pretrained(target)
    (target / "checkpoints").mkdir()
    (target / "checkpoints" / "state.bin").write_bytes(b"kept")
    (target / "README.md").write_text("my notes")
    expected = old.encode(["a man plays"])

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed after the weights, before the tokenizer")

    new.tokenizer.save_pretrained = killed
    with pytest.raises(KeyboardInterrupt):
        new.save_pretrained(target)
    reloaded = ParaNMTEncoder.from_pretrained(target)  # the old weights with the old tokenizer, not a mixture
    np.testing.assert_array_equal(reloaded.encode(["a man plays"]), expected)
    assert sorted(os.listdir(tmp_path)) == ["model"]  # no temporary folder left behind
    del new.tokenizer.save_pretrained
    new.save_pretrained(target)
    assert ParaNMTEncoder.from_pretrained(target).component_vocab_sizes(new.tokenizer) == [7]
    # entries that are not model files are kept (hard links: no copy), model files are all new
    assert (target / "checkpoints" / "state.bin").read_bytes() == b"kept"
    assert (target / "README.md").read_text() == "my notes"
    assert sorted(os.listdir(tmp_path)) == ["model"]


# ---- permissions --------------------------------------------------------------
def _mode(path) -> int:
    return os.stat(path).st_mode & 0o7777


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_outputs_get_the_usual_permissions(tmp_path, umask_022):
    with atomic_output(tmp_path / "folder", directory=True) as tmp:
        (tmp / "inside.txt").write_text("x")
    atomic_write_json(tmp_path / "r.json", {"a": 1})
    assert _mode(tmp_path / "folder") == 0o755  # was 0700 (tempfile.mkdtemp) whatever the umask
    assert _mode(tmp_path / "folder" / "inside.txt") == 0o644
    assert _mode(tmp_path / "r.json") == 0o644
    _encoder(["a", "man"]).save_pretrained(tmp_path / "model")
    assert _mode(tmp_path / "model") == 0o755
    assert all(_mode(p) in (0o644, 0o755) for p in (tmp_path / "model").rglob("*"))


def test_a_replaced_output_keeps_its_permissions(tmp_path, umask_022):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o2775)  # a group-shared folder (setgid: new files get its group)
    expected = _mode(shared)  # 0o2775 where the setgid bit may be set
    with atomic_output(shared, overwrite=True, directory=True) as tmp:
        (tmp / "new.txt").write_text("new")
    assert _mode(shared) == expected
    private = tmp_path / "private.txt"
    private.write_text("old")
    private.chmod(0o600)
    atomic_write_json(private, {"new": True})
    assert _mode(private) == 0o600


# ---- one writer at a time ------------------------------------------------------------------------
def test_a_second_writer_of_the_same_output_is_refused(tmp_path, hold_lock):
    from paranmt_hf.utils.atomic import OutputBusyError

    out = tmp_path / "out.txt"
    holder = hold_lock(out)
    with pytest.raises(OutputBusyError, match=rf"pid {holder.pid} .*being written|being written by another"):
        with atomic_output(out) as tmp:
            tmp.write_text("second")
    assert not out.exists()
    holder.kill()
    holder.wait()  # the kernel releases the lock of a killed process: no stale lock
    with atomic_output(out) as tmp:
        tmp.write_text("third")
    assert out.read_text() == "third"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]  # the lock file is gone


def test_an_output_that_appears_meanwhile_is_not_replaced(tmp_path):
    out = tmp_path / "out.txt"
    with pytest.raises(OutputExistsError, match="appeared while"):
        with atomic_output(out) as tmp:
            tmp.write_text("mine")
            out.write_text("another writer's")  # a writer that took no lock
    assert out.read_text() == "another writer's"
    folder = tmp_path / "folder"
    with pytest.raises(OutputExistsError, match="appeared while"):
        with atomic_output(folder, directory=True) as tmp:
            (tmp / "mine").write_text("x")
            folder.mkdir()
            (folder / "theirs").write_text("y")
    assert sorted(os.listdir(folder)) == ["theirs"]


def test_nested_writes_of_one_process_share_the_lock(tmp_path):
    from paranmt_hf.utils.atomic import output_lock

    with output_lock(tmp_path / "run"):
        with atomic_output(tmp_path / "run", directory=True) as tmp:
            (tmp / "x").write_text("x")
    assert (tmp_path / "run" / "x").is_file()


# ---- temporary files of killed writers ----------------------------------------------------------
def test_temporary_files_of_a_killed_writer_are_removed_by_the_next_one(tmp_path):
    out = tmp_path / "out.tsv.gz"
    (tmp_path / ".paranmt-tmp-0123456789ab-out.tsv.gz").write_text("partial")
    (tmp_path / ".paranmt-tmp-out.tsv.gz-k2j4h5g6").mkdir()  # a temporary folder of an earlier release
    (tmp_path / ".paranmt-tmp-0123456789ab-other.tsv").write_text("another output's: kept")
    with atomic_output(out) as tmp:
        tmp.write_text("new")
    assert sorted(os.listdir(tmp_path)) == [".paranmt-tmp-0123456789ab-other.tsv", "out.tsv.gz"]


def test_a_folder_set_aside_by_a_killed_swap_is_put_back(tmp_path):
    # killed between the two renames of replace_path: the old folder is aside, the output missing
    aside = tmp_path / ".paranmt-tmp-old-0123456789ab-model"
    aside.mkdir()
    (aside / "weights").write_text("old")
    with pytest.raises(OutputExistsError):
        with atomic_output(tmp_path / "model", directory=True) as tmp:
            (tmp / "weights").write_text("new")
    assert (tmp_path / "model" / "weights").read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["model"]


def test_a_folder_is_replaced_in_one_swap_where_the_system_can(tmp_path, monkeypatch):
    """On Linux the new folder and the old trade places in one atomic step (``renameat2``): no moment without the
    folder, so no rename of the old folder aside (refused here) and no set-aside copy; the old one is deleted."""
    from paranmt_hf.utils import atomic

    if not sys.platform.startswith("linux"):
        pytest.skip("renameat2 is Linux's")
    out = tmp_path / "model"
    out.mkdir()
    (out / "weights").write_text("old")
    real = os.replace

    def no_set_aside(src, dst):
        if os.fspath(src) == os.fspath(out):
            raise AssertionError("the old folder was renamed aside")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", no_set_aside)
    with atomic_output(out, overwrite=True, directory=True) as tmp:
        (tmp / "weights").write_text("new")
    assert (out / "weights").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["model"]
    with pytest.raises(FileNotFoundError):  # a real failure is an error, not a silent "cannot swap"
        atomic._exchange(tmp_path / "missing", out)


_KILLED_AFTER_SWAP = """
import os, signal, sys
from pathlib import Path
from paranmt_hf.utils import atomic
from paranmt_hf.utils.atomic import atomic_output

def killed(path):  # killed after the swap, before the old folder (now under the temporary name) is deleted
    os.kill(os.getpid(), signal.SIGKILL)

atomic._remove = killed
with atomic_output(Path(sys.argv[1]), overwrite=True, directory=True) as tmp:
    (tmp / "weights").write_text("new")
"""


def test_a_run_killed_after_the_swap_leaves_the_new_folder_and_a_temporary_the_next_writer_removes(tmp_path):
    import signal
    import subprocess

    if not sys.platform.startswith("linux"):
        pytest.skip("renameat2 is Linux's")
    out = tmp_path / "model"
    out.mkdir()
    (out / "weights").write_text("old")
    run = subprocess.run([sys.executable, "-c", _KILLED_AFTER_SWAP, str(out)], capture_output=True, text=True)
    assert run.returncode == -signal.SIGKILL, run.stderr
    assert (out / "weights").read_text() == "new"
    (old,) = (p for p in tmp_path.iterdir() if p.name.startswith(".paranmt-tmp-"))
    assert (old / "weights").read_text() == "old"
    with atomic_output(tmp_path / "model", overwrite=True, directory=True) as tmp:
        (tmp / "weights").write_text("newer")
    assert (out / "weights").read_text() == "newer"
    assert sorted(os.listdir(tmp_path)) == ["model"]


def test_a_failed_second_rename_of_the_swap_puts_the_old_folder_back(tmp_path, monkeypatch):
    from paranmt_hf.utils import atomic

    monkeypatch.setattr(atomic, "_exchange", lambda first, second: False)  # a system without renameat2's swap
    out = tmp_path / "model"
    out.mkdir()
    (out / "weights").write_text("old")
    real = os.replace

    def failing(src, dst):
        if os.fspath(dst) == os.fspath(out) and ".paranmt-tmp-old-" not in os.fspath(src):  # the new folder moving in
            raise OSError("disk gone")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="disk gone"):
        with atomic_output(out, overwrite=True, directory=True) as tmp:
            (tmp / "weights").write_text("new")
    monkeypatch.undo()
    assert (out / "weights").read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["model"]


_KILLED_SWAP = """
import os, signal, sys
from pathlib import Path
from paranmt_hf.utils import atomic
from paranmt_hf.utils.atomic import atomic_output

atomic._exchange = lambda first, second: False  # a system without renameat2's swap: two renames
out, real = Path(sys.argv[1]), os.replace

def replace(src, dst):
    if os.fspath(dst) == os.fspath(out):  # killed as the new folder moves in: after the old one is set aside
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst)

os.replace = replace
with atomic_output(out, overwrite=True, directory=True) as tmp:
    (tmp / "weights").write_text("new")
"""


def test_a_run_killed_between_the_two_renames_loses_nothing(tmp_path):
    import shutil
    import signal
    import subprocess
    import sys

    from paranmt_hf.utils.atomic import recover_set_aside
    from paranmt_hf.utils.integrity import check_model_path

    out = tmp_path / "model"

    def killed_swap() -> None:
        out.mkdir()
        (out / "weights").write_text("old")
        run = subprocess.run([sys.executable, "-c", _KILLED_SWAP, str(out)], capture_output=True, text=True)
        assert run.returncode == -signal.SIGKILL, run.stderr
        assert not out.exists()  # the swap was under way: the old folder is set aside, not deleted
        (aside,) = (p for p in tmp_path.iterdir() if p.name.startswith(".paranmt-tmp-old-"))
        assert (aside / "weights").read_text() == "old"

    killed_swap()
    check_model_path(out)  # a reader puts it back (a model load starts with this check)
    assert (out / "weights").read_text() == "old"
    assert not any(name.startswith(".paranmt-tmp-old-") for name in os.listdir(tmp_path))
    assert not recover_set_aside(out)  # nothing left to put back
    shutil.rmtree(out)
    killed_swap()
    with atomic_output(out, overwrite=True, directory=True) as tmp:  # so does the next writer
        (tmp / "weights").write_text("newer")
    assert (out / "weights").read_text() == "newer" and sorted(os.listdir(tmp_path)) == ["model"]


def test_a_reader_leaves_a_set_aside_folder_to_the_writer_that_holds_the_lock(tmp_path, hold_lock):
    from paranmt_hf.utils.atomic import recover_set_aside

    aside = tmp_path / ".paranmt-tmp-old-0123456789ab-model"
    aside.mkdir()
    writer = hold_lock(tmp_path / "model")  # a live writer between its two renames
    assert not recover_set_aside(tmp_path / "model")
    assert aside.is_dir() and not (tmp_path / "model").exists()
    writer.kill()
    writer.wait()
    assert recover_set_aside(tmp_path / "model") and (tmp_path / "model").is_dir()


def test_a_folder_input_protects_every_file_a_loader_reads(tmp_path):
    """A model folder a command loads is an input: no output may be one of its files, the folder, or hold it; a new
    file inside it, or a result written next to the model earlier, is fine."""
    model = tmp_path / "model"
    (model / "static").mkdir(parents=True)
    (model / "export").mkdir()
    (model / "model.safetensors").write_bytes(b"weights")
    (model / "source.spm").write_bytes(b"pieces")
    (model / "generation_config.json").write_text("{}")
    (model / "static" / "config.json").write_text("{}")
    (model / "embeddings.npy").write_bytes(b"rows")
    (model / "export" / "model.onnx").write_bytes(b"graph")
    (tmp_path / "link.safetensors").symlink_to(model / "model.safetensors")
    for out in (model / "model.safetensors", model / "source.spm", model / "generation_config.json",
                model / "static" / "config.json", model / "static" / ".." / "static", model, tmp_path,
                tmp_path / "link.safetensors"):
        with pytest.raises(OutputIsInputError, match="is the input"):
            check_output(out, [model], overwrite=True)
    assert check_output(model / "scores.tsv", [model]) == model / "scores.tsv"
    for result in (model / "embeddings.npy", model / "export"):
        assert check_output(result, [model], overwrite=True) == result


@pytest.mark.parametrize("name", ["..", ".", "", "../x", "a/b", "/abs", "a\\b", "x\x00y", " .. "])
def test_names_that_would_leave_their_folder_are_refused(name):
    from paranmt_hf.utils.atomic import UnsafeNameError, path_name

    with pytest.raises(UnsafeNameError, match="cannot be a folder name"):
        path_name(name, "revision")
    assert path_name("v1.0_final-2", "revision") == "v1.0_final-2"


def test_a_record_replaced_without_a_lock_is_whole_and_has_the_usual_permissions(tmp_path, umask_022):
    from paranmt_hf.utils.atomic import replace_with_text

    record = tmp_path / "done.json"
    replace_with_text(record, "old")
    replace_with_text(record, '{"done": true}')
    assert record.read_text() == '{"done": true}'
    assert _mode(record) == 0o644  # not the 0600 of a private temporary file
    assert sorted(os.listdir(tmp_path)) == ["done.json"]

from __future__ import annotations

import json
import os
import threading

import pytest

from paranmt_hf.utils.atomic import (
    OutputExistsError,
    OutputIsInputError,
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
